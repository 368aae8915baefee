/**
 * What every command that reads servers works with (`openShellRun`): the configuration, the runtime, the
 * session, auth loaded on first use, the files a run saves, and the guarantees of a run: `--timeout`
 * over each server's own, and no server process left behind however the run ends (each carries this
 * run's mark; `sweep.ts`).
 */
import { randomUUID } from "node:crypto";
import { credentialStates } from "../catalog/status.ts";
import { readForEdit } from "../config/edit.ts";
import { loadConfig } from "../config.ts";
import type { Auth, CredentialState, Runtime, Session } from "../contracts.ts";
import type { ConfigSnapshot, ServerEntry } from "../schema.ts";
import { SessionOwner } from "../session.ts";
import type { Flags } from "./args.ts";
import { type SavedFiles, savedFiles } from "./files.ts";
import { agentDirOf, type CliIo, SHELL_WORDS } from "./io.ts";
import { RUN_MARK, sweep } from "./sweep.ts";

// Where these lived before the context was split by concern; kept so that code written against it still builds.
export { extensionOf } from "./files.ts";
export { agentDirOf, type CliIo, EXIT, SHELL_WORDS, version } from "./io.ts";
export { entryOf } from "./names.ts";
export { slow } from "./slow.ts";
export { RUN_MARK, sweep } from "./sweep.ts";

/** What every command works with; `close` stops every server and listener. */
export type ShellRun = Readonly<{
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
	/** Where the run saves files (kept only with `--out`). */
	files: SavedFiles;
	auth: () => Promise<Auth>;
	/** Messages from completed or failed sign-ins. */
	onSignIn: (listener: (server: string, message: string, ok: boolean) => void) => void;
	signal: AbortSignal;
	close: () => Promise<void>;
}>;

export type OpenOptions = Readonly<{
	/** Marks every server process of this run (see `sweep`). */
	mark?: string;
	/** Servers to connect even where their entry is disabled (`disable <server> <tool>` lists its tools). */
	start?: readonly string[];
}>;

/** A server entry with this run's bounds: the run's mark in a stdio server's environment, `--timeout`. */
function forThisRun(entry: ServerEntry, mark: string, flags: Flags, start: readonly string[]): ServerEntry {
	const config = entry.config;
	if (!config) return entry;
	const bounded = flags.timeout === undefined ? config : { ...config, requestTimeoutMs: Math.round(flags.timeout * 1000) };
	const marked = bounded.transport === "stdio" ? { ...bounded, env: { ...bounded.env, [RUN_MARK]: mark } } : bounded;
	return { ...entry, config: marked, enabled: entry.enabled || start.includes(entry.name) };
}

/** Names of project entries that replace a user file's entry (an override entry only switches it). */
async function shadowedNames(agentDir: string, io: CliIo, config: ConfigSnapshot): Promise<readonly string[]> {
	const project = config.servers.filter((entry) => entry.source.kind === "project");
	if (project.length === 0) return [];
	const user = await readForEdit({ agentDir, cwd: io.cwd, env: io.env }, "user").catch(() => undefined);
	return project.map((entry) => entry.name).filter((name) => user !== undefined && name in user.servers);
}

export async function openShellRun(
	io: CliIo,
	flags: Flags,
	signal: AbortSignal,
	markOrOptions: string | OpenOptions = {},
): Promise<ShellRun> {
	const { mark = io.mark ?? randomUUID(), start = [] } =
		typeof markOrOptions === "string" ? { mark: markOrOptions } : markOrOptions;
	const agentDir = agentDirOf(io.env);
	const config = await loadConfig({ agentDir, cwd: io.cwd, trusted: flags.approve, env: io.env });
	const listeners: ((server: string, message: string, ok: boolean) => void)[] = [];
	const files = savedFiles(flags.out);
	const built = new SessionOwner({
		config,
		env: io.env,
		agentDir,
		overflow: files,
		notify: (server, message, ok) => {
			for (const listener of listeners) listener(server, message, ok);
		},
		entry: (entry) => forThisRun(entry, mark, flags, start),
		words: SHELL_WORDS,
		transports: io.transports,
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
		files,
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
export function credentialsOf(cli: ShellRun): Promise<ReadonlyMap<string, CredentialState>> {
	return credentialStates(cli.config, { credentialState: async (server) => (await cli.auth()).credentialState(server) });
}
