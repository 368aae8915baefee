/**
 * `pi-mcp`, the shell command (package `bin`, started by `bin/pi-mcp.mjs`): list servers, list and
 * call tools, sign in and out, diagnose a setup. It reads the same files as the extension (the user
 * file in Pi's agent directory; the project file only with `--approve`) and runs the extension's own
 * modules: configuration, runtime, actions (same output rules), auth and the keyring.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { loadConfig, unknownServer } from "../config.ts";
import type { Auth, Credentials, Runtime, Session } from "../contracts.ts";
import { AuthRequired } from "../errors.ts";
import type { LoginService } from "../login.ts";
import { refusalText } from "../output/content.ts";
import { escapeName, sanitize } from "../output/text.ts";
import { createOverflowStore } from "../output.ts";
import { createRuntime } from "../runtime.ts";
import type { ConfigSnapshot, ServerConfig } from "../schema.ts";
import { runAction } from "../tool/actions.ts";
import type { Params } from "../tool/definition.ts";
import { matchingTools, type Result, toolListing } from "../tool/listing.ts";
import { credentialStates, userStatus } from "../tool/status.ts";

/** Exit codes: scripts branch on these. */
export const EXIT = { ok: 0, failed: 1, usage: 2, signIn: 3, interrupted: 130 } as const;

export type CliIo = Readonly<{
	out: (text: string) => void;
	err: (text: string) => void;
	stdin: NodeJS.ReadableStream;
	env: Readonly<Record<string, string | undefined>>;
	cwd: string;
}>;

type Flags = Readonly<{ json: boolean; approve: boolean; help: boolean }>;

const COMMON = `Options:
  --approve   also read the project file (.pi/mcp.json in this directory), as if Pi trusted the project
  --json      machine-readable output on stdout
  -h, --help  this help
Files: <agent dir>/mcp.json (PI_CODING_AGENT_DIR, default ~/.pi/agent) and, with --approve, ./.pi/mcp.json.
Exit codes: 0 ok, 1 failed, 2 usage or configuration error, 3 sign-in needed (run pi-mcp login <server>).`;

export const HELP: Readonly<Record<string, string>> = {
	main: `pi-mcp: the MCP servers of pi-mcp from the shell

Usage: pi-mcp <command> [arguments] [options]

Commands:
  list                           servers with state, source, credentials and the files read
  tools <server> [query]         a server's tools (connects), optionally searched
  call <server> <tool> ['<json>'] call a tool with JSON arguments; same output rules as the mcp tool
  login <server>                 sign in to an OAuth server: prints the link, waits, stores the result in the keyring
  logout <server>                delete the stored sign-in of a server
  doctor                         Node, keyring, files, and a connection to every enabled server

Run pi-mcp <command> --help for details.
${COMMON}`,
	list: `Usage: pi-mcp list [--approve] [--json]\n\nEvery configured server with its state, source file and credential state, and the files read.\nNothing connects.\n${COMMON}`,
	tools: `Usage: pi-mcp tools <server> [query] [--approve] [--json]\n\nConnects to <server> and lists its tools with descriptions; with a query, the tools matching it\n(the same search as the mcp tool's "tools" action). --json prints the full definitions (schemas).\n${COMMON}`,
	call: `Usage: pi-mcp call <server> <tool> ['<json arguments>'] [--approve] [--json]\n\nCalls one tool. Arguments are one JSON object (default {}). Output follows the mcp tool's rules:\nescapes stripped, long text cut with the rest in a private file named in the output.\nProgress goes to stderr. Exit 1 when the tool reports an error.\n${COMMON}`,
	login: `Usage: pi-mcp login <server> [--approve]\n\nPrints an authorization link for an OAuth server and waits (up to 5 minutes) until the browser\nreturns to the loopback address, or until you paste the address the browser ended on (useful when\nthe browser runs on another machine). The sign-in is stored in the OS keyring.\n${COMMON}`,
	logout: `Usage: pi-mcp logout <server> [--approve] [--json]\n\nDeletes the stored sign-in of an OAuth server from the OS keyring.\n${COMMON}`,
	doctor: `Usage: pi-mcp doctor [--approve] [--json]\n\nChecks the Node version, that the OS keyring is reachable, that each file parses, and that each\nenabled server connects within its timeout (era, protocol, tool count, credential state).\nProgress goes to stderr. Exit 1 when something needs fixing.\n${COMMON}`,
};

/** Where Pi keeps its agent files: `PI_CODING_AGENT_DIR` (with `~`), else `~/.pi/agent`. This is
 * Pi's `getAgentDir()`, restated because importing Pi's index costs about a second per command. */
export function agentDirOf(env: Readonly<Record<string, string | undefined>>): string {
	const dir = env.PI_CODING_AGENT_DIR;
	if (!dir) return join(homedir(), ".pi", "agent");
	if (dir === "~") return homedir();
	return dir.startsWith("~/") ? join(homedir(), dir.slice(2)) : dir;
}

function version(): string {
	const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string };
	return pkg.version ?? "0.0.0";
}

/** Shared messages name Pi's `/mcp` commands; here the shell's (`pi-mcp login` asks for a pasted address itself). */
export function shellWords(text: string): string {
	return text
		.replace(
			/ ?If the browser runs on another machine, the address it ends on can be pasted with: \/mcp login [\w-]+ <that address>/g,
			"",
		)
		.replace(/\/mcp login ([\w-]+)/g, "pi-mcp login $1")
		.replace(/\/mcp reconnect [\w-]+/g, "pi-mcp doctor");
}

/** The runtime's `Credentials`, auth loaded on first use; the setup's signal and the secrets seen pass through. */
export function deferredCredentials(auth: () => Promise<Auth>, made: () => Auth | undefined): Credentials {
	return {
		prepare: async (server, signal) => (await auth()).prepare(server, signal),
		stepUp: async (server, error) => (await auth()).stepUp(server, error),
		secrets: () => made()?.secrets() ?? [],
	};
}

/** What every command works with; `close` stops every server and listener. */
export type Cli = Readonly<{
	/** Messages and errors, in the shell's words (`shellWords`). */
	io: CliIo;
	/** A tool's own result text, as the server sent it. */
	content: (text: string) => void;
	flags: Flags;
	agentDir: string;
	config: ConfigSnapshot;
	runtime: Runtime;
	session: Session;
	auth: () => Promise<Auth>;
	/** Messages from completed or failed sign-ins. */
	onSignIn: (listener: (server: string, message: string, ok: boolean) => void) => void;
	signal: AbortSignal;
	close: () => Promise<void>;
}>;

async function openCli(io: CliIo, flags: Flags, signal: AbortSignal): Promise<Cli> {
	const agentDir = agentDirOf(io.env);
	const config = await loadConfig({ agentDir, cwd: io.cwd, trusted: flags.approve, env: io.env });
	const listeners: ((server: string, message: string, ok: boolean) => void)[] = [];
	// The auth modules and the keyring binding load only for servers that need credentials.
	const made: { promise?: Promise<Readonly<{ auth: Auth; login: LoginService }>>; auth?: Auth } = {};
	const auth = async (): Promise<Auth> => {
		made.promise ??= Promise.all([import("../auth.ts"), import("../login/receiver.ts"), import("../auth/keyring.ts")]).then(
			([{ createAuth }, { createLoginService }, { keyringStore }]) => {
				const login = createLoginService();
				const created = createAuth({
					env: io.env,
					store: keyringStore(),
					login,
					lockDir: join(agentDir, "mcp-locks"),
					notify: (server, message, ok) => {
						for (const listener of listeners) listener(server, message, ok);
					},
				});
				made.auth = created;
				return { auth: created, login };
			},
		);
		return (await made.promise).auth;
	};
	const runtime = createRuntime({
		servers: config.servers,
		env: io.env,
		clientInfo: { name: "pi-mcp", version: version() },
		auth: deferredCredentials(auth, () => made.auth),
	});
	const overflow = createOverflowStore();
	return {
		io: { ...io, out: (text) => io.out(shellWords(text)), err: (text) => io.err(shellWords(text)) },
		content: io.out,
		flags,
		agentDir,
		config,
		runtime,
		session: { config, runtime, overflow },
		auth,
		onSignIn: (listener) => listeners.push(listener),
		signal,
		close: async () => {
			await runtime.dispose();
			const opened = await made.promise?.catch(() => undefined);
			opened?.auth.dispose();
			await opened?.login.dispose();
			// Overflow files named in the output stay for the user to read; an unused directory never exists.
		},
	};
}

/** Credential states; the auth modules load only when a server has `auth`. */
function credentialsOf(cli: Cli): Promise<ReadonlyMap<string, string>> {
	return credentialStates(cli.config, { credentialState: async (server) => (await cli.auth()).credentialState(server) });
}

/** Work that may take a while (connecting, a slow tool) says so on stderr after a second. */
async function slow<T>(cli: Cli, what: string, work: Promise<T>): Promise<T> {
	const timer = setTimeout(() => cli.io.err(`pi-mcp: ${what}…\n`), 1000);
	try {
		return await work;
	} finally {
		clearTimeout(timer);
	}
}

class UsageError extends Error {}

/** The entry of a named server, or a usage error naming the configured ones. */
function entryOf(cli: Cli, name: string | undefined, command: string) {
	if (!name) throw new UsageError(`pi-mcp ${command}: name a server\n\n${HELP[command]}`);
	const entry = cli.config.servers.find((server) => server.name === name);
	if (!entry) {
		// The extension's message (it also names config files that could not be read), plus the CLI's hint.
		const hint = cli.flags.approve ? "" : " (the project file is read only with --approve)";
		throw new UsageError(`pi-mcp: ${unknownServer(cli.config, name) ?? `unknown MCP server "${escapeName(name)}"`}${hint}`);
	}
	if (!entry.config) throw new UsageError(`pi-mcp: ${entry.error ?? `server "${name}" has no usable configuration`}`);
	return entry;
}

function oauthConfig(cli: Cli, name: string | undefined, command: string): ServerConfig {
	const config = entryOf(cli, name, command).config as ServerConfig;
	if (config.auth !== "oauth") throw new UsageError(`pi-mcp: MCP server "${config.name}" does not use OAuth sign-in`);
	return config;
}

/** Text blocks as they are; an image (which a terminal cannot show inline) is saved to a private
 * overflow file and named. JSON output keeps the blocks as the model would get them. */
async function printResult(cli: Cli, result: Result, extra: Readonly<Record<string, unknown>>): Promise<number> {
	if (cli.flags.json) {
		(result.isError ? cli.io.out : cli.content)(
			`${JSON.stringify({ ...extra, isError: result.isError === true, content: result.content })}\n`,
		);
		return result.isError ? EXIT.failed : EXIT.ok;
	}
	const parts = await Promise.all(
		result.content.map(async (block, index) => {
			if (block.type === "text") return block.text;
			const saved = await cli.session.overflow.save(`image-${index}`, [Buffer.from(block.data, "base64")]);
			return `[${block.mimeType} image${"path" in saved ? ` saved to ${saved.path}` : `: ${refusalText(saved)}`}]`;
		}),
	);
	(result.isError ? cli.io.out : cli.content)(`${parts.join("\n")}\n`);
	return result.isError ? EXIT.failed : EXIT.ok;
}

async function list(cli: Cli): Promise<number> {
	const credentials = await credentialsOf(cli);
	if (cli.flags.json) {
		const servers = cli.runtime.status().map((status) => ({ ...status, credentials: credentials.get(status.name) }));
		cli.io.out(`${JSON.stringify({ agentDir: cli.agentDir, servers, files: cli.config.files }, null, 2)}\n`);
	} else {
		cli.io.out(`${userStatus(cli.session, credentials)}\n`);
	}
	return EXIT.ok;
}

async function tools(cli: Cli, args: readonly string[]): Promise<number> {
	const [name, ...words] = args;
	const server = entryOf(cli, name, "tools").name;
	const query = words.join(" ") || undefined;
	if (cli.flags.json) {
		const listed = await slow(cli, `connecting to ${server}`, matchingTools(cli.session, server, query, cli.signal));
		cli.io.out(`${JSON.stringify({ server, query, tools: listed }, null, 2)}\n`);
	} else {
		const listing = toolListing(cli.session, server, query, cli.signal);
		const { header, lines } = await slow(cli, `connecting to ${server}`, listing);
		cli.io.out(`${[header, ...lines].join("\n")}\n`);
	}
	return EXIT.ok;
}

async function call(cli: Cli, args: readonly string[]): Promise<number> {
	const [name, tool, json, ...extra] = args;
	const server = entryOf(cli, name, "call").name;
	if (!tool || extra.length > 0) throw new UsageError(`pi-mcp call: give a server, a tool and one JSON argument\n\n${HELP.call}`);
	try {
		JSON.parse(json ?? "{}");
	} catch (error) {
		throw new UsageError(`pi-mcp call: the arguments are not valid JSON (${(error as Error).message})`);
	}
	const params: Params = { action: "call", server, tool, args: json ?? "{}" };
	const running = runAction(cli.session, params, cli.signal, (partial) => {
		const text = partial.content.find((block) => block.type === "text");
		if (text?.type === "text") cli.io.err(`${server}/${tool}: ${text.text}\n`);
	});
	const result = await slow(cli, `calling ${server}/${tool}`, running);
	return printResult(cli, result, { server, tool });
}

async function login(cli: Cli, args: readonly string[]): Promise<number> {
	const config = oauthConfig(cli, args[0], "login");
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
	const timer: { id?: NodeJS.Timeout } = {};
	const expired = new Promise<boolean>((resolve) => {
		timer.id = setTimeout(() => {
			cli.io.err("The sign-in link expired; run pi-mcp login again.\n");
			resolve(false);
		}, FLOW_TTL_MS);
	});
	try {
		return (await Promise.race([outcome, expired])) ? EXIT.ok : EXIT.failed;
	} finally {
		clearTimeout(timer.id);
		lines.close();
	}
}

async function logout(cli: Cli, args: readonly string[]): Promise<number> {
	const config = oauthConfig(cli, args[0], "logout");
	const existed = await (await cli.auth()).logout(config);
	if (cli.flags.json) cli.io.out(`${JSON.stringify({ server: config.name, deleted: existed })}\n`);
	else
		cli.io.out(existed ? `Signed out of MCP server "${config.name}".\n` : `MCP server "${config.name}" had no stored sign-in.\n`);
	return EXIT.ok;
}

const COMMANDS: Readonly<Record<string, (cli: Cli, args: readonly string[]) => Promise<number>>> = {
	list: (cli) => list(cli),
	tools,
	call,
	login,
	logout,
	doctor: async (cli) => {
		const { runDoctor } = await import("./doctor.ts");
		return (await runDoctor(cli, () => credentialsOf(cli))) ? EXIT.ok : EXIT.failed;
	},
};

function parse(argv: readonly string[]): Readonly<{ command?: string; args: readonly string[]; flags: Flags }> {
	const { values, positionals } = parseArgs({
		args: [...argv],
		options: { json: { type: "boolean" }, approve: { type: "boolean" }, help: { type: "boolean", short: "h" } },
		allowPositionals: true,
		strict: true,
	});
	const [command, ...args] = positionals;
	return { command, args, flags: { json: values.json === true, approve: values.approve === true, help: values.help === true } };
}

/** Runs one command; resolves to the exit code. Everything started is stopped before it resolves. */
export async function main(
	argv: readonly string[],
	io: CliIo,
	signal: AbortSignal = new AbortController().signal,
): Promise<number> {
	const parsed = (() => {
		try {
			return parse(argv);
		} catch (error) {
			return (error as Error).message;
		}
	})();
	if (typeof parsed === "string") {
		io.err(`pi-mcp: ${parsed}\n\n${HELP.main}\n`);
		return EXIT.usage;
	}
	const { command, args, flags } = parsed;
	if (command === "help") {
		io.out(`${HELP[args[0] ?? "main"] ?? HELP.main}\n`);
		return EXIT.ok;
	}
	const run = command ? COMMANDS[command] : undefined;
	if (!command || !run) {
		if (flags.help || !command) {
			io.out(`${HELP.main}\n`);
			return flags.help ? EXIT.ok : EXIT.usage;
		}
		io.err(`pi-mcp: unknown command "${command}"\n\n${HELP.main}\n`);
		return EXIT.usage;
	}
	if (flags.help) {
		io.out(`${HELP[command]}\n`);
		return EXIT.ok;
	}
	const cli = await openCli(io, flags, signal);
	try {
		return await run(cli, args);
	} catch (error) {
		if (error instanceof UsageError) {
			io.err(`${error.message}\n`);
			return EXIT.usage;
		}
		if (signal.aborted) {
			io.err("pi-mcp: interrupted\n");
			return EXIT.interrupted;
		}
		// A link from here would die with this process: point at `pi-mcp login`, which waits for it.
		const text =
			error instanceof AuthRequired && "url" in error
				? `MCP server "${error.server}" needs sign-in: run pi-mcp login ${error.server}`
				: sanitize((error as Error).message);
		io.err(`pi-mcp: ${shellWords(text)}\n`);
		return error instanceof AuthRequired ? EXIT.signIn : EXIT.failed;
	} finally {
		await cli.close();
	}
}
