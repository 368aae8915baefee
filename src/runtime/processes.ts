/**
 * Processes of stdio servers: `setsid` puts each in its own process group so that teardown reaches
 * wrappers' children (npx); what escapes the group (the SDK's probe sibling and its children) is
 * found by an owner mark in its environment. A process's liveness is read in `proc.ts` (shared with
 * the credential lock).
 */
import { existsSync } from "node:fs";
import { once, sleep } from "../async.ts";
import { errorCode } from "../errors.ts";
import { exited, markedPids, processStat } from "../proc.ts";

/** Environment variable that marks every process of one stdio connection (probe sibling included). */
export const OWNER_ENV = "PI_MCP_OWNER";

/** `env`, which a stdio server runs through after `setsid` (it execs: same process) to carry the owner mark in its command line. */
export const ENV_BINARY = "/usr/bin/env";

/** The `setsid` binary on Linux, else null (elsewhere the child's own pid is all we kill). */
export const setsid = once((): string | null =>
	process.platform === "linux" && existsSync(ENV_BINARY)
		? (["/usr/bin/setsid", "/bin/setsid"].find((path) => existsSync(path)) ?? null)
		: null,
);

function signal(target: number, name: NodeJS.Signals | 0): boolean {
	try {
		process.kill(target, name);
		return true;
	} catch (error) {
		return name === 0 && errorCode(error) === "EPERM";
	}
}

/** SIGTERM at once, without waiting: a process group (a stdio server under `setsid`), else one process. */
export function hangUp(pid: number): void {
	signal(setsid() ? -pid : pid, "SIGTERM");
}

/** Whether `done` holds within `tries` more checks, `ms` apart. */
async function gone(done: () => boolean, tries: number, ms = 50): Promise<boolean> {
	if (done()) return true;
	if (tries <= 0) return false;
	await sleep(ms);
	return gone(done, tries - 1, ms);
}

/** SIGTERM the group, give it a moment, then SIGKILL whatever is left. */
async function killGroup(pgid: number | undefined): Promise<void> {
	if (pgid === undefined || !signal(-pgid, 0)) return;
	signal(-pgid, "SIGTERM");
	if (await gone(() => !signal(-pgid, 0), 20)) return;
	signal(-pgid, "SIGKILL");
}

const running = (pid: number) => {
	try {
		process.kill(pid, 0);
	} catch {
		return false;
	}
	return !exited(processStat(pid));
};

/** Kills the connection's process group, then any process still carrying its owner mark. */
export async function killAll(pgid: number | undefined, owner: string | undefined): Promise<void> {
	await killGroup(pgid);
	if (owner === undefined) return;
	// What is left of the connection after its group was killed: the SDK's probe sibling lives in a group
	// we never learn, and its children too (Linux only; elsewhere the group kill is all we do).
	const left = markedPids(OWNER_ENV, owner);
	for (const pid of left) signal(pid, "SIGKILL");
	// Return only once they are gone (a zombie waiting for its reaper counts as gone).
	await gone(() => !left.some(running), 20, 25);
}
