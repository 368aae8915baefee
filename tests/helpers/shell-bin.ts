/**
 * `pi-mcp` as a user runs it: `node bin/pi-mcp.mjs …` in its own process (jiti's load, the signal
 * handlers, the sweep on the way out). Only for what proves the binary itself; every other shell test
 * runs `main()` in process (shell.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { ShellPlace, ShellResult } from "./shell.ts";

export const BIN = new URL("../../bin/pi-mcp.mjs", import.meta.url).pathname;

export type BinStarted = Readonly<{
	child: ChildProcess;
	/** Resolves when the process has closed; `code` is null when a signal ended it. */
	done: Promise<Omit<ShellResult, "code"> & Readonly<{ code: number | null }>>;
	/** Resolves once stdout (so far or later) holds `pattern`; rejects if the process ends first. */
	printed: (pattern: RegExp) => Promise<string>;
}>;

/** Starts `pi-mcp <args>` in `place` (TMPDIR in its root); stdin a pipe (`child.stdin`); killed after `limitMs`. */
export function startBin(
	place: ShellPlace,
	args: readonly string[],
	env: Readonly<Record<string, string>> = {},
	limitMs = 60_000,
): BinStarted {
	const child = spawn(process.execPath, [BIN, ...args], {
		cwd: place.cwd,
		env: { ...place.env, ...(place.root ? { TMPDIR: place.root } : {}), ...env },
		stdio: ["pipe", "pipe", "pipe"],
	});
	const out: Buffer[] = [];
	const err: Buffer[] = [];
	child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
	child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
	const stdout = () => Buffer.concat(out).toString("utf8");
	const timer = setTimeout(() => child.kill("SIGKILL"), limitMs);
	const done = new Promise<Omit<ShellResult, "code"> & Readonly<{ code: number | null }>>((resolve) =>
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve({ code, stdout: stdout(), stderr: Buffer.concat(err).toString("utf8") });
		}),
	);
	const printed = (pattern: RegExp) =>
		new Promise<string>((resolve, reject) => {
			const check = () => {
				const found = pattern.exec(stdout())?.[0];
				if (found === undefined) return;
				child.stdout?.off("data", check);
				resolve(found);
			};
			child.stdout?.on("data", check);
			void done.then(() => {
				check();
				reject(new Error(`${pattern} never appeared on stdout: ${stdout()}`));
			});
			check();
		});
	return { child, done, printed };
}

/** Runs `pi-mcp <args>` to its end, stdin closed. */
export function runBin(place: ShellPlace, args: readonly string[], env: Readonly<Record<string, string>> = {}) {
	const started = startBin(place, args, env);
	started.child.stdin?.end();
	return started.done;
}
