/**
 * Proves the headless harness (tests/helpers/pi.ts + tests/fixtures/faux.ts) against the REAL Pi 1.6 CLI, using only
 * the probe extension (no product code).
 */
import assert from "node:assert/strict";
import { readdirSync, readlinkSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import {
	assistantMessages,
	contentText,
	descendantPids,
	finalText,
	isRecord,
	makeSandbox,
	PROBE_EXT,
	pidAlive,
	runPiJson,
	runPiPrint,
	type Sandbox,
	startPiRpc,
	toolResults,
} from "./helpers/pi.ts";
import { seeded } from "./helpers/seed.ts";

describe("headless Pi harness (probe extension)", () => {
	const state: { sandbox?: Sandbox } = {};
	const sandbox = (): Sandbox => {
		if (state.sandbox === undefined) throw new Error("sandbox not ready");
		return state.sandbox;
	};
	before(async () => {
		state.sandbox = await makeSandbox();
	});
	after(async () => {
		await state.sandbox?.cleanup();
	});

	it("JSON mode: a tool call and its result, parallel calls, an unknown tool is an error, {{last}}, two prompts, script exhaustion", async () => {
		// One run of two prompts: the second finds the script used up.
		const run = await runPiJson({
			sandbox: sandbox(),
			extensions: [PROBE_EXT],
			script: [
				{ tool: "probe_echo", args: { text: "hi" } },
				{ text: "FINAL {{last}}" },
				{
					tools: [
						{ tool: "probe_echo", args: { text: "a" } },
						{ tool: "probe_echo", args: { text: "b" } },
					],
				},
				{ tool: "no_such_tool", args: {} },
				{ text: "saw {{last}}" },
			],
			prompt: "go",
			morePrompts: ["again", "and again"],
		});
		assert.equal(run.code, 0, run.stderr);
		assert.deepEqual(run.junk, []);
		assert.equal(run.events[0]?.type, "session");
		assert.equal(run.events.at(-1)?.type, "agent_settled");
		const tools = toolResults(run.events);
		assert.equal(tools[0]?.toolName, "probe_echo");
		assert.deepEqual(tools[0]?.args, { text: "hi" });
		assert.deepEqual(
			tools.map((t) => [t.toolName, t.isError, t.text]),
			[
				["probe_echo", false, "echo: hi"],
				["probe_echo", false, "echo: a"],
				["probe_echo", false, "echo: b"],
				["no_such_tool", true, tools[3]?.text ?? ""],
			],
		);
		assert.match(tools[3]?.text ?? "", /no_such_tool/);
		const finals = assistantMessages(run.events)
			.map((message) => (isRecord(message) ? contentText(message.content) : ""))
			.filter((text) => text !== "");
		assert.deepEqual(finals, ["FINAL echo: hi", `saw ${tools[3]?.text}`, "faux script exhausted"]);
		assert.equal(finalText(run.events), "faux script exhausted");
		assert.deepEqual(run.leftoverPids, []);
	});

	it("print mode prints the final text", async () => {
		const run = await runPiPrint({
			sandbox: sandbox(),
			extensions: [PROBE_EXT],
			script: [{ tool: "probe_echo", args: { text: "printed" } }, { text: "PRINT {{last}}" }],
			prompt: "go",
		});
		assert.equal(run.code, 0, run.stderr);
		assert.equal(run.stdout.trim(), "PRINT echo: printed");
		assert.deepEqual(run.leftoverPids, []);
	});

	it("RPC mode: /probe notifies, a model prompt settles, stdin EOF shuts down cleanly", async () => {
		const rpc = await startPiRpc({
			sandbox: sandbox(),
			extensions: [PROBE_EXT],
			script: [{ tool: "probe_echo", args: { text: "rpc" } }, { text: "RPC {{last}}" }],
		});
		try {
			const cmd = await rpc.prompt("/probe hello");
			assert.equal(cmd.response.success, true);
			assert.deepEqual(cmd.response.data, { disposition: "handled" });
			const notify = cmd.uiRequests.find((r) => r.method === "notify");
			assert.ok(notify, JSON.stringify(cmd.uiRequests));
			assert.equal(notify.message, "probe: hello");
			assert.equal(notify.notifyType, "info");

			const run = await rpc.prompt("go");
			assert.deepEqual(run.response.data, { disposition: "started" });
			assert.equal(run.events.at(-1)?.type, "agent_settled");
			assert.equal(toolResults(run.events)[0]?.text, "echo: rpc");
			assert.equal(finalText(run.events), "RPC echo: rpc");

			const state = await rpc.request({ type: "get_state" });
			assert.equal(state.success, true);

			assert.equal(pidAlive(rpc.pid), true);
			assert.deepEqual(descendantPids(rpc.pid), []);
		} finally {
			const closed = await rpc.close();
			assert.equal(closed.code, 0, closed.stderr);
			assert.deepEqual(closed.leftoverPids, []);
			assert.equal(pidAlive(rpc.pid), false);
		}
	});

	it("kills Pi on timeout and leaves no process behind", async () => {
		const rpc = await startPiRpc({ sandbox: sandbox(), extensions: [PROBE_EXT] });
		// Pi needs ~1 s to start, so a 1 ms deadline always expires.
		await assert.rejects(rpc.prompt("/probe x", 1), /timed out after 1 ms/);
		const closed = await rpc.close();
		assert.equal(closed.signal, "SIGKILL");
		assert.equal(pidAlive(rpc.pid), false);

		await assert.rejects(
			runPiJson({ sandbox: sandbox(), extensions: [PROBE_EXT], script: [], prompt: "go", timeoutMs: 50 }),
			/timed out after 50 ms/,
		);
		assert.deepEqual(processesIn(sandbox().cwd), []);
	});
});

/** Live pids whose cwd is `dir` (Pi runs in sandbox.cwd). */
function processesIn(dir: string): number[] {
	return readdirSync("/proc")
		.filter((n) => /^\d+$/.test(n))
		.map(Number)
		.filter((pid) => {
			try {
				return readlinkSync(`/proc/${pid}/cwd`) === dir && pidAlive(pid);
			} catch {
				return false;
			}
		});
}

describe("seeded randomness for jittered tests (helpers/seed.ts)", () => {
	it("PI_MCP_TEST_SEED reproduces the order and the jitter; without it the seed is drawn and reported", () => {
		const saved = process.env.PI_MCP_TEST_SEED;
		try {
			process.env.PI_MCP_TEST_SEED = "12345";
			const [a, b] = [seeded(), seeded()];
			assert.equal(a.seed, 12345);
			const items = Array.from({ length: 16 }, (_, i) => i);
			assert.deepEqual(a.shuffle(items), b.shuffle(items));
			assert.deepEqual(
				Array.from({ length: 8 }, () => a.random()),
				Array.from({ length: 8 }, () => b.random()),
			);
			process.env.PI_MCP_TEST_SEED = "54321";
			assert.notDeepEqual(seeded().shuffle(items), a.shuffle(items), "another seed, another order");
			delete process.env.PI_MCP_TEST_SEED;
			const drawn = seeded();
			process.env.PI_MCP_TEST_SEED = String(drawn.seed);
			assert.deepEqual(seeded().shuffle(items), drawn.shuffle(items), "the reported seed replays the run");
		} finally {
			if (saved === undefined) delete process.env.PI_MCP_TEST_SEED;
			else process.env.PI_MCP_TEST_SEED = saved;
		}
	});
});
