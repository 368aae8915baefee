/**
 * `auto` for a stdio server at the cost of one start (issue 49): the resident starts beside the probe
 * sibling and hears nothing until the sibling has answered; one resident survives; a server that exits
 * when probed still works; a server that cannot run twice at once is started again once the sibling has
 * gone; a reconnect reuses the era found, with no sibling. Real fixture servers and processes; the lock once
 * through a real Pi.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { makeSandbox, runPiJson, toolResults } from "./helpers/pi.ts";
import { LEGACY_EXIT, pidAlive, readWire, SERVER, startedPids, type WireLine } from "./helpers/servers.ts";
import { openSession } from "./helpers/session.ts";

const node = process.execPath;
const STARTUP = new URL("./fixtures/startup.mjs", import.meta.url).pathname;
const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
	for (const cleanup of cleanups) await cleanup();
});

async function harness(servers: (log: string, dir: string) => Record<string, unknown>) {
	const opened = await openSession((dir) => servers(join(dir, "wire.log"), dir), "pi-mcp-auto-");
	cleanups.push(opened.close);
	return { ...opened, runtime: opened.session.runtime, log: join(opened.dir, "wire.log") };
}

/** A loopback port nothing listens on now. */
function freePort(): Promise<number> {
	const probe = createServer();
	return new Promise((resolve, reject) => {
		probe.once("error", reject);
		probe.listen(0, "127.0.0.1", () => {
			const address = probe.address();
			probe.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
		});
	});
}

const text = (result: { content?: readonly { type: string; text?: string }[] }) =>
	(result.content ?? []).map((block) => block.text ?? "").join("");

/** The processes that received `method`. */
const receivers = (wire: readonly WireLine[], method: string) =>
	new Set(wire.filter((l) => l.method === method).map((l) => l.pid));

// Each test has its own servers, directory and wire log, and none measures time: they run at once.
describe("auto for a stdio server, at the cost of one start", { concurrency: true }, () => {
	test("auto: the resident starts beside the probe sibling, before the probe is answered; one process survives", async () => {
		const h = await harness((log) => ({ fx: { command: node, args: [SERVER, "stdio"], env: { FIXTURE_LOG: log } } }));
		assert.equal(text(await h.runtime.call("fx", "echo", { text: "hi" })), "[modern] hi");
		assert.equal(h.runtime.status()[0]?.era, "modern");
		const wire = readWire(h.log);
		const pids = startedPids(wire);
		assert.equal(pids.length, 2, "the probe sibling and the resident");
		const resident = [...receivers(wire, "tools/list")];
		assert.equal(resident.length, 1);
		assert.deepEqual(pids.filter(pidAlive), resident, "only the resident survives the first call");
		// The sibling got the probe and nothing else.
		const sibling = pids.find((pid) => pid !== resident[0]);
		assert.deepEqual(
			wire.filter((line) => line.pid === sibling && line.method).map((line) => line.method),
			["server/discover"],
		);
		// The two starts overlap: the resident began before the sibling had the probe (its start line may be
		// written later on a loaded machine), and it heard nothing before the probe.
		const probe = wire.find((line) => line.pid === sibling && line.method === "server/discover")?.at ?? 0;
		const began = wire.find((line) => line.pid === resident[0] && line.event === "start")?.spawned ?? Number.POSITIVE_INFINITY;
		assert.ok(began <= probe, `the resident began ${began - probe} ms after the probe reached the sibling`);
		const heard = wire.find((line) => line.pid === resident[0] && line.method)?.at ?? 0;
		assert.ok(heard >= probe, "the resident heard nothing before the probe");
		await h.close();
		assert.equal(pids.some(pidAlive), false, "nothing survives teardown");
	});

	test("auto: a server that exits on a pre-initialize request still works, in the legacy era", async () => {
		const h = await harness((log) => ({ fragile: { command: node, args: [LEGACY_EXIT], env: { FIXTURE_LOG: log } } }));
		assert.equal(text(await h.runtime.call("fragile", "hello", {})), "hello from legacy");
		assert.equal(h.runtime.status()[0]?.era, "legacy");
		const wire = readWire(h.log);
		assert.equal(startedPids(wire).length, 2);
		assert.equal(startedPids(wire).filter(pidAlive).length, 1);
		assert.equal(receivers(wire, "initialize").size, 1);
		await h.close();
	});

	test("a reconnect reuses the era found: one start, no sibling, no probe", async () => {
		const h = await harness((log) => ({
			modern: { command: node, args: [SERVER, "stdio"], env: { FIXTURE_LOG: log } },
			legacy: { command: node, args: [SERVER, "stdio", "--legacy-only"], env: { FIXTURE_LOG: `${log}.legacy` } },
		}));
		for (const [name, log, era] of [
			["modern", h.log, "modern"],
			["legacy", `${h.log}.legacy`, "legacy"],
		] as const) {
			await h.runtime.call(name, "echo", { text: "a" });
			assert.equal(startedPids(readWire(log)).length, 2);
			await h.runtime.reset(name);
			assert.equal(text(await h.runtime.call(name, "echo", { text: "b" })), `[${era}] b`);
			const wire = readWire(log);
			assert.equal(startedPids(wire).length, 3, `${name}: the reconnect started one process`);
			const last = startedPids(wire).at(-1);
			const methods = wire.filter((line) => line.pid === last && line.method).map((line) => line.method);
			// A legacy server gets no `server/discover` at all; a modern one one request to the resident itself.
			assert.deepEqual(
				methods.slice(0, 2),
				era === "modern" ? ["server/discover", "tools/list"] : ["initialize", "notifications/initialized"],
			);
			assert.equal(h.runtime.status().find((s) => s.name === name)?.era, era);
		}
	});

	// The resident tries the lock only once the sibling holds it: it loses every time, and exits, or waits for
	// the lock (silent, its stdin unread) until the sibling, idle past its answer, is ended.
	for (const [loser, exitOnly, waits, told] of [
		["piped", false, false, ""],
		["piped", true, false, " (its stdin ended first: a lock removed only at exit is gone)"],
		["late", true, false, " (lost after the probe was answered: the sibling still waited for the resident's outcome)"],
		["piped", true, true, ""],
	] as const) {
		const what = waits
			? "the resident waits for the lock the sibling took: the answered sibling is ended after its idle time, and the resident goes on"
			: `a server that cannot run twice at once: the resident exits early, and starts again once the sibling has gone${told}`;
		test(what, async () => {
			const h = await harness((log, dir) => ({
				locked: {
					command: node,
					args: [STARTUP, "stdio"],
					env: {
						FIXTURE_LOG: log,
						FIXTURE_LOCK: join(dir, "server.lock"),
						FIXTURE_LOCK_LOSER: loser,
						...(exitOnly ? { FIXTURE_LOCK_EXIT_ONLY: "1" } : {}),
						...(waits ? { FIXTURE_LOCK_WAIT: "1" } : {}),
					},
				},
			}));
			assert.equal(text(await h.runtime.call("locked", "echo", { text: "x" })), "[modern] x");
			const status = h.runtime.status()[0];
			assert.equal(status?.state, "ready");
			assert.equal(status?.era, "modern", "the sibling's answer still sets the era");
			const wire = readWire(h.log);
			const pids = startedPids(wire);
			assert.equal(wire.filter((line) => line.event === "locked").length, 1, "the first resident found the lock held");
			assert.equal(pids.length, waits ? 2 : 3, waits ? "sibling and resident" : "sibling, resident, resident again");
			assert.equal(pids.filter(pidAlive).length, 1, "one resident survives");
			assert.equal(text(await h.runtime.call("locked", "echo", { text: "y" })), "[modern] y");
			await h.close();
			assert.equal(pids.some(pidAlive), false);
			assert.equal(existsSync(join(h.dir, "server.lock")), false);
		});
	}

	// Connected, the sibling is signalled at once; when the server must start again (its lock lost), once its grace
	// is over. Either way its whole group: through a wrapper that stays (no exec), the server is the sibling's
	// child, out of the SDK's reach.
	for (const locked of [false, true]) {
		test(`a sibling still running once its stdin has ended is signalled, its whole group${locked ? ", before the server starts again" : ""}: one process is left after the call`, async () => {
			const h = await harness((log, dir) => ({
				lingers: {
					command: "sh",
					args: ["-c", `"${node}" "${STARTUP}" stdio; true`],
					env: {
						FIXTURE_LOG: log,
						FIXTURE_LINGER: "1",
						...(locked ? { FIXTURE_LOCK: join(dir, "server.lock"), FIXTURE_LOCK_LOSER: "piped" } : {}),
					},
				},
			}));
			assert.equal(text(await h.runtime.call("lingers", "echo", { text: "x" })), "[modern] x");
			const pids = startedPids(readWire(h.log));
			assert.equal(pids.length, locked ? 3 : 2, locked ? "sibling, resident, resident again" : "sibling and resident");
			assert.equal(pids.filter(pidAlive).length, 1, "the sibling's server is gone");
			await h.close();
			assert.equal(pids.some(pidAlive), false);
		});
	}

	for (const guard of ["a lock file", "a port"] as const) {
		test(`a server that guards ${guard} works whichever process takes it first`, async () => {
			for (let round = 0; round < 3; round++) {
				const port = guard === "a port" ? await freePort() : undefined;
				const h = await harness((log, dir) => ({
					locked: {
						command: node,
						args: [STARTUP, "stdio"],
						env: { FIXTURE_LOG: log, ...(port ? { FIXTURE_PORT: String(port) } : { FIXTURE_LOCK: join(dir, "server.lock") }) },
					},
				}));
				assert.equal(text(await h.runtime.call("locked", "echo", { text: "x" })).endsWith("] x"), true);
				const pids = startedPids(readWire(h.log));
				assert.equal(pids.filter(pidAlive).length, 1, "one resident survives");
				await h.close();
				assert.equal(pids.some(pidAlive), false);
			}
		});
	}

	// The sibling loses the lock to the resident, and exits or waits for it: silent, its stdin unread, it reads as
	// legacy only at the probe's timeout.
	for (const waits of [false, true]) {
		for (const [flags, era, starts] of [
			[[], "legacy", 2],
			[["--modern-only"], "modern", 3],
		] as const) {
			const kind = flags.length === 0 ? "a dual-era server is used in legacy" : "a modern-only one starts again alone";
			test(`the sibling ${waits ? "waits for the lock the resident took, silent until the probe's timeout" : "loses the lock to the resident"}: ${kind}`, async () => {
				const h = await harness((log, dir) => ({
					locked: {
						command: node,
						args: [STARTUP, "stdio", ...flags],
						// The probe times out at half the request timeout, 10 s at most: 10 s left to connect after it,
						// which a loaded machine needs (a full suite's load delayed the spawns alone by 6 s).
						...(waits ? { requestTimeoutMs: 20_000 } : {}),
						env: {
							FIXTURE_LOG: log,
							FIXTURE_LOCK: join(dir, "server.lock"),
							FIXTURE_LOCK_LOSER: "discarded",
							// Removed at exit only: a waiting sibling that took it once the refused resident had gone would
							// leave it behind when signalled.
							...(waits ? { FIXTURE_LOCK_WAIT: "1", FIXTURE_LOCK_EXIT_ONLY: "1" } : {}),
						},
					},
				}));
				assert.equal(text(await h.runtime.call("locked", "echo", { text: "x" })), `[${era}] x`);
				assert.equal(h.runtime.status()[0]?.era, era);
				const wire = readWire(h.log);
				const pids = startedPids(wire);
				assert.equal(wire.filter((line) => line.event === "locked").length, 1, "the sibling found the lock held");
				assert.equal(pids.length, starts, "processes started");
				assert.equal(pids.filter(pidAlive).length, 1, "one resident survives");
				await h.close();
				assert.equal(pids.some(pidAlive), false);
				assert.equal(existsSync(join(h.dir, "server.lock")), false);
			});
		}
	}

	test("pinned to its era, a stdio server starts once", async () => {
		const h = await harness((log) => ({
			modern: { command: node, args: [SERVER, "stdio"], env: { FIXTURE_LOG: log }, protocolVersion: "2026-07-28" },
		}));
		assert.equal(text(await h.runtime.call("modern", "echo", { text: "p" })), "[modern] p");
		assert.equal(startedPids(readWire(h.log)).length, 1);
		await h.close();
	});
});

describe("in a real Pi", () => {
	test("first calls: 2 starts in auto, 1 pinned; a lock-guarding server starts again alone; later calls start nothing; none outlives Pi", async () => {
		const sandbox = await makeSandbox();
		cleanups.push(sandbox.cleanup);
		const logOf = (name: string) => join(sandbox.root, `${name}.log`);
		const lock = join(sandbox.root, "server.lock");
		const servers = {
			plain: { command: node, args: [SERVER, "stdio"], env: { FIXTURE_LOG: logOf("plain") } },
			pinned: { command: node, args: [SERVER, "stdio"], env: { FIXTURE_LOG: logOf("pinned") }, protocolVersion: "2026-07-28" },
			// The resident loses the lock to the probe sibling (its stderr is a pipe): it exits, and starts again alone.
			locked: {
				command: node,
				args: [STARTUP, "stdio"],
				env: { FIXTURE_LOG: logOf("locked"), FIXTURE_LOCK: lock, FIXTURE_LOCK_LOSER: "piped" },
			},
		};
		await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
		const call = (server: string, word: string) => ({
			tool: "mcp",
			args: { action: "call", server, tool: "echo", args: { text: word } },
		});
		const calls = [
			call("locked", "one"),
			call("locked", "two"),
			call("plain", "three"),
			call("pinned", "four"),
			call("plain", "five"),
		];
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			script: [...calls, { text: "done" }],
			prompt: "echo",
			timeoutMs: 60_000,
		});
		assert.equal(run.code, 0, run.stderr);
		assert.deepEqual(
			toolResults(run.events).map((result) => [result.isError, result.text]),
			["one", "two", "three", "four", "five"].map((word) => [false, `[modern] ${word}`]),
		);
		const locked = readWire(logOf("locked"));
		assert.equal(locked.filter((line) => line.event === "locked").length, 1, "the resident found the lock held");
		const starts = Object.fromEntries(Object.keys(servers).map((name) => [name, startedPids(readWire(logOf(name)))]));
		assert.deepEqual(
			Object.fromEntries(Object.entries(starts).map(([name, pids]) => [name, pids.length])),
			{ plain: 2, pinned: 1, locked: 3 },
			"auto: the sibling and the resident; pinned: the resident; locked: the resident again",
		);
		assert.deepEqual(Object.values(starts).flat().filter(pidAlive), [], "no server process outlives Pi");
		assert.equal(existsSync(lock), false, "the server ended its own way, removing its lock");
	});
});
