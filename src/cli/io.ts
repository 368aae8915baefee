/**
 * What a command gets from its process and gives back: the streams and environment (`CliIo`), the
 * exit codes scripts branch on, where Pi keeps its files, and the shell's words for a next step.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import type { Transports } from "../contracts.ts";
import type { Words } from "../errors.ts";
import { VERSION } from "../session.ts";

/**
 * Exit codes: scripts branch on these. `usage` is a usage or configuration error: an unknown command,
 * option, server, tool, prompt or argument name, a missing argument, an entry or variable to fix; an
 * edit that exits 2 wrote nothing. `failed` is anything else that went wrong (an import that wrote
 * some entries and skipped others too).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, signIn: 3, interrupted: 130 } as const;

export type CliIo = Readonly<{
	out: (text: string) => void;
	err: (text: string) => void;
	stdin: NodeJS.ReadableStream;
	env: Readonly<Record<string, string | undefined>>;
	cwd: string;
	/** Where server connections come from; defaults to the real ones (a test hands in the SDK's in-memory pairs). */
	transports?: Transports;
	/** The run's mark, put on every server process it starts (`main` sets it; see `sweep`). */
	mark?: string;
}>;

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
