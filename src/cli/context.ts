/**
 * What every command that reads servers works with (`openCli`): the configuration, the runtime, the
 * session, auth loaded on first use, the files a call saves, and the guarantees of a run: `--timeout`
 * over each server's own, a notice on stderr when a step is silent for a while, and no server process
 * left behind however the run ends (each carries this run's mark; `sweep` kills what still does).
 */
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, open } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { credentialStates } from "../catalog/status.ts";
import { readForEdit } from "../config/edit.ts";
import { loadConfig, unknownServer } from "../config.ts";
import type { Auth, Runtime, Session } from "../contracts.ts";
import type { Words } from "../errors.ts";
import { escapeName } from "../output/text.ts";
import { createOverflowStore, type OverflowStore } from "../output.ts";
import { type ConfigSnapshot, closeMatches, type ServerEntry } from "../schema.ts";
import { createSession, VERSION } from "../session.ts";
import { type Flags, UsageError } from "./args.ts";
import { HELP } from "./help.ts";

/** Exit codes: scripts branch on these. */
export const EXIT = { ok: 0, failed: 1, usage: 2, signIn: 3, interrupted: 130 } as const;

export type CliIo = Readonly<{
	out: (text: string) => void;
	err: (text: string) => void;
	stdin: NodeJS.ReadableStream;
	env: Readonly<Record<string, string | undefined>>;
	cwd: string;
}>;

/** The environment variable that marks every server process of one run. */
export const RUN_MARK = "PI_MCP_CLI_RUN";

/** Seconds of silence before a waiting step says it is still waiting. */
const SILENCE_NOTICE_MS = 5000;

/** Where Pi keeps its agent files: `PI_CODING_AGENT_DIR` (with `~`), else `~/.pi/agent`. This is
 * Pi's `getAgentDir()`, restated because importing Pi's index costs about a second per command. */
export function agentDirOf(env: Readonly<Record<string, string | undefined>>): string {
	const dir = env.PI_CODING_AGENT_DIR;
	if (!dir) return join(homedir(), ".pi", "agent");
	if (dir === "~") return homedir();
	return dir.startsWith("~/") ? join(homedir(), dir.slice(2)) : dir;
}

export function version(): string {
	return VERSION;
}

/** The shell's words for a message's next step (`pi-mcp login` asks for a pasted address itself). */
export const SHELL_WORDS: Words = { reconnect: () => "pi-mcp doctor", login: (server) => `pi-mcp login ${server}` };

/** The ids of every other process (Linux: from /proc); none when it cannot be read. */
function processIds(): readonly string[] {
	try {
		return readdirSync("/proc").filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid);
	} catch {
		return [];
	}
}

/**
 * Kills every process that carries this run's mark (Linux: read from /proc, synchronously, so it
 * also works from a signal handler on the way out). Each server runs in its own session, out of
 * reach of the terminal's Ctrl+C, and its children inherit the mark.
 */
export function sweep(mark: string): number {
	if (process.platform !== "linux") return 0;
	const needle = Buffer.from(`${RUN_MARK}=${mark}\0`);
	const pids = processIds();
	const marked = pids.filter((pid) => {
		try {
			return readFileSync(`/proc/${pid}/environ`).includes(needle);
		} catch {
			return false;
		}
	});
	for (const pid of marked) {
		try {
			process.kill(Number(pid), "SIGKILL");
		} catch {
			// Gone already.
		}
	}
	return marked.length;
}

const MIME_EXTENSIONS: Readonly<Record<string, string>> = {
	"image/png": ".png",
	"image/jpeg": ".jpg",
	"image/gif": ".gif",
	"image/webp": ".webp",
	"image/svg+xml": ".svg",
	"audio/wav": ".wav",
	"audio/mpeg": ".mp3",
	"application/pdf": ".pdf",
	"application/json": ".json",
	"text/plain": ".txt",
};

/** The file name ending for a MIME type (`.bin` when unknown). */
export function extensionOf(mimeType: string): string {
	return MIME_EXTENSIONS[mimeType.split(";")[0]?.trim().toLowerCase() ?? ""] ?? ".bin";
}

/**
 * Where a run saves files: with `--out`, straight into that directory and kept; otherwise the
 * private overflow directory, removed when the command exits.
 */
function savedFiles(out: string | undefined): OverflowStore & Readonly<{ kept: boolean }> {
	if (out === undefined) return { ...createOverflowStore(), kept: false };
	const files = new KeptFiles(out);
	return { kept: true, save: (name, pieces) => files.save(name, pieces), used: () => files.used, dispose: async () => undefined };
}

/** Files saved into `--out`: their count names them, their bytes are reported. */
class KeptFiles {
	readonly #out: string;
	#used = 0;
	#count = 0;

	constructor(out: string) {
		this.#out = out;
	}

	get used(): number {
		return this.#used;
	}

	async save(name: string, pieces: readonly (string | Uint8Array)[]): Promise<Readonly<{ path: string; bytes: number }>> {
		await mkdir(this.#out, { recursive: true });
		this.#count += 1;
		const safe = name.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 80);
		const path = join(this.#out, `${process.pid}-${String(this.#count).padStart(3, "0")}-${safe}`);
		const handle = await open(path, "wx", 0o600);
		try {
			for (const piece of pieces) await handle.writeFile(piece);
		} finally {
			await handle.close();
		}
		const bytes = pieces.reduce((sum, piece) => sum + (typeof piece === "string" ? Buffer.byteLength(piece) : piece.length), 0);
		this.#used += bytes;
		return { path, bytes };
	}
}

/** What every command works with; `close` stops every server and listener. */
export type Cli = Readonly<{
	/** Messages and errors (built with the shell's words, `SHELL_WORDS`). */
	io: CliIo;
	/** A tool's own result text, as the server sent it. */
	content: (text: string) => void;
	flags: Flags;
	agentDir: string;
	config: ConfigSnapshot;
	/** Project entries that replace a user entry of the same name (never silent). */
	shadowed: readonly string[];
	runtime: Runtime;
	session: Session;
	/** Whether files the run saves are kept (`--out`). */
	keepsFiles: boolean;
	auth: () => Promise<Auth>;
	/** Messages from completed or failed sign-ins. */
	onSignIn: (listener: (server: string, message: string, ok: boolean) => void) => void;
	signal: AbortSignal;
	close: () => Promise<void>;
}>;

/** A server entry with this run's bounds: the run's mark in a stdio server's environment, `--timeout`. */
function forThisRun(entry: ServerEntry, mark: string, timeout: number | undefined): ServerEntry {
	const config = entry.config;
	if (!config) return entry;
	const bounded = timeout === undefined ? config : { ...config, requestTimeoutMs: Math.round(timeout * 1000) };
	const marked = bounded.transport === "stdio" ? { ...bounded, env: { ...bounded.env, [RUN_MARK]: mark } } : bounded;
	return { ...entry, config: marked };
}

/** Names of project entries that replace a user file's entry (an override entry only switches it). */
async function shadowedNames(agentDir: string, io: CliIo, config: ConfigSnapshot): Promise<readonly string[]> {
	const project = config.servers.filter((entry) => entry.source.kind === "project");
	if (project.length === 0) return [];
	const user = await readForEdit({ agentDir, cwd: io.cwd, env: io.env }, "user").catch(() => undefined);
	return project.map((entry) => entry.name).filter((name) => user !== undefined && name in user.servers);
}

export async function openCli(io: CliIo, flags: Flags, signal: AbortSignal, mark: string = randomUUID()): Promise<Cli> {
	const agentDir = agentDirOf(io.env);
	const config = await loadConfig({ agentDir, cwd: io.cwd, trusted: flags.approve, env: io.env });
	const listeners: ((server: string, message: string, ok: boolean) => void)[] = [];
	const files = savedFiles(flags.out);
	const built = createSession({
		config,
		env: io.env,
		agentDir,
		overflow: files,
		notify: (server, message, ok) => {
			for (const listener of listeners) listener(server, message, ok);
		},
		entry: (entry) => forThisRun(entry, mark, flags.timeout),
		words: SHELL_WORDS,
	});
	const session = await built.open();
	return {
		io,
		content: io.out,
		flags,
		agentDir,
		config,
		shadowed: flags.approve ? await shadowedNames(agentDir, io, config) : [],
		runtime: session.runtime,
		session,
		keepsFiles: files.kept,
		auth: async () => built.auth,
		onSignIn: (listener) => listeners.push(listener),
		signal,
		close: async () => {
			await built.dispose();
			sweep(mark);
		},
	};
}

/** Credential states; the auth modules load only when a server has `auth`. */
export function credentialsOf(cli: Cli): Promise<ReadonlyMap<string, string>> {
	return credentialStates(cli.config, { credentialState: async (server) => (await cli.auth()).credentialState(server) });
}

/**
 * Work that may take a while (connecting, a slow tool) says so on stderr after a second, and again
 * after each few seconds of silence, with how long it has waited and how to bound it.
 */
export async function slow<T>(cli: Cli, what: string, work: Promise<T>): Promise<T> {
	const started = Date.now();
	const first = setTimeout(() => cli.io.err(`pi-mcp: ${what}…\n`), 1000);
	const bound = cli.flags.timeout === undefined ? "--timeout <seconds> bounds it" : `bounded to ${cli.flags.timeout} s`;
	const again = setInterval(() => {
		const seconds = Math.round((Date.now() - started) / 1000);
		cli.io.err(`pi-mcp: still ${what} after ${seconds} s (${bound}; Ctrl+C stops)\n`);
	}, SILENCE_NOTICE_MS);
	try {
		return await work;
	} finally {
		clearTimeout(first);
		clearInterval(again);
	}
}

/** The entry of a named server, or a usage error naming the configured ones and close matches. */
export function entryOf(cli: Cli, name: string | undefined, command: string): ServerEntry {
	if (!name) throw new UsageError(`pi-mcp ${command}: name a server\n\n${HELP[command]}`, command);
	const entry = cli.config.servers.find((server) => server.name === name);
	if (!entry) {
		// The extension's message (it also names config files that could not be read), plus the CLI's hints.
		const close = closeMatches(
			name,
			cli.config.servers.map((server) => server.name),
		);
		const guess = close.length > 0 ? `; did you mean ${close.map((each) => `"${escapeName(each)}"`).join(" or ")}?` : "";
		const hint = cli.flags.approve ? "" : " (the project file is read only with --approve)";
		throw new UsageError(
			`pi-mcp: ${unknownServer(cli.config, name) ?? `unknown MCP server "${escapeName(name)}"`}${guess}${hint}`,
		);
	}
	if (!entry.config) throw new UsageError(`pi-mcp: ${entry.error ?? `server "${name}" has no usable configuration`}`);
	if (cli.shadowed.includes(name)) {
		cli.io.err(
			`pi-mcp: server "${name}" comes from the project file ${entry.source.path}, which replaces the user file's entry of that name\n`,
		);
	}
	return entry;
}
