/**
 * Figure 5, context cost: o200k tokens of everything an MCP integration adds to every model request
 * (tool definitions as the provider receives them, and system-prompt text), for the same two servers.
 * Captured from real Pi runs: the bench faux model records each request's system messages
 * (BENCH_CONTEXT_LOG); the cost is the difference to a Pi run without any MCP extension (`-ne`).
 * Cross-check for pi-mcp: the definition it registers, read with a fake `pi` object.
 */
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { installMcp } from "../../src/index.ts";
import type { BenchConfig, FigureResult } from "../lib/config.ts";
import {
	ADAPTER_EXTENSION,
	EVERYTHING_SERVER,
	makeSandbox,
	OUR_EXTENSION,
	type RecordedSystem,
	type RecordedTool,
	readContextLog,
	runPi,
	type Sandbox,
	SERVER,
	writeMcpJson,
} from "../lib/pi.ts";
import { type Line, verdict } from "../lib/stats.ts";

const TARGET = 250;

export const tokens = (text: string): number => encode(text).length;

/** A tool as a provider sends it: name, description and the JSON schema of its parameters (compact JSON). */
export const toolText = (tool: RecordedTool): string =>
	JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters });

type Cost = Readonly<{
	total: number;
	toolTokens: number;
	promptTokens: number;
	tools: readonly { name: string; tokens: number }[];
	sections: readonly { name: string; tokens: number }[];
}>;

/** The first request's leading system message (Pi sends the prompt and the tool set there). */
function firstRequest(log: RecordedSystem[][]): RecordedSystem {
	const system = log[0]?.[0];
	if (!system) throw new Error("no request was recorded");
	return system;
}

/** What `variant` adds to `baseline`: new tools, and prompt sections that are new or longer. */
function costOf(variant: RecordedSystem, baseline: RecordedSystem): Cost {
	const baseTools = new Set(baseline.tools.map((tool) => tool.name));
	const tools = variant.tools
		.filter((tool) => !baseTools.has(tool.name))
		.map((tool) => ({ name: tool.name, tokens: tokens(toolText(tool)) }));
	const sectionText = (system: RecordedSystem, name: string) => system.sections[name] ?? "";
	const names = [...new Set([...Object.keys(variant.sections), ...Object.keys(baseline.sections)])];
	const sections = names
		.filter((name) => name !== "cwd" && sectionText(variant, name) !== sectionText(baseline, name))
		.map((name) => ({ name, tokens: tokens(sectionText(variant, name)) - tokens(sectionText(baseline, name)) }));
	const content = variant.content === baseline.content ? 0 : tokens(variant.content) - tokens(baseline.content);
	const promptTokens = sections.reduce((sum, section) => sum + section.tokens, 0) + content;
	const toolTokens = tools.reduce((sum, tool) => sum + tool.tokens, 0);
	return { total: toolTokens + promptTokens, toolTokens, promptTokens, tools, sections };
}

/** pi-mcp's own registration, read without Pi: the tool definition, promptSnippet and guidelines. */
function registered(): { text: string; tokens: number; snippet: string; guidelines: readonly string[] } {
	const tools: { name: string; description: string; parameters: unknown; promptSnippet?: string; promptGuidelines?: string[] }[] =
		[];
	const fake = new Proxy(
		{
			registerTool: (tool: (typeof tools)[number]) => tools.push(tool),
			registerCommand: () => undefined,
			on: () => undefined,
		},
		{ get: (target, key) => (target as Record<string | symbol, unknown>)[key] ?? (() => undefined) },
	) as unknown as ExtensionAPI;
	installMcp(fake);
	const tool = tools[0];
	if (!tool || tools.length !== 1) throw new Error(`expected one tool, got ${tools.length}`);
	const snippet = tool.promptSnippet ?? "";
	const guidelines = tool.promptGuidelines ?? [];
	const text = [toolText(tool), snippet ? `- ${tool.name}: ${snippet}` : "", ...guidelines].join("\n");
	return {
		text,
		tokens:
			tokens(toolText(tool)) +
			(snippet ? tokens(`- ${tool.name}: ${snippet}\n`) : 0) +
			guidelines.reduce((sum, line) => sum + tokens(`- ${line}\n`), 0),
		snippet,
		guidelines,
	};
}

export async function context(config: BenchConfig): Promise<FigureResult> {
	const sandboxes: Sandbox[] = [];
	const capture = async (key: string, servers: Record<string, unknown>, extensions: string[], noExtensions: boolean) => {
		const sandbox = await makeSandbox(`pi-bench-context-${key}-`);
		sandboxes.push(sandbox);
		await writeMcpJson(sandbox, servers);
		const log = join(sandbox.root, "context.jsonl");
		// The adapter builds its metadata cache on its first run; the recorded run is the second (steady state).
		if (extensions.includes(ADAPTER_EXTENSION))
			await runPi({ sandbox, mode: "json", extensions, noExtensions, script: [{ text: "ok" }] });
		await runPi({ sandbox, mode: "json", extensions, noExtensions, script: [{ text: "ok" }], env: { BENCH_CONTEXT_LOG: log } });
		return firstRequest(await readContextLog(log));
	};
	try {
		const everything = config.smoke ? {} : { everything: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] } };
		const servers = { fx: { command: process.execPath, args: [SERVER] }, ...everything };
		const direct = Object.fromEntries(Object.entries(servers).map(([name, entry]) => [name, { ...entry, exposure: "direct" }]));
		const baseline = await capture("baseline", servers, [], true);
		const ours = costOf(await capture("ours", servers, [OUR_EXTENSION], true), baseline);
		const builtinDirect = costOf(await capture("builtin-direct", direct, [], false), baseline);
		const builtinCodemode = costOf(await capture("builtin-codemode", servers, [], false), baseline);
		const adapter = costOf(await capture("adapter", servers, [ADAPTER_EXTENSION], true), baseline);
		const own = registered();
		const smallest = ours.total < Math.min(builtinDirect.total, builtinCodemode.total, adapter.total);
		const serverNames = Object.keys(servers).join(" + ");
		const lines: Line[] = [
			{
				name: "5 context cost",
				value: `${ours.total} tokens (tool ${ours.toolTokens} + prompt ${ours.promptTokens}) for ${serverNames}`,
				comparison: `baselines: Pi built-in direct ${builtinDirect.total}, built-in codemode ${builtinCodemode.total}, pi-mcp-adapter ${adapter.total}; ratio to the smallest peer ${(ours.total / Math.min(builtinDirect.total, builtinCodemode.total, adapter.total)).toFixed(3)}×`,
				target: `≤ ${TARGET} tokens and the smallest`,
				verdict: verdict(ours.total <= TARGET && smallest),
			},
		];
		const detail = (label: string, cost: Cost) =>
			`| ${label} | ${cost.total} | ${cost.toolTokens} (${cost.tools.length} tool${cost.tools.length === 1 ? "" : "s"}: ${cost.tools
				.slice(0, 6)
				.map((tool) => `${tool.name} ${tool.tokens}`)
				.join(
					", ",
				)}${cost.tools.length > 6 ? ", …" : ""}) | ${cost.promptTokens} (${cost.sections.map((section) => `${section.name} ${section.tokens >= 0 ? "+" : ""}${section.tokens}`).join(", ") || "—"}) |`;
		const notes = [
			`Servers: ${serverNames} (\`tests/fixtures/server.mjs\`${config.smoke ? "" : ", and `@modelcontextprotocol/server-everything` over stdio"}), in the agent dir's \`mcp.json\`.`,
			"Each variant is one Pi `--mode json` run (faux model answering `ok`) whose first model request is recorded by",
			"`bench/fixtures/faux-record.ts`: the leading system message's prompt sections and tool definitions as pi-ai hands them to",
			"a provider. Cost = o200k tokens (`gpt-tokenizer`) of every tool not present in the `-ne` baseline (compact JSON of",
			"`{ name, description, parameters }`) + the token growth of every prompt section (the `cwd` section, a temp path, is",
			"left out). Pi's built-in MCP: defaults with the servers' `exposure` set to `direct` (every MCP tool sent, connected",
			"before the first prompt), and with the default `codemode`. pi-mcp-adapter: defaults (proxy), metadata cache warm.",
			"",
			"| variant | total tokens | tool definitions | prompt sections |",
			"|---|---|---|---|",
			detail("**pi-mcp**", ours),
			detail("Pi built-in MCP, `direct`", builtinDirect),
			detail("Pi built-in MCP, default `codemode`", builtinCodemode),
			detail("pi-mcp-adapter 2.36.0", adapter),
			"",
			`Cross-check: pi-mcp's registration read with a fake \`pi\` object (\`installMcp(fake)\`) — tool definition, promptSnippet`,
			`(\`${own.snippet}\`) as Pi lists it (\`- mcp: <snippet>\`), ${own.guidelines.length} guideline${own.guidelines.length === 1 ? "" : "s"} — is ${own.tokens} tokens.`,
		].join("\n");
		return { lines, notes };
	} finally {
		for (const sandbox of sandboxes) await sandbox.cleanup();
	}
}
