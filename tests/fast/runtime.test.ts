/**
 * The runtime's logic over the SDK's in-memory pairs (fast tier): real SDK clients and `McpServer`s in
 * this process, no child process, no socket. Connecting, listing, calling, failures that latch, shared
 * setups and listings, cancellation, reconnect, and the setup's timeout under fake timers.
 * The real tier (tests/runtime.test.ts) proves the same parts over real processes once.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { loadConfig } from "../../src/config.ts";
import type { Runtime } from "../../src/contracts.ts";
import { CallFailed, SetupFailed } from "../../src/errors.ts";
import { createRuntime } from "../../src/runtime.ts";
import { loadSdk } from "../../src/sdk.ts";
import { type MemoryTransports, memoryRuntime, memoryTransports } from "../helpers/memory.ts";

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
	for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A server with `echo`, `slow` (answers when told to, or at its cancel), an app-only tool and `hidden`. */
function fixture(gate?: { release?: () => void; cancelled?: boolean }): () => McpServer {
	return () => {
		const server = new McpServer({ name: "mem", version: "1.0.0" }, { capabilities: { tools: {} } });
		server.registerTool(
			"echo",
			{ description: "says it back", inputSchema: z.object({ text: z.string() }) },
			async ({ text }) => ({
				content: [{ type: "text", text: `echo: ${text}` }],
			}),
		);
		server.registerTool("slow", { inputSchema: z.object({}) }, async (_args, extra) => {
			await new Promise<void>((resolve) => {
				if (gate) gate.release = resolve;
				extra.mcpReq.signal.addEventListener("abort", () => {
					if (gate) gate.cancelled = true;
					resolve();
				});
			});
			return { content: [{ type: "text", text: "slow done" }] };
		});
		server.registerTool("app_only", { inputSchema: z.object({}), _meta: { ui: { visibility: ["app"] } } }, async () => ({
			content: [{ type: "text", text: "never" }],
		}));
		server.registerTool("hidden", { inputSchema: z.object({}) }, async () => ({ content: [{ type: "text", text: "never" }] }));
		return server;
	};
}

type Made = MemoryTransports & Readonly<{ runtime: Runtime }>;

/** A runtime over `servers` (mcp.json entries) whose transports are in-memory pairs to what `make` gives. */
async function runtimeOver(
	servers: Readonly<Record<string, unknown>>,
	make: (command: string) => (() => McpServer) | "silent",
): Promise<Made> {
	const made = await memoryRuntime(servers, make);
	cleanups.push(made.close);
	return made;
}

const textOf = (result: { content: readonly { type: string; text?: string }[] }) =>
	result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("");
const stateOf = (runtime: Runtime, name: string) => runtime.status().find((status) => status.name === name);
/** An entry in the legacy era unless told (in `auto` a stdio server also starts a probe sibling: `auto-era.test.ts`). */
const entry = (extra: Readonly<Record<string, unknown>> = {}) => ({
	command: "mem",
	args: [],
	protocolVersion: "legacy",
	...extra,
});

test("connect, list and call over an in-memory pair, in both eras; nothing starts before the first use", async () => {
	for (const [protocolVersion, era] of [
		["auto", "modern"],
		["legacy", "legacy"],
	] as const) {
		const { runtime, made, probes, sent } = await runtimeOver({ mem: entry({ protocolVersion }) }, () => fixture());
		assert.equal(stateOf(runtime, "mem")?.state, "idle");
		assert.deepEqual(made, [], "status connects nothing");
		const tools = await runtime.tools("mem");
		assert.deepEqual(
			tools.map((tool) => tool.name),
			["echo", "slow", "hidden"],
			"the app-only tool is kept from the model",
		);
		assert.equal(textOf(await runtime.call("mem", "echo", { text: "hi" })), "echo: hi");
		const status = stateOf(runtime, "mem");
		assert.equal(status?.state, "ready");
		assert.equal(status?.era, era);
		assert.equal(status?.toolCount, 3);
		assert.deepEqual(made, ["mem"], "one resident for the listing and the call");
		assert.deepEqual(probes, protocolVersion === "auto" ? ["mem"] : [], "in auto, one probe sibling beside it");
		assert.deepEqual(
			sent.filter((method) => method.startsWith("tools/")),
			["tools/list", "tools/call"],
			"the call used the listing held",
		);
	}
});

test("concurrent callers share one setup and one tools/list", async () => {
	const { runtime, made, sent } = await runtimeOver({ mem: entry() }, () => fixture());
	const results = await Promise.all([
		runtime.tools("mem"),
		runtime.tools("mem"),
		runtime.call("mem", "echo", { text: "a" }),
		runtime.call("mem", "echo", { text: "b" }),
	]);
	assert.equal(results[0], results[1], "the same listing");
	assert.deepEqual(
		results.slice(2).map((result) => textOf(result as never)),
		["echo: a", "echo: b"],
	);
	assert.equal(made.length, 1);
	assert.equal(sent.filter((method) => method === "tools/list").length, 1);
	assert.equal(sent.filter((method) => method === "tools/call").length, 2, "calls are never deduplicated");
});

test("refusals: an unknown or disabled server, an unknown tool, an app-only tool, a tool the user hid (nothing starts for it)", async () => {
	const { runtime, made } = await runtimeOver({ mem: entry({ excludeTools: ["hidden"] }), off: entry({ enabled: false }) }, () =>
		fixture(),
	);
	await assert.rejects(runtime.call("nope", "echo", {}), {
		message: 'unknown MCP server "nope"; configured: mem, off',
	});
	await assert.rejects(runtime.call("off", "echo", {}), /^CallFailed: MCP server "off" is disabled in .*mcp\.json$/);
	await assert.rejects(runtime.call("mem", "hidden", {}), (error: Error) => {
		assert.ok(error instanceof CallFailed && error.reason === "refused");
		assert.match(error.message, /^tool "hidden" on MCP server "mem" is hidden by "excludeTools" in .*mcp\.json; the user chose/);
		return true;
	});
	assert.deepEqual(made, [], "a tool the user hid is refused from the configuration alone");
	await assert.rejects(
		runtime.call("mem", "app_only", {}),
		/^CallFailed: tool "app_only" on MCP server "mem" is for MCP Apps only/,
	);
	await assert.rejects(runtime.call("mem", "nothing", {}), {
		message: 'MCP server "mem" has no tool "nothing"; available: echo, slow',
	});
	assert.equal(made.length, 1);
});

test("a failed setup latches: later uses get the same error without a new attempt; reset clears it", async () => {
	let broken = true;
	const { runtime, made } = await runtimeOver({ mem: entry() }, () => {
		if (broken) throw new Error("spawn mem ENOENT");
		return fixture();
	});
	const first = await runtime.call("mem", "echo", { text: "x" }).catch((error: unknown) => error);
	assert.ok(first instanceof SetupFailed, String(first));
	assert.match(first.message, /^MCP server "mem" failed to start: .*ENOENT/);
	assert.deepEqual(first.hint, { kind: "reconnect", server: "mem" });
	const second = await runtime.tools("mem").catch((error: unknown) => error);
	assert.equal(second, first, "the latched error, as it was");
	assert.equal(stateOf(runtime, "mem")?.state, "failed");
	assert.equal(made.length, 1, "no second attempt");
	broken = false;
	await runtime.reset("mem");
	assert.equal(stateOf(runtime, "mem")?.state, "idle");
	assert.equal(textOf(await runtime.call("mem", "echo", { text: "again" })), "echo: again");
	assert.equal(made.length, 2);
});

test("a connection the server closes latches as failed; reconnect starts it again", async () => {
	const { runtime, made, ends } = await runtimeOver({ mem: entry() }, () => fixture());
	await runtime.tools("mem");
	await ends[0]?.close();
	const failed = stateOf(runtime, "mem");
	assert.equal(failed?.state, "failed");
	assert.match(failed?.error ?? "", /^MCP server "mem" closed the connection\.\nRun \/mcp reconnect mem to start it again\.$/);
	await assert.rejects(runtime.call("mem", "echo", { text: "x" }), /closed the connection/);
	assert.equal(made.length, 1, "a dropped server is not restarted behind the user's back");
	await runtime.reset("mem");
	const status = await runtime.connect("mem");
	assert.equal(status.state, "ready");
	assert.equal(status.toolCount, 3);
	assert.equal(made.length, 2);
});

test("cancelling one call cancels only it; the server sees the cancel", async () => {
	const gate: { release?: () => void; cancelled?: boolean } = {};
	const { runtime } = await runtimeOver({ mem: entry() }, () => fixture(gate));
	await runtime.tools("mem");
	const controller = new AbortController();
	const slow = runtime.call("mem", "slow", {}, { signal: controller.signal }).catch((error: unknown) => error);
	const other = runtime.call("mem", "echo", { text: "still here" });
	assert.equal(textOf(await other), "echo: still here");
	controller.abort();
	const error = await slow;
	assert.ok(error instanceof CallFailed, String(error));
	assert.equal(error.message, 'tool "slow" on MCP server "mem" was cancelled');
	assert.equal(error.reason, "cancelled");
	for (let i = 0; i < 50 && !gate.cancelled; i++) await new Promise((resolve) => setImmediate(resolve));
	assert.equal(gate.cancelled, true, "notifications/cancelled reached the server");
	assert.equal(stateOf(runtime, "mem")?.state, "ready");
	assert.equal(textOf(await runtime.call("mem", "echo", { text: "after" })), "echo: after");
});

test("a caller that stops waiting for a setup leaves it running for the others", async () => {
	const { runtime, made } = await runtimeOver({ mem: entry() }, () => fixture());
	const controller = new AbortController();
	const waiting = runtime.tools("mem", controller.signal).catch((error: unknown) => error);
	const joined = runtime.tools("mem");
	controller.abort();
	const error = await waiting;
	assert.ok(error instanceof CallFailed && error.reason === "cancelled", String(error));
	assert.equal(error.message, 'cancelled while waiting for MCP server "mem" to start');
	assert.equal((await joined).length, 3);
	assert.equal(made.length, 1);
});

test("a setup that never finishes fails at the server's timeout (fake timers) and latches", async (t) => {
	await loadSdk(); // The timeout counts from the SDK's load: loaded, the setup's timer starts at once.
	const { runtime, made } = await runtimeOver({ mem: entry({ timeout: 2 }) }, () => "silent");
	t.mock.timers.enable({ apis: ["setTimeout"] });
	const setup = runtime.tools("mem").catch((error: unknown) => error);
	// Let the setup reach its timer, then move the clock; nothing waits 2 s of real time.
	for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
	t.mock.timers.tick(2000);
	const error = await setup;
	t.mock.timers.reset();
	assert.ok(error instanceof SetupFailed, String(error));
	assert.match(error.message, /^MCP server "mem" failed to start: setup did not finish within 2 s\./);
	assert.equal(stateOf(runtime, "mem")?.state, "failed");
	assert.equal(made.length, 1);
});

test("shutdown: calls after dispose are refused; a setup in flight ends", async () => {
	const { runtime } = await runtimeOver({ mem: entry(), stuck: entry({ command: "stuck" }) }, (command) =>
		command === "stuck" ? "silent" : fixture(),
	);
	await runtime.tools("mem");
	const pending = runtime.tools("stuck").catch((error: unknown) => error);
	await runtime.dispose();
	assert.ok((await pending) instanceof Error);
	await assert.rejects(runtime.call("mem", "echo", { text: "x" }), { message: "the MCP session has ended" });
	assert.equal(stateOf(runtime, "mem")?.state, "idle");
});

test("update closes only the connections whose entry changed or vanished", async () => {
	const dir = await mkdtemp(join(tmpdir(), "pi-mcp-fast-update-"));
	cleanups.push(() => rm(dir, { recursive: true, force: true }));
	const load = async (servers: Readonly<Record<string, unknown>>) => {
		await writeFile(join(dir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
		return (await loadConfig({ agentDir: dir, cwd: dir, trusted: false, env: {} })).servers;
	};
	const memory = memoryTransports(() => fixture());
	const runtime = createRuntime({
		servers: await load({ a: entry(), b: entry() }),
		env: {},
		clientInfo: { name: "t", version: "0" },
		transports: memory.transports,
	});
	cleanups.push(() => runtime.dispose());
	await Promise.all([runtime.tools("a"), runtime.tools("b")]);
	await runtime.update(await load({ a: entry(), b: entry({ args: ["changed"] }) }));
	assert.deepEqual(
		runtime.status().map((status) => [status.name, status.state]),
		[
			["a", "ready"],
			["b", "idle"],
		],
	);
	await runtime.update(await load({ b: entry({ args: ["changed"] }) }));
	assert.deepEqual(runtime.names(), ["b"]);
	assert.equal(memory.made.length, 2);
});
