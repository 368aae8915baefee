/**
 * What /proc says of a process: its state letter and start time. The one zombie check (a zombie
 * still answers signal 0 on Linux), shared by stdio teardown and the credential lock's liveness test.
 */
import { readFileSync } from "node:fs";

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

/** Exited but not yet reaped (a zombie still answers signal 0 on Linux), or dead. */
export function exited(stat: Readonly<{ state: string }> | undefined): boolean {
	return stat?.state === "Z" || stat?.state === "X";
}
