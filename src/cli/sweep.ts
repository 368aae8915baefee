/**
 * No server process outlives a run: each carries this run's mark in its environment (`RUN_MARK`),
 * and `sweep` kills what still does. Each server runs in its own session, out of reach of the
 * terminal's Ctrl+C, and its children inherit the mark.
 */
import { readdirSync, readFileSync } from "node:fs";

/** The environment variable that marks every server process of one run. */
export const RUN_MARK = "PI_MCP_CLI_RUN";

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
 * also works from a signal handler on the way out).
 */
export function sweep(mark: string): number {
	if (process.platform !== "linux") return 0;
	const needle = Buffer.from(`${RUN_MARK}=${mark}\0`);
	const marked = processIds().filter((pid) => {
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
