/**
 * The commands that read servers: list, tools, search, describe, call, login, logout, doctor. They
 * run the extension's own modules (runtime, the `mcp` tool's actions, auth), so the output follows
 * the same rules as the model's.
 */
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { runAction } from "../catalog/actions.ts";
import { matchingTools, type Result, toolListing } from "../catalog/listing.ts";
import type { Params } from "../catalog/requests.ts";
import { userStatus } from "../catalog/status.ts";
import { oauthConfig } from "../config.ts";
import { sanitize } from "../output/text.ts";
import type { ServerConfig } from "../schema.ts";
import { UsageError } from "./args.ts";
import { credentialsOf, type ShellRun } from "./context.ts";
import { binaryLine, filesNote } from "./files.ts";
import { HELP } from "./help.ts";
import { EXIT } from "./io.ts";
import { jsonLine } from "./json.ts";
import { checkTool, entryOf, serverWords, unknownOf } from "./names.ts";
import { slow } from "./slow.ts";

function needsOauth(cli: ShellRun, name: string | undefined, command: string): ServerConfig {
	const config = oauthConfig(cli.config, entryOf(cli, name, command).name);
	if (typeof config === "string") throw UsageError.said(config);
	return config;
}

/** Text blocks as they are; other blocks (images, audio) saved into `--out` (or said not kept) and named. */
async function printResult(cli: ShellRun, result: Result, extra: Readonly<Record<string, unknown>>): Promise<number> {
	const code = result.isError ? EXIT.failed : EXIT.ok;
	const write = result.isError ? cli.io.out : cli.content;
	if (cli.flags.json) {
		write(jsonLine({ ...extra, isError: result.isError === true, content: result.content }));
		return code;
	}
	const parts = await Promise.all(
		result.content.map(async (block, index) =>
			block.type === "text" ? block.text : binaryLine(cli.files, block.data, block.mimeType, `${String(extra.tool)}-${index}`),
		),
	);
	write(`${parts.join("\n")}\n`);
	filesNote(cli.files, cli.flags.out, cli.io.err);
	return code;
}

/** Exit 2 when a file or an entry is invalid, or a file has keys Pi does not read. */
async function list(cli: ShellRun): Promise<number> {
	const credentials = await credentialsOf(cli);
	const invalid =
		cli.config.files.some((file) => file.state === "error" || (file.warnings?.length ?? 0) > 0) ||
		cli.config.servers.some((entry) => entry.error !== undefined);
	const warnings = cli.config.files.flatMap((file) => (file.warnings ?? []).map((warning) => `${file.path}: ${warning}`));
	const shadows = cli.shadowed.map((name) => `project entry "${name}" replaces the user file's entry of that name`);
	if (cli.flags.json) {
		const servers = cli.runtime.status().map((status) => ({
			...status,
			credentials: credentials.get(status.name)?.text,
			...(cli.shadowed.includes(status.name) ? { shadows: "user" } : {}),
		}));
		cli.io.out(jsonLine({ agentDir: cli.agentDir, servers, files: cli.config.files }, 2));
	} else {
		const notes = [...warnings, ...shadows].map((note) => `  note: ${note}`);
		cli.io.out(`${userStatus(cli.session, credentials)}\n${notes.length > 0 ? `Notes:\n${notes.join("\n")}\n` : ""}`);
	}
	return invalid ? EXIT.usage : EXIT.ok;
}

async function tools(cli: ShellRun, args: readonly string[]): Promise<number> {
	const [name, ...words] = args;
	const server = entryOf(cli, name, "tools").name;
	const query = words.join(" ") || undefined;
	if (cli.flags.json) {
		const listed = await slow(cli, `connecting to ${server}`, matchingTools(cli.session, server, query, cli.signal));
		cli.io.out(jsonLine({ server, query, tools: listed }, 2));
	} else {
		const { header, lines } = await slow(cli, `connecting to ${server}`, toolListing(cli.session, server, query, cli.signal));
		cli.io.out(`${[header, ...lines].join("\n")}\n`);
	}
	return EXIT.ok;
}

/**
 * The `mcp` tool's search across every enabled server (its `tools` action without a server). A shell
 * command has no reason to answer before the slow ones: every server is listed first (in parallel,
 * each bounded by its own timeout or --timeout), then searched.
 */
async function search(cli: ShellRun, args: readonly string[]): Promise<number> {
	const query = args.join(" ").trim();
	if (!query) throw new UsageError(`pi-mcp search: give a query`, "search", HELP.search);
	const names = cli.runtime
		.status()
		.filter((status) => status.state !== "disabled" && status.state !== "invalid")
		.map((status) => status.name);
	const listed = await slow(
		cli,
		"listing the tools of every enabled server",
		Promise.all(
			names.map((server) =>
				cli.runtime.tools(server, cli.signal).then(
					(tools) => ({ server, tools }),
					(error: Error) => ({ server, error: sanitize(error.message).split("\n")[0] ?? "" }),
				),
			),
		),
	);
	if (cli.flags.json) {
		const sources = listed.flatMap((entry) => ("tools" in entry ? [entry] : []));
		const { indexOf, search: rank } = await import("../search/rank.ts");
		const hits = rank(await indexOf(sources), query, 50).map((hit) => ({
			server: hit.server,
			tool: hit.tool.name,
			description: hit.tool.description ?? "",
		}));
		const failed = listed.flatMap((entry) => ("error" in entry ? [entry] : []));
		cli.io.out(jsonLine({ query, results: hits, failed }, 2));
		return EXIT.ok;
	}
	const params: Params = { action: "tools", query, limit: 50 };
	const result = await runAction(cli.session, params, cli.signal, () => undefined);
	cli.io.out(`${result.content.map((block) => (block.type === "text" ? block.text : "")).join("\n")}\n`);
	return result.isError ? EXIT.failed : EXIT.ok;
}

/** One tool's schema, as the `mcp` tool's `describe` action shows it. */
async function describe(cli: ShellRun, args: readonly string[]): Promise<number> {
	const [name, tool, ...extra] = args;
	const entry = entryOf(cli, name, "describe");
	const server = entry.name;
	if (!tool || extra.length > 0) throw new UsageError(`pi-mcp describe: give a server and a tool`, "describe", HELP.describe);
	await slow(cli, `connecting to ${server}`, checkTool(cli.runtime, entry, tool, cli.signal));
	if (cli.flags.json) {
		const listed = await cli.runtime.tools(server, cli.signal);
		const found = listed.find((each) => each.name === tool);
		if (!found)
			throw unknownOf(
				serverWords(server),
				"tool",
				tool,
				listed.map((each) => each.name),
			);
		cli.io.out(jsonLine({ server, tool: found }, 2));
		return EXIT.ok;
	}
	const result = await slow(
		cli,
		`connecting to ${server}`,
		runAction(cli.session, { action: "describe", server, tool }, cli.signal, () => undefined),
	);
	const text = result.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
	(result.isError ? cli.io.err : cli.io.out)(`${text}\n`);
	return result.isError ? EXIT.usage : EXIT.ok;
}

/** The call's JSON argument, or the usage error that refuses it. */
function callArguments(json: string): unknown {
	try {
		return JSON.parse(json) as unknown;
	} catch (error) {
		throw new UsageError(`pi-mcp call: the arguments are not valid JSON (${(error as Error).message})`);
	}
}

async function call(cli: ShellRun, args: readonly string[]): Promise<number> {
	const [name, tool, json, ...extra] = args;
	const entry = entryOf(cli, name, "call");
	const server = entry.name;
	if (!tool || extra.length > 0)
		throw new UsageError(`pi-mcp call: give a server, a tool and one JSON argument`, "call", HELP.call);
	const value = callArguments(json ?? "{}");
	if (typeof value !== "object" || value === null || Array.isArray(value)) {
		throw new UsageError(`pi-mcp call: the arguments must be one JSON object, such as '{"text":"hi"}'`);
	}
	await slow(cli, `connecting to ${server}`, checkTool(cli.runtime, entry, tool, cli.signal));
	const params: Params = { action: "call", server, tool, args: json ?? "{}" };
	const running = runAction(cli.session, params, cli.signal, (partial) => {
		const text = partial.content.find((block) => block.type === "text");
		if (text?.type === "text") cli.io.err(`${server}/${tool}: ${text.text}\n`);
	});
	const result = await slow(cli, `calling ${server}/${tool}`, running);
	return printResult(cli, result, { server, tool });
}

async function login(cli: ShellRun, args: readonly string[]): Promise<number> {
	const config = needsOauth(cli, args[0], "login");
	const auth = await cli.auth();
	const outcome = new Promise<boolean>((resolve) => {
		cli.onSignIn((server, message, ok) => {
			if (server !== config.name) return;
			(ok ? cli.io.out : cli.io.err)(`${message}\n`);
			resolve(ok);
		});
		cli.signal.addEventListener("abort", () => resolve(false), { once: true });
	});
	const link = await slow(cli, `preparing the sign-in link for ${config.name}`, auth.login(config));
	cli.io.out(`${link.message}\n`);
	cli.io.err("Waiting for the browser. If it runs on another machine, paste the address it ended on and press Enter.\n");
	const { FLOW_TTL_MS } = await import("../login.ts");
	const lines = createInterface({ input: cli.io.stdin, terminal: false });
	lines.on("line", (line) => {
		const pasted = line.trim();
		if (!pasted) return;
		auth.complete(config, pasted).catch((error: Error) => cli.io.err(`${sanitize(error.message)}\n`));
	});
	const done = new AbortController();
	const expired = sleep(FLOW_TTL_MS, false, { signal: done.signal }).then(
		(value) => {
			cli.io.err("The sign-in link expired; run pi-mcp login again.\n");
			return value;
		},
		() => false,
	);
	try {
		return (await Promise.race([outcome, expired])) ? EXIT.ok : EXIT.failed;
	} finally {
		done.abort();
		lines.close();
	}
}

async function logout(cli: ShellRun, args: readonly string[]): Promise<number> {
	const config = needsOauth(cli, args[0], "logout");
	const existed = await (await cli.auth()).logout(config);
	if (cli.flags.json) cli.io.out(jsonLine({ server: config.name, deleted: existed }));
	else
		cli.io.out(existed ? `Signed out of MCP server "${config.name}".\n` : `MCP server "${config.name}" had no stored sign-in.\n`);
	return EXIT.ok;
}

async function doctor(cli: ShellRun): Promise<number> {
	const { runDoctor } = await import("./doctor.ts");
	const ok = await slow(
		cli,
		"checking",
		runDoctor(cli, () => credentialsOf(cli)),
	);
	return ok ? EXIT.ok : EXIT.failed;
}

export const SERVER_COMMANDS: Readonly<Record<string, (cli: ShellRun, args: readonly string[]) => Promise<number>>> = {
	list: (cli) => list(cli),
	tools,
	search,
	describe,
	call,
	login,
	logout,
	doctor: (cli) => doctor(cli),
	prompt: async (cli, args) => (await import("./prompt.ts")).printPrompt(cli, args),
	read: async (cli, args) => (await import("./prompt.ts")).printResource(cli, args),
	trust: async (cli, args) => (await import("./trust.ts")).trust(cli, args),
};
