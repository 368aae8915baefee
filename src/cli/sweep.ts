/**
 * No server process outlives a run: each carries this run's mark in its environment (`RUN_MARK`),
 * and `sweep` kills what still does. Each server runs in its own session, out of reach of the
 * terminal's Ctrl+C, and its children inherit the mark.
 */
import { markedPids } from "../proc.ts";

/** The environment variable that marks every server process of one run. */
export const RUN_MARK = "PI_MCP_CLI_RUN";

/**
 * Kills every process that carries this run's mark (Linux: read from /proc, synchronously, so it
 * also works from a signal handler on the way out).
 */
export function sweep(mark: string): number {
	const marked = markedPids(RUN_MARK, mark);
	for (const pid of marked) {
		try {
			process.kill(pid, "SIGKILL");
		} catch {
			// Gone already.
		}
	}
	return marked.length;
}
