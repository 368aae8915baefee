/** Real fixture MCP servers for tests: paths, an HTTP launcher, and the wire log reader. */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, watch } from "node:fs";
import { dirname, join } from "node:path";

export const FIXTURES = new URL("../fixtures/", import.meta.url).pathname;
export const SERVER = join(FIXTURES, "server.mjs");
export const LEGACY_EXIT = join(FIXTURES, "legacy-exit-on-probe.mjs");
export const HANG = join(FIXTURES, "hang.mjs");
export const CRASH = join(FIXTURES, "crash.mjs");
/** Hostile names and listings (tests/fixtures/hostile.mjs). */
export const HOSTILE = join(FIXTURES, "hostile.mjs");

/** `at`: when a request arrived; `spawned`: when a process began (both epoch ms). */
export type WireLine = Readonly<{ pid: number; method?: string; event?: string; at?: number; spawned?: number }>;

/** Every line the fixture processes appended to a FIXTURE_LOG file. */
export function readWire(path: string): WireLine[] {
	if (!existsSync(path)) return [];
	return readFileSync(path, "utf8")
		.split("\n")
		.filter(Boolean)
		.map((line) => JSON.parse(line) as WireLine);
}

/**
 * Resolves with the wire log once `until` holds for it: woken by file-system events on the log's
 * directory (no polling, no sleeping). Rejects after `timeoutMs`, naming what it waited for.
 */
export function waitForWire(
	path: string,
	until: (lines: WireLine[]) => boolean,
	what: string,
	timeoutMs = 20_000,
): Promise<WireLine[]> {
	return new Promise((resolve, reject) => {
		const watcher = watch(dirname(path));
		const done = (error?: Error) => {
			clearTimeout(timer);
			watcher.close();
			if (error) reject(error);
			else resolve(readWire(path));
		};
		const check = () => {
			if (until(readWire(path))) done();
		};
		const timer = setTimeout(() => done(new Error(`the wire log never showed ${what}`)), timeoutMs);
		watcher.on("change", check);
		watcher.on("error", done);
		check();
	});
}

export const count = (lines: readonly WireLine[], key: string): number =>
	lines.filter((line) => line.method === key || line.event === key).length;

export const startedPids = (lines: readonly WireLine[]): number[] =>
	lines.filter((line) => line.event === "start").map((line) => line.pid);

export { pidAlive } from "./processes.ts";

export type HttpFixture = Readonly<{ url: string; child: ChildProcess; stop(): Promise<void> }>;

/** Starts `server.mjs http` on 127.0.0.1 and resolves with its URL. */
export function startHttpFixture(flags: readonly string[] = [], env: Record<string, string> = {}): Promise<HttpFixture> {
	const child = spawn(process.execPath, [SERVER, "http", ...flags], {
		env: { ...process.env, ...env },
		stdio: ["ignore", "pipe", "pipe"],
	});
	return new Promise((resolve, reject) => {
		const chunks: string[] = [];
		const timer = setTimeout(() => {
			child.kill("SIGKILL");
			reject(new Error("HTTP fixture did not start"));
		}, 10_000);
		child.stdout?.on("data", (chunk: Buffer) => {
			chunks.push(chunk.toString());
			const line = chunks.join("").split("\n")[0];
			if (!line || !chunks.join("").includes("\n")) return;
			clearTimeout(timer);
			const { url } = JSON.parse(line) as { url: string };
			resolve({
				url,
				child,
				stop: () =>
					new Promise<void>((done) => {
						if (child.exitCode !== null || child.signalCode !== null) return done();
						child.once("exit", () => done());
						child.kill("SIGTERM");
					}),
			});
		});
		child.once("exit", (code) => {
			clearTimeout(timer);
			reject(new Error(`HTTP fixture exited with ${code}`));
		});
	});
}
