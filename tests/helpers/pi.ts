/**
 * Headless harness for the REAL Pi CLI (`@earendil-works/pi-coding-agent` 1.6) driven by the scripted faux model
 * (tests/fixtures/faux.ts). Every run gets its own sandbox (agent dir, cwd, HOME) and a minimal clean env.
 *
 * Processes: Pi is spawned `detached` (its own process group, pgid = pid). On a timeout the helper SIGKILLs that
 * group plus every descendant it can still see, then rejects. After Pi exits, processes still alive in its process
 * group are reported as `leftoverPids` (so a test can assert the product cleaned up) and then SIGKILLed, so the
 * harness never leaves anything behind. A child that moved to another process group (setsid / detached spawn)
 * escapes this net once Pi has exited: check `descendantPids(pi.pid)` while Pi is still running.
 */
export * from "./events.ts";
export * from "./processes.ts";
export * from "./rpc.ts";
export * from "./spawn.ts";

import { rm } from "node:fs/promises";
import type { FauxStep } from "../fixtures/faux.ts";
import { type JsonEvent, JsonlSplitter } from "./events.ts";
import { pidAlive } from "./processes.ts";
import { type ExitInfo, PiTimeoutError, piArgs, type Sandbox, spawnPi, writeScript } from "./spawn.ts";
// ---------------------------------------------------------------------------------------------------------------
// One-shot runs: JSON and print mode

export interface RunOptions {
	readonly sandbox: Sandbox;
	/** Extensions to load after faux.ts (`-e`). */
	readonly extensions: readonly string[];
	readonly script: readonly FauxStep[];
	readonly prompt: string;
	/** Further messages after `prompt`, each its own turn in order (print and JSON modes run them one by one). */
	readonly morePrompts?: readonly string[];
	/** Extra CLI args, placed before the `-e` list (e.g. `--approve`, `--no-approve`, `-ne`, `--no-mcp`). */
	readonly args?: readonly string[];
	/** Extra env on top of `sandbox.env`. */
	readonly env?: Readonly<Record<string, string>>;
	/** Default 30 s. On timeout Pi's tree is killed and the promise rejects with PiTimeoutError. */
	readonly timeoutMs?: number;
}

export interface PrintResult extends ExitInfo {
	readonly stdout: string;
	readonly stderr: string;
	readonly durationMs: number;
}

export interface JsonResult extends PrintResult {
	readonly events: readonly JsonEvent[];
	/** stdout lines that were not JSON records (should be empty). */
	readonly junk: readonly string[];
}

async function runOnce(mode: readonly string[], opts: RunOptions): Promise<PrintResult> {
	const scriptFile = await writeScript(opts.sandbox, opts.script);
	const argv = [...piArgs(mode, opts), opts.prompt, ...(opts.morePrompts ?? [])];
	const started = performance.now();
	const pi = spawnPi(argv, opts.sandbox, { ...opts.env, PI_FAUX_SCRIPT: scriptFile });
	pi.child.stdin?.end();
	const outChunks: string[] = [];
	pi.child.stdout?.setEncoding("utf8");
	pi.child.stdout?.on("data", (c: string) => outChunks.push(c));
	const stdoutClosed = new Promise<void>((resolve) => pi.child.stdout?.once("close", () => resolve()));
	const timeoutMs = opts.timeoutMs ?? 30_000;
	const timer = { id: undefined as NodeJS.Timeout | undefined, fired: false };
	const timedOut = new Promise<never>((_, reject) => {
		timer.id = setTimeout(() => {
			timer.fired = true;
			pi.kill();
			// Reject only once Pi is gone, so callers never see a process that is still dying.
			void pi.exited.then(() =>
				reject(new PiTimeoutError(`Pi ${mode.join(" ")} timed out after ${timeoutMs} ms`, outChunks.join(""), pi.stderr())),
			);
		}, timeoutMs);
	});
	try {
		const exit = await Promise.race([
			Promise.all([pi.exited, stdoutClosed]).then(([e]) => (timer.fired ? timedOut : e)),
			timedOut,
		]);
		return {
			...exit,
			stdout: outChunks.join(""),
			stderr: pi.stderr(),
			durationMs: Math.round(performance.now() - started),
		};
	} finally {
		clearTimeout(timer.id);
		if (pidAlive(pi.pid)) pi.kill();
		await rm(scriptFile, { force: true });
	}
}

/** `node PI_CLI --mode json --no-session --model faux/faux-1 [args] -e faux.ts -e <ext>… <prompt>` in sandbox.cwd. */
export async function runPiJson(opts: RunOptions): Promise<JsonResult> {
	const result = await runOnce(["--mode", "json"], opts);
	const events: JsonEvent[] = [];
	const junk: string[] = [];
	const splitter = new JsonlSplitter(
		(r) => events.push(r),
		(l) => junk.push(l),
	);
	splitter.push(result.stdout);
	splitter.end();
	return { ...result, events, junk };
}

/** Same as runPiJson with `-p` (print mode): stdout is the final assistant text. */
export function runPiPrint(opts: RunOptions): Promise<PrintResult> {
	return runOnce(["-p"], opts);
}
