/**
 * Pi registration: the `/mcp` command, the `mcp` tool and the session lifecycle. The factory only
 * registers (no I/O: no files, processes, sockets or timers); `session_start` reads configuration;
 * servers connect lazily on first use; `session_shutdown` tears everything down.
 */
import {
	type AgentToolResult,
	CONFIG_DIR_NAME,
	DEFAULT_MAX_BYTES,
	DEFAULT_MAX_LINES,
	type ExtensionAPI,
	type ExtensionContext,
	getAgentDir,
	truncateHead,
} from "@earendil-works/pi-coding-agent";
import type { CallToolResult, Tool } from "@modelcontextprotocol/client";
import { Type } from "typebox";
import { type ConfigSnapshot, type ExtensionServer, loadConfig } from "./config.ts";
import { sanitize, stripTerminal } from "./output.ts";
import { type McpArgs, type McpDetails, renderCall, renderResult } from "./render.ts";
import { createRuntime, type Progress, type Runtime, type ServerStatus } from "./runtime.ts";

export const VERSION = "0.1.0";

export type InstallMcpOptions = Readonly<{
	/** Defaults to Pi's agent directory (`PI_CODING_AGENT_DIR`, else `~/.pi/agent`). */
	agentDir?: string;
	/** Defaults to `process.env`; config interpolation and bearer tokens read only this. */
	env?: Readonly<Record<string, string | undefined>>;
}>;

const ACTIONS = ["status", "tools", "describe", "call"] as const;
type Action = (typeof ACTIONS)[number];

const parameters = Type.Object({
	action: Type.Unsafe<Action>({ type: "string", enum: [...ACTIONS] }),
	server: Type.Optional(Type.String()),
	tool: Type.Optional(Type.String()),
	args: Type.Optional(Type.Unsafe<unknown>({ description: "tool arguments (object)" })),
	query: Type.Optional(Type.String()),
	limit: Type.Optional(Type.Integer({ minimum: 1 })),
});

const DESCRIPTION =
	"Use MCP servers. action=status: list servers; tools: server, query?, limit? → tool names; describe: server, tool → input schema; call: server, tool, args.";

type Session = Readonly<{ config: ConfigSnapshot; runtime: Runtime }>;

type Result = AgentToolResult<McpDetails>;

const DEFAULT_TOOL_LIMIT = 50;

function oneLine(text: string | undefined, max = 120): string {
	const line = stripTerminal(text ?? "")
		.replace(/\s+/g, " ")
		.trim();
	return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function statusLine(status: ServerStatus): string {
	const facts = [
		status.state,
		status.transport,
		status.protocolVersion ? `protocol ${status.protocolVersion}` : undefined,
		status.toolCount !== undefined ? `${status.toolCount} tools` : undefined,
	].filter(Boolean);
	const description = status.description ? ` — ${oneLine(status.description, 100)}` : "";
	return `${status.name}: ${facts.join(" · ")}${description}`;
}

/** What the model sees for `status`: short, no paths. */
function modelStatus(statuses: readonly ServerStatus[]): string {
	if (statuses.length === 0) return "No MCP servers are configured.";
	const lines = statuses.map((status) => {
		const error = status.error ? `\n  error: ${status.error.split("\n")[0]}` : "";
		return `${statusLine(status)}${error}`;
	});
	return `MCP servers:\n${lines.join("\n")}`;
}

/** What `/mcp status` shows the user: state, source, last error, stderr tail, ignored keys. */
function userStatus(session: Session | undefined): string {
	if (!session) return "pi-mcp: no session yet.";
	const statuses = session.runtime.status();
	const lines = ["MCP servers (pi-mcp):"];
	if (statuses.length === 0) lines.push("  none configured");
	for (const status of statuses) {
		const source = status.source.kind === "extension" ? `extension ${status.source.path}` : status.source.path;
		lines.push(`  ${statusLine(status)}`, `    source: ${source}`);
		if (status.error)
			lines.push(...status.error.split("\n").map((line, i) => (i === 0 ? `    error: ${line}` : `      ${line}`)));
		if (status.stderrTail && !status.error?.includes(status.stderrTail)) {
			lines.push(
				"    stderr:",
				...status.stderrTail
					.split("\n")
					.slice(-6)
					.map((line) => `      ${line}`),
			);
		}
	}
	lines.push("Files:");
	for (const file of session.config.files) {
		const state = file.state === "untrusted" ? "not read: project not trusted" : file.state;
		lines.push(`  ${file.scope}: ${file.path} (${state})${file.error ? `\n    error: ${file.error}` : ""}`);
	}
	const ignored = statuses.filter((status) => status.ignoredKeys.length > 0);
	if (ignored.length > 0) {
		const list = ignored.map((status) => `${status.name} (${[...new Set(status.ignoredKeys)].join(", ")})`).join("; ");
		lines.push(`Ignored Pi-only keys (pi-mcp exposes every server through the one mcp tool): ${list}`);
	}
	return lines.join("\n");
}

function toolLine(tool: Tool): string {
	const description = oneLine(tool.description, 100);
	return description ? `${tool.name}: ${description}` : tool.name;
}

function parseArgs(server: string, tool: string, args: unknown): Record<string, unknown> {
	const value = typeof args === "string" ? parseJsonArgs(server, tool, args) : (args ?? {});
	if (typeof value !== "object" || value === null || Array.isArray(value)) {
		throw new Error(`mcp call ${server}/${tool}: "args" must be a JSON object of the tool's arguments`);
	}
	return value as Record<string, unknown>;
}

function parseJsonArgs(server: string, tool: string, text: string): unknown {
	if (text.trim() === "") return {};
	try {
		return JSON.parse(text);
	} catch (error) {
		throw new Error(`mcp call ${server}/${tool}: "args" is not valid JSON (${(error as Error).message})`);
	}
}

type Block = Result["content"][number];

/** Maps an MCP result to Pi content. Text is stripped of escapes and bounded by Pi's limits. */
function toContent(result: CallToolResult): { blocks: Block[]; text: string; images: number } {
	const parts: string[] = [];
	const images: Block[] = [];
	for (const block of result.content ?? []) {
		if (block.type === "text") parts.push(block.text);
		else if (block.type === "image") images.push({ type: "image", data: block.data, mimeType: block.mimeType });
		else if (block.type === "audio") parts.push(`[audio ${block.mimeType}, ${block.data.length} base64 chars, not shown]`);
		else if (block.type === "resource_link") parts.push(`[resource link: ${block.name} ${block.uri}]`);
		else if (block.type === "resource") {
			const resource = block.resource;
			parts.push(
				"text" in resource ? resource.text : `[embedded resource ${resource.uri} (${resource.mimeType ?? "binary"}), not shown]`,
			);
		}
	}
	if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
	const full = stripTerminal(parts.join("\n"));
	const cut = truncateHead(full, { maxBytes: DEFAULT_MAX_BYTES, maxLines: DEFAULT_MAX_LINES });
	const text = cut.truncated
		? `${cut.content}\n[output truncated: showing ${cut.outputLines} of ${cut.totalLines} lines, ${cut.outputBytes} of ${cut.totalBytes} bytes]`
		: full;
	const blocks: Block[] = [
		...(text || images.length === 0 ? [{ type: "text" as const, text: text || "(no content)" }] : []),
		...images,
	];
	return { blocks, text, images: images.length };
}

function progressText(progress: Progress): string {
	const percent =
		progress.total && progress.total > 0 ? `${Math.round((progress.progress / progress.total) * 100)}%` : `${progress.progress}`;
	return progress.message ? `${percent} · ${oneLine(progress.message, 80)}` : percent;
}

function textResult(details: McpDetails, text: string): Result {
	return { content: [{ type: "text", text }], details: { ...details, textChars: text.length } };
}

export function installMcp(pi: ExtensionAPI, options: InstallMcpOptions = {}): void {
	const holder: { session?: Session; loading?: Promise<void> } = {};
	const env = () => options.env ?? process.env;

	async function readConfig(ctx: ExtensionContext, extensionServers: readonly ExtensionServer[]): Promise<ConfigSnapshot> {
		return loadConfig({
			agentDir: options.agentDir ?? getAgentDir(),
			cwd: ctx.cwd,
			trusted: typeof ctx.isProjectTrusted === "function" ? ctx.isProjectTrusted() : false,
			env: env(),
			extensionServers,
			configDirName: CONFIG_DIR_NAME,
		});
	}

	function registeredServers(): readonly ExtensionServer[] {
		return typeof pi.getMcpServers === "function" ? pi.getMcpServers() : [];
	}

	async function endSession(): Promise<void> {
		const session = holder.session;
		holder.session = undefined;
		await session?.runtime.dispose();
	}

	function requireSession(): Session {
		if (!holder.session) throw new Error("MCP is not available: the session has not started");
		return holder.session;
	}

	/** Command output: a notification where there is a UI (TUI, RPC); plain text on stderr in print and
	 * JSON modes, where Pi keeps stdout for the agent's own output (it redirects extensions' stdout there too). */
	function report(ctx: ExtensionContext, text: string, level: "info" | "warning" | "error" = "info"): void {
		if (ctx.hasUI) ctx.ui.notify(text, level);
		else process.stderr.write(`${text}\n`);
	}

	pi.registerTool({
		name: "mcp",
		label: "MCP",
		description: DESCRIPTION,
		promptSnippet: "mcp: tools of MCP servers (status, tools, describe, call)",
		parameters,
		async execute(_id, params, signal, onUpdate) {
			const session = requireSession();
			const action = params.action;
			const server = params.server;
			if (action === "status") return textResult({ action }, modelStatus(session.runtime.status()));
			if (!server) throw new Error(`mcp ${action}: "server" is required; use action "status" to list servers`);
			if (action === "tools") {
				const tools = await session.runtime.tools(server, signal);
				const query = params.query?.toLowerCase();
				const matching = query
					? tools.filter((tool) => `${tool.name} ${tool.description ?? ""}`.toLowerCase().includes(query))
					: tools;
				const limit = params.limit ?? DEFAULT_TOOL_LIMIT;
				const shown = matching.slice(0, limit);
				const more = matching.length > shown.length ? `\n… ${matching.length - shown.length} more (use query or limit)` : "";
				const header = `${server}: ${matching.length} tool${matching.length === 1 ? "" : "s"}${query ? ` matching "${params.query}"` : ""}`;
				return textResult({ action, server }, sanitize(`${header}\n${shown.map(toolLine).join("\n")}${more}`).trimEnd());
			}
			if (!params.tool) throw new Error(`mcp ${action}: "tool" is required; use action "tools" to list ${server}'s tools`);
			const toolName = params.tool;
			if (action === "describe") {
				const tool = await session.runtime.tool(server, toolName, signal);
				const lines = [
					`${server}/${tool.name}`,
					tool.description ? stripTerminal(tool.description) : undefined,
					`input schema: ${JSON.stringify(tool.inputSchema)}`,
					tool.outputSchema ? `output schema: ${JSON.stringify(tool.outputSchema)}` : undefined,
				].filter((line): line is string => line !== undefined);
				return textResult({ action, server, tool: toolName }, lines.join("\n"));
			}
			if (action !== "call") throw new Error(`mcp: unknown action "${String(action)}"; use status, tools, describe or call`);
			const args = parseArgs(server, toolName, params.args);
			const details: McpDetails = { action, server, tool: toolName };
			const result = await session.runtime.call(server, toolName, args, {
				signal,
				onProgress: (progress) => onUpdate?.({ content: [{ type: "text", text: progressText(progress) }], details }),
			});
			const mapped = toContent(result);
			const done: McpDetails = { ...details, textChars: mapped.text.length, images: mapped.images };
			if (result.isError) {
				return { content: mapped.blocks, details: { ...done, error: oneLine(mapped.text, 200) }, isError: true };
			}
			return { content: mapped.blocks, details: done };
		},
		renderCall: (args, theme) => renderCall(args as McpArgs, theme),
		renderResult: (result, options, theme, context) => renderResult(result as Result, options, theme, context.isError),
	});

	const SUBCOMMANDS = ["status", "tools", "reconnect"];
	const USAGE = "Usage: /mcp [status] | /mcp tools <server> | /mcp reconnect <server>";

	pi.registerCommand("mcp", {
		description: "MCP servers: status, tools <server>, reconnect <server>",
		getArgumentCompletions: (prefix) => {
			const [action = "", server, ...rest] = prefix.trimStart().split(/\s+/);
			if (rest.length > 0) return null;
			if (server === undefined) {
				const items = SUBCOMMANDS.filter((item) => item.startsWith(action)).map((item) => ({ value: `${item} `, label: item }));
				return items.length > 0 ? items : null;
			}
			if (action !== "tools" && action !== "reconnect") return null;
			const items = (holder.session?.runtime.status() ?? [])
				.filter((status) => status.name.startsWith(server))
				.map((status) => ({ value: `${action} ${status.name}`, label: status.name, description: status.state }));
			return items.length > 0 ? items : null;
		},
		handler: async (args, ctx) => {
			const [action = "status", name, ...extra] = args.trim().split(/\s+/).filter(Boolean);
			await holder.loading;
			const session = holder.session;
			if (action === "status" && name === undefined) return report(ctx, userStatus(session));
			if (!SUBCOMMANDS.includes(action) || extra.length > 0 || name === undefined || action === "status") {
				return report(ctx, USAGE, "warning");
			}
			if (!session) return report(ctx, "pi-mcp: no session yet.", "warning");
			try {
				if (action === "tools") {
					const tools = await session.runtime.tools(name, ctx.signal);
					const body = tools.length > 0 ? tools.map((tool) => `  ${toolLine(tool)}`).join("\n") : "  (no tools)";
					return report(ctx, sanitize(`${name}: ${tools.length} tool${tools.length === 1 ? "" : "s"}\n${body}`, []));
				}
				await session.runtime.reset(name);
				const status = await session.runtime.connect(name, ctx.signal);
				return report(
					ctx,
					status.state === "ready" ? `Reconnected: ${statusLine(status)}` : `${name}: ${status.error ?? status.state}`,
					status.state === "ready" ? "info" : "error",
				);
			} catch (error) {
				return report(ctx, (error as Error).message, "error");
			}
		},
	});

	pi.on("session_start", async (_event, ctx) => {
		const loading = (async () => {
			await endSession();
			const config = await readConfig(ctx, registeredServers());
			holder.session = {
				config,
				runtime: createRuntime({ servers: config.servers, env: env(), clientInfo: { name: "pi-mcp", version: VERSION } }),
			};
			const problems = config.servers.filter((server) => server.error).length + config.files.filter((file) => file.error).length;
			if (problems > 0 && ctx.hasUI) {
				ctx.ui.notify(`pi-mcp: ${problems} configuration problem${problems === 1 ? "" : "s"}; see /mcp status`, "warning");
			}
		})();
		holder.loading = loading;
		await loading;
	});

	pi.on("mcp_servers_change", async (event, ctx) => {
		await holder.loading;
		const session = holder.session;
		if (!session) return;
		const config = await readConfig(ctx, event.servers);
		await session.runtime.update(config.servers);
		if (holder.session === session) holder.session = { ...session, config };
	});

	pi.on("session_shutdown", async () => {
		await holder.loading?.catch(() => undefined);
		await endSession();
	});
}

export default function (pi: ExtensionAPI): void {
	installMcp(pi);
}
