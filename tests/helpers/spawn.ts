/**
 * Starting the REAL Pi CLI for a test: where it is, a sandbox of its own (agent dir, cwd, HOME, a minimal
 * clean env), the faux model's script, and the spawn itself (detached: Pi's process group is its pid;
 * a timeout kills that group and every descendant still visible).
 */

import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FauxStep } from "../fixtures/faux.ts";
import { shareLoaderCaches } from "./caches.ts";

export type { FauxStep as Step } from "../fixtures/faux.ts";

// ---------------------------------------------------------------------------------------------------------------
// Paths

function piCliPath(): string {
	const entry = fileURLToPath(import.meta.resolve("@earendil-works/pi-coding-agent"));
	// entry = <pkg>/dist/index.js; walk up to the package.json that names the package.
	const find = (dir: string): string => {
		const pkgFile = join(dir, "package.json");
		const pkg: unknown = (() => {
			try {
				return JSON.parse(readFileSync(pkgFile, "utf8"));
			} catch {
				return undefined;
			}
		})();
		if (isRecord(pkg) && pkg.name === "@earendil-works/pi-coding-agent") {
			const bin = pkg.bin;
			const rel = typeof bin === "string" ? bin : isRecord(bin) && typeof bin.pi === "string" ? bin.pi : undefined;
			if (rel === undefined) throw new Error(`${pkgFile} has no bin.pi`);
			return join(dir, rel);
		}
		const parent = dirname(dir);
		if (parent === dir) throw new Error(`package.json of @earendil-works/pi-coding-agent not found above ${entry}`);
		return find(parent);
	};
	return find(dirname(entry));
}

/** Absolute path of the Pi CLI entry (package `bin.pi`, i.e. `dist/bundle/cli.js`); run it with `process.execPath`. */
export const PI_CLI: string = piCliPath();
/** The test-only scripted provider extension. */
export const FAUX_EXT: string = fileURLToPath(new URL("../fixtures/faux.ts", import.meta.url));
/** The harness probe extension (`probe_echo` tool, `/probe` command). */
export const PROBE_EXT: string = fileURLToPath(new URL("../fixtures/probe-ext.ts", import.meta.url));
export const FAUX_MODEL = "faux/faux-1";

// ---------------------------------------------------------------------------------------------------------------
// Sandbox

export interface Sandbox {
	/** Temp root holding everything below (and the faux script files). */
	readonly root: string;
	/** PI_CODING_AGENT_DIR (settings.json, mcp.json, trust.json, auth.json …). */
	readonly agentDir: string;
	/** Working directory of the Pi process (the "project"). */
	readonly cwd: string;
	/** HOME of the Pi process. */
	readonly home: string;
	/** Minimal clean environment for Pi. */
	readonly env: Readonly<Record<string, string>>;
	/** Remove the temp root (idempotent). */
	cleanup(): Promise<void>;
}

export async function makeSandbox(extraEnv: Readonly<Record<string, string>> = {}): Promise<Sandbox> {
	const root = await mkdtemp(join(tmpdir(), "pi-harness-"));
	const agentDir = join(root, "agent");
	const cwd = join(root, "proj");
	const home = join(root, "home");
	await Promise.all([agentDir, cwd, home].map((d) => mkdir(d, { recursive: true })));
	await shareLoaderCaches(root);
	const env: Record<string, string> = {
		PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
		HOME: home,
		PI_CODING_AGENT_DIR: agentDir,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		...extraEnv,
	};
	return {
		root,
		agentDir,
		cwd,
		home,
		env,
		cleanup: () => rm(root, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 }),
	};
}

// ---------------------------------------------------------------------------------------------------------------
// Wire records

import { isRecord } from "./events.ts";
import { killQuietly, killTree, liveChildren, processGroupPids } from "./processes.ts";

export interface Spawned {
	readonly child: ChildProcess;
	readonly pid: number;
	readonly stderr: () => string;
	/** Resolves on exit with the code/signal and the still-alive members of Pi's process group (then killed). */
	readonly exited: Promise<ExitInfo>;
	readonly kill: () => void;
}

export interface ExitInfo {
	readonly code: number | null;
	readonly signal: NodeJS.Signals | null;
	/** Processes still alive in Pi's process group right after it exited (they have been SIGKILLed since). */
	readonly leftoverPids: readonly number[];
}

export function spawnPi(argv: readonly string[], sandbox: Sandbox, env: Readonly<Record<string, string>>): Spawned {
	const child = spawn(process.execPath, [PI_CLI, ...argv], {
		cwd: sandbox.cwd,
		env: { ...sandbox.env, ...env },
		stdio: ["pipe", "pipe", "pipe"],
		detached: true,
	});
	child.on("error", () => {
		// Spawn failures leave `pid` undefined (thrown below); kill errors on a dead process are irrelevant.
	});
	const pid = child.pid;
	if (pid === undefined) throw new Error(`failed to spawn ${process.execPath} ${PI_CLI}`);
	liveChildren.add(pid);
	const errChunks: string[] = [];
	child.stderr?.setEncoding("utf8");
	child.stderr?.on("data", (c: string) => errChunks.push(c));
	child.stdin?.on("error", () => {
		// EPIPE after Pi exited: reported through the exit code.
	});
	// "exit" can come before the last stderr chunk is read: the result waits for stderr to close too (after
	// the leftovers, which could hold it, are killed), so `stderr()` is whole once `exited` resolves. The
	// timer only guards against a pipe some stray process keeps open.
	const stderrClosed = new Promise<void>((resolve) => child.stderr?.once("close", () => resolve()));
	const exited = new Promise<ExitInfo>((resolve) => {
		child.once("exit", (code, signal) => {
			const leftoverPids = processGroupPids(pid);
			for (const p of leftoverPids) killQuietly(p, "SIGKILL");
			liveChildren.delete(pid);
			const guard: { id?: NodeJS.Timeout } = {};
			const stray = new Promise<void>((done) => {
				guard.id = setTimeout(done, 5000);
			});
			void Promise.race([stderrClosed, stray]).then(() => {
				clearTimeout(guard.id);
				resolve({ code, signal, leftoverPids });
			});
		});
	});
	return { child, pid, stderr: () => errChunks.join(""), exited, kill: () => killTree(pid) };
}

/** Error thrown when a helper timed out; Pi and its tree were killed. */
export class PiTimeoutError extends Error {
	override readonly name = "PiTimeoutError";
	readonly stdout: string;
	readonly stderr: string;
	constructor(message: string, stdout: string, stderr: string) {
		super(`${message}\n--- stderr (tail) ---\n${stderr.slice(-4000)}\n--- stdout (tail) ---\n${stdout.slice(-4000)}`);
		this.stdout = stdout;
		this.stderr = stderr;
	}
}

/** Writes the faux model's script for one run (a name of its own: runs of one sandbox never share one). */
export async function writeScript(sandbox: Sandbox, script: readonly FauxStep[]): Promise<string> {
	const file = join(sandbox.root, `faux-script-${process.pid}-${randomUUID()}.json`);
	await writeFile(file, JSON.stringify(script));
	return file;
}

/** Pi's arguments: the mode, no session, the faux model, extra args, then faux.ts and the extensions. */
export function piArgs(
	mode: readonly string[],
	opts: Readonly<{ args?: readonly string[]; extensions: readonly string[] }>,
): string[] {
	return [
		...mode,
		"--no-session",
		"--model",
		FAUX_MODEL,
		...(opts.args ?? []),
		"-e",
		FAUX_EXT,
		...opts.extensions.flatMap((e) => ["-e", e]),
	];
}
