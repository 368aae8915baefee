/**
 * What /proc says of a process: its state letter and start time, and which processes carry a mark in
 * their environment. The one zombie check (a zombie still answers signal 0 on Linux), shared by stdio
 * teardown and the credential lock's liveness test; the one scan for marked processes, shared by stdio
 * teardown and the shell's sweep on exit.
 */
import { readdirSync, readFileSync } from "node:fs";

/** A process's state letter and start time (clock ticks since boot) from /proc/<pid>/stat; `undefined` without one. */
export function processStat(pid: number): Readonly<{ state: string; startTime?: number }> | undefined {
	const stat = readOrNothing(`/proc/${pid}/stat`);
	if (stat === undefined) return undefined;
	// The command name (field 2) may hold spaces and parentheses: fields count from the last ")".
	const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
	const startTime = Number(fields[19]);
	return { state: fields[0] ?? "", startTime: Number.isSafeInteger(startTime) ? startTime : undefined };
}

/** A file's text, or undefined when it cannot be read (a process gone meanwhile). */
function readOrNothing(path: string): string | undefined {
	try {
		return readFileSync(path, "utf8");
	} catch {
		return undefined;
	}
}

/**
 * The other processes whose environment holds `name=value` (Linux; none elsewhere or when /proc cannot
 * be read). Synchronous, so that it also works from a signal handler on the way out.
 */
export function markedPids(name: string, value: string): number[] {
	if (process.platform !== "linux") return [];
	const needle = Buffer.from(`${name}=${value}\0`);
	const entries = ((): string[] => {
		try {
			return readdirSync("/proc");
		} catch {
			return [];
		}
	})();
	return entries
		.filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
		.filter((entry) => {
			try {
				return readFileSync(`/proc/${entry}/environ`).includes(needle);
			} catch {
				return false; // Gone meanwhile, or another user's.
			}
		})
		.map(Number);
}

/** Exited but not yet reaped (a zombie still answers signal 0 on Linux), or dead. */
export function exited(stat: Readonly<{ state: string }> | undefined): boolean {
	return stat?.state === "Z" || stat?.state === "X";
}
