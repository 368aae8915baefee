/**
 * `pi-mcp` run in the test's own process: `main()` of `src/cli/main.ts` with a `CliIo` that captures what
 * it writes, as `bin/pi-mcp.mjs` runs it but without a Node process and jiti's load per command (about a
 * second of CPU each). The servers it starts are real processes, swept after each command by the run's
 * mark as the binary does. What proves the binary itself spawns `bin/pi-mcp.mjs` (tests/cli*.test.ts).
 * (The same call shape as `shell()` of a fuller in-process runner: one can replace the other.)
 */
import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import { main, sweep } from "../../src/cli/main.ts";

/** Where a command runs: a sandbox of `makeSandbox` (its `root` becomes `TMPDIR`, as a spawned one had). */
export type ShellPlace = Readonly<{ env: Readonly<Record<string, string>>; cwd: string; root?: string }>;

export type ShellResult = Readonly<{ code: number; stdout: string; stderr: string }>;

/** Runs `pi-mcp <args>` in process; stdin is a pipe holding `stdin` (empty by default) that then ends. */
export async function shell(
	place: ShellPlace,
	args: readonly string[],
	options: Readonly<{ stdin?: string; env?: Readonly<Record<string, string>> }> = {},
): Promise<ShellResult> {
	const out: string[] = [];
	const err: string[] = [];
	const mark = randomUUID();
	const io = {
		out: (text: string) => void out.push(text),
		err: (text: string) => void err.push(text),
		stdin: Readable.from([options.stdin ?? ""]),
		env: { ...place.env, ...(place.root ? { TMPDIR: place.root } : {}), ...options.env },
		cwd: place.cwd,
	};
	try {
		const code = await main(args, io, undefined, mark);
		return { code, stdout: out.join(""), stderr: err.join("") };
	} finally {
		sweep(mark);
	}
}
