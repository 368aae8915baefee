/**
 * Processes as tests see them, from /proc: whether a pid is alive (a zombie is not), a process's
 * descendants and group, and the Pi processes a test started, killed with their tree when it exits.
 */
import { readdirSync, readFileSync } from "node:fs";

interface ProcStat {
	readonly pid: number;
	readonly state: string;
	readonly ppid: number;
	readonly pgrp: number;
}

function readStat(pid: number): ProcStat | undefined {
	try {
		const raw = readFileSync(`/proc/${pid}/stat`, "utf8");
		// "pid (comm) state ppid pgrp …"; comm may contain spaces and parentheses.
		const fields = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
		return { pid, state: fields[0] ?? "", ppid: Number(fields[1]), pgrp: Number(fields[2]) };
	} catch {
		return undefined;
	}
}

function allStats(): ProcStat[] {
	return readdirSync("/proc")
		.filter((name) => /^\d+$/.test(name))
		.flatMap((name) => {
			const s = readStat(Number(name));
			return s === undefined ? [] : [s];
		});
}

const isLive = (s: ProcStat): boolean => s.state !== "Z" && s.state !== "X";

/** Processes whose environment holds `needle` (a fixture's log path marks a test's servers); zombies not counted. */
export function processesWith(needle: string): number[] {
	return readdirSync("/proc")
		.filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
		.map(Number)
		.filter((pid) => {
			try {
				return (
					readFileSync(`/proc/${pid}/environ`, "utf8").includes(needle) &&
					!readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ")
				);
			} catch {
				return false;
			}
		});
}

/** True if the pid exists and is not a zombie. */
export function pidAlive(pid: number): boolean {
	const s = readStat(pid);
	return s !== undefined && isLive(s);
}

/** All live descendants of `pid` (children, grandchildren, …), from the ppid field of /proc/<pid>/stat. */
export function descendantPids(pid: number): number[] {
	const stats = allStats();
	const children = new Map<number, ProcStat[]>();
	for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
	const walk = (p: number): ProcStat[] => (children.get(p) ?? []).flatMap((c) => [c, ...walk(c.pid)]);
	return walk(pid)
		.filter(isLive)
		.map((s) => s.pid);
}

/** Live processes whose process group is `pgid` (Pi is spawned detached, so its pgid is its pid). */
export function processGroupPids(pgid: number): number[] {
	return allStats()
		.filter((s) => s.pgrp === pgid && isLive(s))
		.map((s) => s.pid);
}

export function killQuietly(pid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(pid, signal);
	} catch {
		// already gone
	}
}

/** SIGKILL the process group of `pid` and every live descendant of it. */
export function killTree(pid: number): void {
	const descendants = descendantPids(pid);
	killQuietly(-pid, "SIGKILL");
	killQuietly(pid, "SIGKILL");
	for (const d of descendants) killQuietly(d, "SIGKILL");
}

/** Pi processes spawned and not yet exited; killed when the test process exits (node:test turns SIGINT/SIGTERM into exit). */
export const liveChildren = new Set<number>();
process.once("exit", () => {
	for (const pid of liveChildren) killTree(pid);
});
