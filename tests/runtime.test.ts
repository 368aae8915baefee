/**
 * The runtime against real SDK v2 fixture servers (both eras, stdio and Streamable HTTP on
 * 127.0.0.1): negotiation, coalescing, independent calls, latched failures, teardown.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import type { Runtime } from "../src/contracts.ts";
import { CallFailed, SetupFailed } from "../src/errors.ts";
import { duration } from "../src/runtime/failures.ts";
import { sdkConsole } from "../src/sdk.ts";
import {
	CRASH,
	count,
	HANG,
	type HttpFixture,
	LEGACY_EXIT,
	pidAlive,
	readWire,
	SERVER,
	startedPids,
	startHttpFixture,
	waitForWire,
} from "./helpers/servers.ts";
import { openSession } from "./helpers/session.ts";

type Harness = Readonly<{ dir: string; log: string; runtime: Runtime; cleanup(): Promise<void> }>;

const node = process.execPath;
const ROOT = new URL("..", import.meta.url).pathname;
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
	await Promise.all(cleanups.map((cleanup) => cleanup()));
});

/** Writes an mcp.json, loads it the way the extension does, and builds a runtime. */
async function harness(
	servers: (log: string, dir: string) => Record<string, unknown>,
	env: Record<string, string | undefined> = process.env,
): Promise<Harness> {
	const opened = await openSession((dir) => servers(join(dir, "wire.log"), dir), { prefix: "pi-mcp-runtime-", env });
	for (const entry of opened.session.config.servers) assert.equal(entry.error, undefined, entry.error);
	cleanups.push(opened.close);
	return { dir: opened.dir, log: join(opened.dir, "wire.log"), runtime: opened.session.runtime, cleanup: opened.close };
}

const stdio = (log: string, extra: Record<string, unknown> = {}, flags: string[] = []) => ({
	command: node,
	args: [SERVER, "stdio", ...flags],
	env: { FIXTURE_LOG: log },
	...extra,
});

const text = (result: { content?: readonly { type: string; text?: string }[] }) =>
	(result.content ?? []).map((block) => block.text ?? "").join("");

// Each test has its own servers and directory, and none measures time: the groups below run their tests at once,
// except "setup timeouts" (0.5 s and 1.5 s), which run alone.
describe("negotiation", { concurrency: true }, () => {
	test("stdio auto → modern, with exactly two processes spawned and one alive after", async () => {
		const h = await harness((log) => ({ fx: stdio(log) }));
		const result = await h.runtime.call("fx", "echo", { text: "hi" });
		assert.equal(text(result), "[modern] hi");
		const status = h.runtime.status().find((s) => s.name === "fx");
		assert.equal(status?.era, "modern");
		assert.equal(status?.protocolVersion, "2026-07-28");
		const pids = startedPids(readWire(h.log));
		assert.equal(pids.length, 2, "the probe sibling plus the resident process");
		assert.equal(pids.filter(pidAlive).length, 1, "only the resident survives");
		await h.cleanup();
		assert.equal(pids.some(pidAlive), false, "nothing survives teardown");
	});

	test("stdio auto → legacy for a legacy-only server, and for one that exits when probed", async () => {
		const h = await harness((log) => ({
			old: stdio(log, {}, ["--legacy-only"]),
			fragile: { command: node, args: [LEGACY_EXIT], env: { FIXTURE_LOG: log } },
		}));
		assert.equal(text(await h.runtime.call("old", "echo", { text: "x" })), "[legacy] x");
		assert.equal(text(await h.runtime.call("fragile", "hello", {})), "hello from legacy");
		const statuses = h.runtime.status();
		assert.equal(statuses.find((s) => s.name === "old")?.era, "legacy");
		assert.equal(statuses.find((s) => s.name === "fragile")?.era, "legacy");
		const wire = readWire(h.log);
		const fragilePids = [...new Set(wire.filter((line) => line.method === "hello" || line.event === "start").map((l) => l.pid))];
		assert.ok(fragilePids.length >= 2);
		await h.cleanup();
	});

	test("legacy mode does a plain handshake with one process", async () => {
		const h = await harness((log) => ({ fx: stdio(log, { protocolVersion: "legacy" }) }));
		assert.equal(text(await h.runtime.call("fx", "echo", { text: "y" })), "[legacy] y");
		const wire = readWire(h.log);
		assert.equal(startedPids(wire).length, 1);
		assert.equal(count(wire, "server/discover"), 0);
		assert.equal(count(wire, "initialize"), 1);
		await h.cleanup();
	});

	test("a pinned 2026-07-28 server that only speaks legacy gets a clear error", async () => {
		const h = await harness((log) => ({
			pinned: stdio(log, { protocolVersion: "2026-07-28" }, ["--legacy-only"]),
			fine: stdio(log, { protocolVersion: "2026-07-28" }),
		}));
		await assert.rejects(h.runtime.call("pinned", "echo", { text: "x" }), (error: Error) => {
			assert.ok(error instanceof SetupFailed);
			assert.match(error.message, /MCP server "pinned" failed to start: the server does not offer protocol 2026-07-28/);
			assert.match(error.message, /\/mcp reconnect pinned/);
			return true;
		});
		assert.equal(text(await h.runtime.call("fine", "echo", { text: "ok" })), "[modern] ok", "other servers unaffected");
		await h.cleanup();
	});

	describe("Streamable HTTP", () => {
		const fixtures: HttpFixture[] = [];
		after(async () => {
			await Promise.all(fixtures.map((fixture) => fixture.stop()));
		});

		test("auto → modern, auto → legacy, pin vs legacy-only", async () => {
			const modern = await startHttpFixture();
			const legacy = await startHttpFixture(["--legacy-only"]);
			fixtures.push(modern, legacy);
			const h = await harness(() => ({
				modern: { url: modern.url },
				legacy: { url: legacy.url },
				legacyMode: { url: modern.url, protocolVersion: "legacy" },
				pinned: { url: legacy.url, protocolVersion: "2026-07-28" },
			}));
			assert.equal(text(await h.runtime.call("modern", "echo", { text: "a" })), "[modern] a");
			assert.equal(text(await h.runtime.call("legacy", "echo", { text: "b" })), "[legacy] b");
			assert.equal(text(await h.runtime.call("legacyMode", "echo", { text: "c" })), "[legacy] c");
			await assert.rejects(h.runtime.call("pinned", "echo", { text: "d" }), /does not offer protocol 2026-07-28/);
			const byName = new Map(h.runtime.status().map((s) => [s.name, s]));
			assert.equal(byName.get("modern")?.era, "modern");
			assert.equal(byName.get("legacy")?.era, "legacy");
			assert.equal(byName.get("pinned")?.state, "failed");
			await h.cleanup();
		});
	});
});

describe("concurrency", { concurrency: true }, () => {
	// A call past its timeout, and progress that resets it: tests/fast/runtime-timers.test.ts (fake clock).
	test("a tool that asks for interactive input fails clearly on both eras; the connection keeps working", async () => {
		const h = await harness((log) => ({ modern: stdio(log), legacy: stdio(log, { protocolVersion: "legacy" }) }));
		await assert.rejects(h.runtime.call("modern", "needs-input", {}), (error: Error) => {
			assert.ok(error instanceof CallFailed);
			assert.match(error.message, /^tool "needs-input" on MCP server "modern" asked for interactive input/);
			return true;
		});
		const legacy = await h.runtime.call("legacy", "needs-input", {});
		assert.equal(legacy.isError, true);
		assert.match(text(legacy), /did not declare the required capability/);
		assert.equal(text(await h.runtime.call("modern", "echo", { text: "ok" })), "[modern] ok");
		await h.cleanup();
	});

	test("isError results are returned as results, and the session keeps working", async () => {
		const h = await harness((log) => ({ fx: stdio(log) }));
		const failed = await h.runtime.call("fx", "fail", { message: "nope" });
		assert.equal(failed.isError, true);
		assert.equal(text(failed), "nope");
		assert.equal(text(await h.runtime.call("fx", "add", { a: 2, b: 3 })), "5");
		await h.cleanup();
	});
});

/** Runs tests/fixtures/sdk-hooks-child.ts (two calls to `fx`, then its status) under the SDK hooks. */
async function underSdkHooks(env: Record<string, string>, requestTimeoutMs: number) {
	const dir = await mkdtemp(join(tmpdir(), "pi-mcp-sdk-hooks-"));
	cleanups.push(() => rm(dir, { recursive: true, force: true }));
	const log = join(dir, "wire.log");
	const server = { ...stdio(log), protocolVersion: "legacy", requestTimeoutMs };
	await writeFile(join(dir, "mcp.json"), JSON.stringify({ mcpServers: { fx: server } }));
	const hooks = pathToFileURL(join(ROOT, "tests/fixtures/sdk-hooks.mjs")).href;
	const register = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(hooks)});`;
	const child = spawnSync(node, ["--import", register, "--import", "tsx", join(ROOT, "tests/fixtures/sdk-hooks-child.ts"), dir], {
		cwd: ROOT,
		env: { ...process.env, ...env, NODE_OPTIONS: "" },
		encoding: "utf8",
		timeout: 60_000,
	});
	assert.equal(child.status, 0, child.stderr);
	const outcome = JSON.parse(child.stdout) as {
		calls: { text?: string; error?: string }[];
		status: { name: string; state: string; error?: string }[];
	};
	return { ...outcome, wire: existsSync(log) ? readWire(log) : [] };
}

describe("failures and teardown", { concurrency: true }, () => {
	test("a failed setup latches with the stderr tail; reset clears it", async () => {
		const h = await harness((_log, dir) => ({
			flaky: {
				command: "sh",
				args: ["-c", `test -f "${join(dir, "ready")}" && exec "${node}" "${SERVER}" || exec "${node}" "${CRASH}"`],
			},
			good: stdio(join(dir, "good.log")),
		}));
		const first = await h.runtime.call("flaky", "echo", { text: "x" }).catch((error: Error) => error);
		assert.ok(first instanceof SetupFailed);
		assert.match(
			first.message,
			/^MCP server "flaky" failed to start: the server exited with code 3 before the MCP handshake\.\n/,
		);
		assert.match(first.message, /fixture crash: missing API_KEY/);
		assert.equal(first.message.includes("\u001b"), false, "stderr escapes are stripped");
		assert.match(first.message, /\/mcp reconnect flaky/);
		await writeFile(join(h.dir, "ready"), "");
		const second = await h.runtime.call("flaky", "echo", { text: "x" }).catch((error: Error) => error);
		assert.equal(second, first, "the failure is latched: same error, no new attempt");
		assert.equal(h.runtime.status().find((s) => s.name === "flaky")?.state, "failed");
		assert.equal(text(await h.runtime.call("good", "echo", { text: "ok" })), "[modern] ok");
		await h.runtime.reset("flaky");
		assert.equal(h.runtime.status().find((s) => s.name === "flaky")?.state, "idle");
		assert.equal(text(await h.runtime.call("flaky", "echo", { text: "back" })), "[modern] back");
		await h.cleanup();
	});

	test("a server that dies after setup: the latched failure says how its process ended", async () => {
		const h = await harness((_log, dir) => ({ fx: { ...stdio(join(dir, "fx.log")), protocolVersion: "legacy" } }));
		const pid = Number(text(await h.runtime.call("fx", "pid", {})));
		process.kill(pid, "SIGKILL");
		const said = async (): Promise<string> => {
			for (let i = 0; i < 200; i++) {
				const status = h.runtime.status().find((s) => s.name === "fx");
				if (status?.state === "failed" && /killed by/.test(status.error ?? "")) return status.error ?? "";
				await new Promise((done) => setTimeout(done, 25));
			}
			return h.runtime.status().find((s) => s.name === "fx")?.error ?? "(no error)";
		};
		assert.match(await said(), /^MCP server "fx" closed the connection: it was killed by SIGKILL\./);
		const error = await h.runtime.call("fx", "echo", { text: "x" }).catch((e: Error) => e);
		assert.ok(error instanceof SetupFailed);
		assert.match(error.message, /killed by SIGKILL[\s\S]*\/mcp reconnect fx/);
		await h.cleanup();
	});

	test("an SDK that cannot load fails the setup once, naming the server, and latches it", async () => {
		// A damaged installation: Node cannot find the SDK's package. Before, the raw import error came
		// back for every call and the server stayed "connecting" for good.
		const { calls, status, wire } = await underSdkHooks({ BROKEN_SDK: "1" }, 5000);
		assert.equal(calls.length, 2);
		for (const call of calls) {
			assert.equal(call.text, undefined);
			assert.match(call.error ?? "", /^MCP server "fx" failed to start: pi-mcp could not load the MCP SDK \(/);
			assert.match(call.error ?? "", /Cannot find package '@modelcontextprotocol\/client-not-installed'/);
			assert.match(call.error ?? "", /Reinstall pi-mcp, then restart Pi\.$/);
		}
		assert.equal(calls[1]?.error, calls[0]?.error, "the second call gets the latched failure");
		assert.deepEqual(status, [{ name: "fx", state: "failed", error: calls[0]?.error }]);
		assert.equal(startedPids(wire).length, 0, "no server was spawned");
	});

	test("teardown kills the whole process group, grandchildren included", async () => {
		const h = await harness((log) => ({ fx: stdio(log, { env: { FIXTURE_LOG: log, FIXTURE_SPAWN_GRANDCHILD: "1" } }) }));
		await h.runtime.call("fx", "echo", { text: "x" });
		const wire = readWire(h.log);
		const grandchildren = wire.filter((line) => line.event === "grandchild").map((line) => line.pid);
		const resident = startedPids(wire).filter(pidAlive);
		assert.equal(resident.length, 1);
		assert.ok(grandchildren.some(pidAlive), "the resident's grandchild runs");
		await h.runtime.dispose();
		for (const pid of [...resident, ...grandchildren]) assert.equal(pidAlive(pid), false, `pid ${pid} survived teardown`);
		await h.cleanup();
	});

	test("shutdown during setup aborts it and leaves no process", async () => {
		const h = await harness((log) => ({
			silent: { command: node, args: [HANG], env: { FIXTURE_LOG: log }, protocolVersion: "legacy", requestTimeoutMs: 20_000 },
		}));
		const pending = h.runtime.call("silent", "x", {}).catch((error: Error) => error);
		// Shut down once the server process runs: setup has certainly started (and is stuck).
		await waitForWire(h.log, (lines) => startedPids(lines).length > 0, "the silent server starting");
		assert.equal(h.runtime.status()[0]?.state, "connecting");
		await h.runtime.dispose();
		const error = await pending;
		assert.ok(error instanceof Error);
		assert.match(error.message, /session ended/);
		for (const pid of startedPids(readWire(h.log))) assert.equal(pidAlive(pid), false);
		await h.cleanup();
	});

	test("a stdio child gets only the safe default environment plus its configured env", async () => {
		process.env.PI_MCP_TEST_LEAK = "should-not-leak";
		const h = await harness((log) => ({ fx: stdio(log, { env: { FIXTURE_LOG: log, GIVEN: "${PI_MCP_TEST_GIVEN}" } }) }), {
			...process.env,
			PI_MCP_TEST_GIVEN: "given-value",
		});
		assert.equal(text(await h.runtime.call("fx", "env", { name: "PI_MCP_TEST_LEAK" })), "<unset>");
		// The value arrived (the server echoes it), and as a configured secret (#48) it reaches nobody in clear.
		assert.equal(text(await h.runtime.call("fx", "env", { name: "GIVEN" })), "[redacted]");
		assert.equal(text(await h.runtime.call("fx", "env", { name: "PATH" })), process.env.PATH);
		delete process.env.PI_MCP_TEST_LEAK;
		await h.cleanup();
	});

	test("the SDK's console notices never reach the terminal; other console output still does", async () => {
		const h = await harness((log) => ({ fx: stdio(log) }));
		await h.runtime.call("fx", "echo", { text: "x" });
		const written: string[] = [];
		const stdoutWrite = process.stdout.write.bind(process.stdout);
		const stderrWrite = process.stderr.write.bind(process.stderr);
		const capture = (chunk: unknown) => {
			written.push(String(chunk));
			return true;
		};
		process.stdout.write = capture as typeof process.stdout.write;
		process.stderr.write = capture as typeof process.stderr.write;
		try {
			console.debug("Client.listTools() called but server does not advertise tools capability - returning empty list");
			console.warn("[mcp-sdk] excluding tool 'x' from tools/list: invalid x-mcp-header declaration");
			console.warn("ordinary warning");
		} finally {
			process.stdout.write = stdoutWrite;
			process.stderr.write = stderrWrite;
		}
		assert.deepEqual(
			written.map((line) => line.trim()),
			["ordinary warning"],
		);
		assert.ok(sdkConsole.notices().some((notice) => notice.startsWith("[mcp-sdk] excluding tool")));
		await h.cleanup();
	});
});

// Alone, one at a time: short setup timeouts (0.5 s, 1.5 s), which other tests running at once could eat into.
describe("setup timeouts", () => {
	test("setup is bounded by the timeout and the silent process is killed", async () => {
		const h = await harness((log) => ({
			silent: { command: node, args: [HANG], env: { FIXTURE_LOG: log }, protocolVersion: "legacy", requestTimeoutMs: 500 },
		}));
		await assert.rejects(
			h.runtime.call("silent", "x", {}),
			/MCP server "silent" failed to start: setup did not finish within 500 ms\./,
		);
		const pids = startedPids(readWire(h.log));
		assert.equal(pids.length, 1);
		assert.equal(pidAlive(pids[0] as number), false);
		await h.cleanup();
	});

	test("the setup timeout counts from the SDK's load: a slow load does not time a server out", async () => {
		// The SDK is held 6 s before it loads, in a child process (module hooks), and the server's
		// timeout is 4.5 s: counted from the call, the setup would time out while the SDK loads. Counted
		// from the load, 4.5 s leaves a loaded CI machine room for the start (1.5 s once failed there).
		const { calls, status, wire } = await underSdkHooks({ SLOW_SDK_MS: "6000" }, 4500);
		assert.deepEqual(calls, [{ text: "[legacy] after a slow load" }, { text: "[legacy] after a slow load" }]);
		assert.equal(status[0]?.state, "ready");
		assert.equal(startedPids(wire).length, 1, "one server for both calls");
		assert.equal(startedPids(wire).filter(pidAlive).length, 0, "the child's runtime ended its server");
	});
});

describe("what a failed setup says (issue 32, items 7, 8 and 10)", { concurrency: true }, () => {
	const firstLine = (error: unknown) => (error instanceof Error ? error.message.split("\n")[0] : String(error));
	const failure = (runtime: Runtime, name: string) =>
		runtime.tools(name).then(
			() => assert.fail(`${name} should fail to start`),
			(error: unknown) => {
				assert.ok(error instanceof SetupFailed, String(error));
				return error;
			},
		);
	/** A port nothing listens on: one the OS just handed out and took back. */
	const closedPort = () =>
		new Promise<number>((resolve) => {
			const server = createServer().listen(0, "127.0.0.1", () => {
				const address = server.address();
				server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
			});
		});

	test("the first line names the cause: not found, permission denied, exit code, connection refused at the URL", async () => {
		const port = await closedPort();
		const h = await harness((_log, dir) => ({
			missing: { command: join(dir, "no-such-server") },
			noexec: { command: join(dir, "not-executable") },
			exits: { command: node, args: ["-e", "process.exit(7)"] },
			refused: { url: `http://127.0.0.1:${port}/mcp?token=QUERYSECRET1234&x=1` },
			refusedLegacy: { url: `http://127.0.0.1:${port}/mcp`, protocolVersion: "legacy" },
		}));
		await writeFile(join(h.dir, "not-executable"), "#!/bin/sh\n");
		await chmod(join(h.dir, "not-executable"), 0o644);
		const start = (name: string) => `MCP server "${name}" failed to start: `;
		assert.equal(
			firstLine(await failure(h.runtime, "missing")),
			`${start("missing")}command "${join(h.dir, "no-such-server")}" was not found (check "command" and PATH).`,
		);
		assert.equal(
			firstLine(await failure(h.runtime, "noexec")),
			`${start("noexec")}command "${join(h.dir, "not-executable")}" could not be run: permission denied (is it an executable file?).`,
		);
		assert.equal(
			firstLine(await failure(h.runtime, "exits")),
			`${start("exits")}the server exited with code 7 before the MCP handshake.`,
		);
		assert.equal(
			firstLine(await failure(h.runtime, "refused")),
			`${start("refused")}connection refused at http://127.0.0.1:${port}/mcp?token=[redacted]&x=1.`,
		);
		assert.equal(
			firstLine(await failure(h.runtime, "refusedLegacy")),
			`${start("refusedLegacy")}connection refused at http://127.0.0.1:${port}/mcp.`,
		);
		await h.cleanup();
	});

	test("a server that throws at start: its Error line is kept above the stack, in the error and in status", async () => {
		// A stack longer than the 4 KiB tail: the line that says what went wrong would scroll out.
		const script = [
			"console.error('Error: boom at start');",
			"for (let i = 0; i < 300; i++) console.error('    at frame' + i + ' (node:internal/somewhere:' + i + ')');",
			"console.error('\\nNode.js ' + process.version); process.exitCode = 1;",
		].join(" ");
		const h = await harness(() => ({ boom: { command: node, args: ["-e", script] } }));
		const error = await failure(h.runtime, "boom");
		assert.match(
			error.message,
			/^MCP server "boom" failed to start: the server exited with code 1 before the MCP handshake\.\nstderr \(last lines\):\nError: boom at start\n…\n {4}at frame294 /,
		);
		assert.ok(error.message.includes("Node.js v"), "the tail is still there");
		const tail = h.runtime.status().find((s) => s.name === "boom")?.stderrTail ?? "";
		assert.match(tail, /^Error: boom at start\n…\n/);
		assert.ok(tail.length < 4200, `bounded: ${tail.length}`);
		await h.cleanup();
	});

	test("secrets a failing server echoes from its argv and URL are redacted; bidi controls are escaped", async () => {
		const echo = [
			"console.error('argv:', process.argv.slice(1).join(' '));",
			"console.error('boom \\u202eevil\\u202c\\u2066x\\u2069 \\u200f\\u061c'); process.exit(1);",
		].join(" ");
		const secrets = ["hunter2hunter2", "ARGVSECRET999", "kv-secret-77", "DSN-PASSWORD-5", "QUERYSECRET1234", "camelSecret42"];
		const h = await harness(() => ({
			leaky: {
				command: node,
				args: [
					"-e",
					echo,
					"--",
					"--password",
					"hunter2hunter2",
					"--token=ARGVSECRET999",
					"--author",
					"jane",
					"API_KEY=kv-secret-77",
					"--dsn",
					"postgres://app:DSN-PASSWORD-5@db.example/app?sslmode=require&authToken=QUERYSECRET1234",
					"--clientSecret",
					"camelSecret42",
				],
			},
		}));
		const error = await failure(h.runtime, "leaky");
		const status = JSON.stringify(h.runtime.status().find((s) => s.name === "leaky"));
		for (const secret of secrets) {
			assert.equal(error.message.includes(secret), false, `${secret} in ${error.message}`);
			assert.equal(status.includes(secret), false, `${secret} in status`);
		}
		assert.match(error.message, /--password \[redacted\] --token=\[redacted\] --author jane API_KEY=\[redacted\]/);
		assert.match(error.message, /sslmode=require/, "a short query value under an ordinary name stays");
		assert.match(error.message, /\nboom \\u202eevil\\u202c\\u2066x\\u2069 \\u200f\\u061c\n/);
		assert.equal(/[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/.test(error.message + status), false);
		await h.cleanup();
	});
});

test("timeouts are said as configured: milliseconds below a second, tenths above", () => {
	assert.deepEqual([60, 500, 999, 1000, 1500, 2000, 2040, 90_000].map(duration), [
		"60 ms",
		"500 ms",
		"999 ms",
		"1 s",
		"1.5 s",
		"2 s",
		"2 s",
		"90 s",
	]);
});
