/**
 * The early start's bounds (issue 17, item 2) and the search across servers that never waits on the
 * slowest (issue 20, items 1-2), in the real Pi with the faux model: nothing starts while `mcp` is not an
 * active tool or for `"earlyStart": false`; a server begun for a call Pi blocks or rejects is closed when
 * Pi reports that call's end; a search without a server starts every server while it is written,
 * answers without the slow one, names it, and a later search includes it.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { makeSandbox, runPiJson, type Step, toolResults } from "./helpers/pi.ts";
import { readWire, SERVER, startedPids } from "./helpers/servers.ts";

const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const BLOCK = new URL("./fixtures/block-mcp.ts", import.meta.url).pathname;
const REDIRECT = new URL("./fixtures/redirect-mcp.ts", import.meta.url).pathname;
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
	await Promise.all(cleanups.map((cleanup) => cleanup()));
});

async function runInPi(
	script: readonly Step[],
	options: Readonly<{
		servers?: (log: string) => Record<string, unknown>;
		env?: (log: string) => Record<string, string>;
		args?: readonly string[];
		extensions?: readonly string[];
	}> = {},
) {
	const sandbox = await makeSandbox();
	cleanups.push(() => sandbox.cleanup());
	const log = join(sandbox.root, "wire.log");
	const servers = options.servers?.(log) ?? {
		fx: { command: process.execPath, args: [SERVER, "stdio"], env: { FIXTURE_LOG: log }, protocolVersion: "legacy" },
	};
	await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
	const run = await runPiJson({
		sandbox,
		extensions: [...(options.extensions ?? []), EXTENSION],
		prompt: "go",
		script,
		args: options.args,
		env: { PI_FAUX_TOKENS_PER_SECOND: "50", ...options.env?.(log) },
		timeoutMs: 90_000,
	});
	return { run, log };
}

const echo = { tool: "mcp", args: { action: "call", server: "fx", tool: "echo", args: { text: "hi" } } };
const status = { tool: "mcp", args: { action: "status" } };

// Each test runs its own Pi and servers, and none measures time: three run at once (more would crowd two cores).
describe("the early start's bounds in a real Pi", { concurrency: 3 }, () => {
	test("a call another extension blocks: the server begun while it was written is closed at its end", async () => {
		const { run, log } = await runInPi([echo, status, { text: "done" }], {
			extensions: [BLOCK],
			env: (log) => ({ PI_FAUX_HOLD_FILE: log, PI_FAUX_HOLD_TEXT: '"method":"tools/list"' }),
		});
		assert.equal(run.code, 0, run.stderr);
		const [blocked, state] = toolResults(run.events);
		assert.match(blocked?.text ?? "", /user denied/);
		const wire = readWire(log);
		assert.ok(startedPids(wire).length >= 1, "the early start began the server");
		assert.equal(wire.filter((line) => line.method === "tools/call").length, 0);
		assert.match(state?.text ?? "", /^fx: idle/m, "closed at the blocked call's end, not left running");
	});

	test("a call whose arguments a hook points at another server: the server begun for the streamed name is closed", async () => {
		const fixture = (log: string) => ({
			command: process.execPath,
			args: [SERVER, "stdio"],
			env: { FIXTURE_LOG: log },
			protocolVersion: "legacy",
		});
		const { run, log } = await runInPi([echo, status, { text: "done" }], {
			extensions: [REDIRECT],
			servers: (log) => ({ fx: fixture(log), fx2: fixture(log) }),
			env: (log) => ({ PI_FAUX_HOLD_FILE: log, PI_FAUX_HOLD_TEXT: '"method":"tools/list"' }),
		});
		assert.equal(run.code, 0, run.stderr);
		const [called, state] = toolResults(run.events);
		assert.match(called?.text ?? "", /hi/, "the call ran on fx2");
		assert.equal(startedPids(readWire(log)).length, 2, "the early start began fx, the call fx2");
		assert.match(state?.text ?? "", /^fx: idle/m, "fx, which the call did not use, was closed");
		assert.match(state?.text ?? "", /^fx2: ready/m);
	});

	test("a call Pi rejects (invalid arguments) or blocks leaves the server idle for the next call", async () => {
		const invalid = { tool: "mcp", args: { action: "call", server: "fx", tool: "echo", args: { text: "x" }, limit: 999 } };
		const { run } = await runInPi([invalid, status, { text: "done" }], {
			env: (log) => ({ PI_FAUX_HOLD_FILE: log, PI_FAUX_HOLD_TEXT: '"method":"tools/list"' }),
		});
		assert.equal(run.code, 0, run.stderr);
		const [rejected, state] = toolResults(run.events);
		assert.equal(rejected?.isError, true);
		assert.match(state?.text ?? "", /^fx: idle/m, "closed at the rejected call's end, not left running");
	});

	test("nothing starts early while mcp is not an active tool", async () => {
		const { run, log } = await runInPi([echo, { text: "done" }], { args: ["--tools", "read"] });
		assert.equal(run.code, 0, run.stderr);
		assert.deepEqual(startedPids(readWire(log)), [], "no server process was started");
	});

	test('"earlyStart": false: the server starts only once the call runs', async () => {
		const { run, log } = await runInPi([echo, { text: "done" }], {
			servers: (log) => ({
				fx: { command: process.execPath, args: [SERVER, "stdio"], env: { FIXTURE_LOG: log }, earlyStart: false },
			}),
			env: (log) => ({ PI_FAUX_EVENT_LOG: log }),
		});
		assert.equal(run.code, 0, run.stderr);
		const wire = readWire(log);
		const executed = wire.findIndex((line) => line.event === "tool_call");
		const started = wire.findIndex((line) => line.event === "start");
		assert.ok(executed >= 0 && started > executed, `started after Pi executed the call: ${JSON.stringify(wire)}`);
		assert.match(toolResults(run.events)[0]?.text ?? "", /hi/);
	});
});

describe("a search without a server", { concurrency: 3 }, () => {
	const fixture = (log: string) => ({
		command: process.execPath,
		args: [SERVER, "stdio"],
		env: { FIXTURE_LOG: log },
		protocolVersion: "legacy",
	});
	const search = { tool: "mcp", args: { action: "tools", query: "echo text" } };

	test("every server starts while the search is written", async () => {
		const { run, log } = await runInPi([search, { text: "done" }], {
			servers: (log) => ({ a: fixture(log), b: fixture(log) }),
			env: (log) => ({ PI_FAUX_HOLD_FILE: log, PI_FAUX_HOLD_TEXT: '"method":"tools/list"' }),
		});
		assert.equal(run.code, 0, run.stderr);
		const wire = readWire(log);
		assert.deepEqual(
			wire.find((line) => line.event === "toolcall_end"),
			{ event: "toolcall_end", seen: true },
			"a server listed its tools before the call's end",
		);
		assert.match(toolResults(run.events)[0]?.text ?? "", /across 2 servers/);
	});

	// How long the search waits (the quiet gap, the budget, the first listing, 10 s): tests/fast/wait-search.test.ts.
	test("a slow server does not hold the result back, is named, keeps starting, and a later search includes it", async () => {
		// The slow server cannot start until the model's bash step opens its gate, then waits for its listing:
		// no time is waited out, and the first search cannot have included it.
		const gate = (log: string) => join(dirname(log), "gate");
		const slowLog = (log: string) => join(dirname(log), "slow.log");
		const open = {
			tool: "bash",
			args: {
				command:
					'touch "$GATE"; for i in $(seq 600); do grep -q \'"method":"tools/list"\' "$SLOW_LOG" 2>/dev/null && break; sleep 0.05; done',
			},
		};
		const { run } = await runInPi([search, open, search, { text: "done" }], {
			servers: (log) => ({
				a: fixture(log),
				b: fixture(log),
				slow: {
					...fixture(slowLog(log)),
					command: "sh",
					args: [
						"-c",
						'while [ ! -e "$1" ]; do sleep 0.05; done; shift; exec "$@"',
						"sh",
						gate(log),
						process.execPath,
						SERVER,
						"stdio",
					],
				},
			}),
			// The call's end waits for a fast server's listing (a loaded machine may take seconds to start one).
			env: (log) => ({
				PI_FAUX_HOLD_FILE: log,
				PI_FAUX_HOLD_TEXT: '"method":"tools/list"',
				GATE: gate(log),
				SLOW_LOG: slowLog(log),
			}),
		});
		assert.equal(run.code, 0, run.stderr);
		const [first, , second] = toolResults(run.events);
		assert.match(first?.text ?? "", /across [12] servers?, best first/, "the fast servers' results, without the slow one");
		assert.match(first?.text ?? "", /still starting, not searched: (b, )?slow \(search again in a moment/);
		assert.match(second?.text ?? "", /across 3 servers/);
		assert.match(second?.text ?? "", /\nslow\/echo /);
		assert.doesNotMatch(second?.text ?? "", /still starting/);
	});
});

// Two calls streaming at once (alternating updates), each call's early work once: tests/fast/runtime-early.test.ts.
