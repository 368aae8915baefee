/**
 * Work that may take a while (connecting, a slow tool) says so on stderr after a second, and again
 * after each few seconds of silence, with how long it has waited and how to bound it.
 */
import type { Flags } from "./args.ts";
import type { CliIo } from "./io.ts";

/** Seconds of silence before a waiting step says it is still waiting. */
const SILENCE_NOTICE_MS = 5000;

export async function slow<T>(
	cli: Readonly<{ io: Pick<CliIo, "err">; flags: Pick<Flags, "timeout"> }>,
	what: string,
	work: Promise<T>,
): Promise<T> {
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
