/**
 * A call's time bounds on a fake clock (`mock.timers`), over the SDK's in-memory pair: a call that outlasts
 * the server's timeout fails as a timeout (not a cancel) when the timeout passes, and the server hears the
 * cancel; progress resets the timeout, so a long call that reports progress runs to its end; credentials
 * that never come fail the setup at its timeout, and neither a reconnect nor the shutdown waits for them.
 * The real tier proves calls over real processes (tests/runtime.test.ts); the setup's timeout on the fake
 * clock is in tests/fast/runtime.test.ts.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, type TestContext, test } from "node:test";
import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { loadConfig } from "../../src/config.ts";
import type { Credentials, Runtime } from "../../src/contracts.ts";
import { CallFailed, SetupFailed } from "../../src/errors.ts";
import { createRuntime } from "../../src/runtime.ts";
import { loadSdk } from "../../src/sdk.ts";
import { memoryRuntime, memoryTransports } from "../helpers/memory.ts";
import { textOf } from "../helpers/output.ts";

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
	for (const cleanup of cleanups.reverse()) await cleanup();
});

const STEP_MS = 20;

/** A server whose `slow` tool sleeps `ms` (on the clock, fake once enabled) in `steps`, reporting progress after each. */
function slowServer(heard: { cancelled?: boolean }): () => McpServer {
	return () => {
		const server = new McpServer({ name: "mem", version: "1.0.0" }, { capabilities: { tools: {} } });
		server.registerTool(
			"slow",
			{ inputSchema: z.object({ ms: z.number(), steps: z.number() }) },
			async ({ ms, steps }, extra) => {
				const signal = extra.mcpReq.signal;
				signal.addEventListener("abort", () => {
					heard.cancelled = true;
				});
				const token = extra.mcpReq._meta?.progressToken;
				for (let step = 1; step <= steps && !signal.aborted; step++) {
					await new Promise((resolve) => setTimeout(resolve, ms / steps));
					if (token !== undefined && !signal.aborted)
						await extra.mcpReq.notify({
							method: "notifications/progress",
							params: { progressToken: token, progress: step, total: steps },
						});
				}
				return { content: [{ type: "text", text: `done after ${ms}ms` }] };
			},
		);
		return server;
	};
}

async function runtimeWith(heard: { cancelled?: boolean }): Promise<Runtime> {
	const servers = { mem: { command: "mem", args: [], protocolVersion: "legacy", requestTimeoutMs: 2000, pin: false } };
	const { runtime, close } = await memoryRuntime(servers, () => slowServer(heard));
	cleanups.push(close);
	return runtime;
}

/** Lets promises and the in-memory messages run, without moving the fake clock. */
async function settle(): Promise<void> {
	for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Moves the fake clock in steps until `work` settles; its outcome and the fake ms it took. */
async function drive<T>(
	t: TestContext,
	work: Promise<T>,
): Promise<Readonly<{ outcome: { value: T } | { error: unknown }; ms: number }>> {
	const begun = Date.now();
	const held: { outcome?: { value: T } | { error: unknown } } = {};
	work.then(
		(value) => {
			held.outcome = { value };
		},
		(error: unknown) => {
			held.outcome = { error };
		},
	);
	await settle();
	while (held.outcome === undefined) {
		if (Date.now() - begun > 60_000) throw new Error("still pending after 60 s of fake time");
		t.mock.timers.tick(STEP_MS);
		await settle();
	}
	return { outcome: held.outcome, ms: Date.now() - begun };
}

test("a call past the server's timeout fails as a timeout when it passes, and the server hears the cancel", async (t) => {
	const heard: { cancelled?: boolean } = {};
	const runtime = await runtimeWith(heard);
	await runtime.tools("mem"); // connected on the real clock: only the call is timed
	t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
	const { outcome, ms } = await drive(t, runtime.call("mem", "slow", { ms: 4000, steps: 1 }));
	assert.ok("error" in outcome, "the call failed");
	const error = outcome.error;
	assert.ok(error instanceof CallFailed, String(error));
	assert.equal(error.reason, "timeout");
	assert.match(error.message, /^tool "slow" on MCP server "mem" timed out after 2 s without progress/);
	assert.ok(ms >= 2000 && ms <= 2000 + 2 * STEP_MS, `failed after ${ms} fake ms`);
	await settle();
	assert.equal(heard.cancelled, true, "notifications/cancelled reached the server");
	assert.equal(runtime.status()[0]?.state, "ready", "a timed-out call leaves the connection up");
});

test("progress resets the timeout: a call reporting progress runs past it to its end", async (t) => {
	const runtime = await runtimeWith({});
	await runtime.tools("mem");
	t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
	const seen: number[] = [];
	const { outcome, ms } = await drive(
		t,
		runtime.call("mem", "slow", { ms: 3500, steps: 7 }, { onProgress: (progress) => seen.push(progress.progress) }),
	);
	assert.ok("value" in outcome, `the call failed: ${"error" in outcome ? String(outcome.error) : ""}`);
	assert.equal(textOf(outcome.value), "done after 3500ms", "runs longer than the request timeout because progress resets it");
	assert.deepEqual(seen, [1, 2, 3, 4, 5, 6, 7]);
	assert.ok(ms >= 3500, `answered after ${ms} fake ms`);
});

test("credentials that never come: the setup fails at its timeout naming the server; a reconnect and the shutdown do not wait", async (t) => {
	const never = <T>() => new Promise<T>(() => undefined);
	const stuck: Credentials = { prepare: never, stepUp: never, secrets: () => [] };
	const dir = await mkdtemp(join(tmpdir(), "pi-mcp-fast-timers-"));
	cleanups.push(() => rm(dir, { recursive: true, force: true }));
	const entry = { url: "http://127.0.0.1:9/mcp", auth: "bearer", bearerTokenEnv: "T" };
	await writeFile(
		join(dir, "mcp.json"),
		JSON.stringify({ mcpServers: { a: { ...entry, timeout: 1 }, b: { ...entry, timeout: 60 } } }),
	);
	const config = await loadConfig({ agentDir: dir, cwd: dir, trusted: false, env: { T: "t" } });
	await loadSdk(); // The timeout counts from the SDK's load: loaded, the setup's timer starts at once.
	const runtime = createRuntime({
		servers: config.servers,
		env: { T: "t" },
		clientInfo: { name: "t", version: "0" },
		auth: stuck,
		transports: memoryTransports(() => "silent").transports,
	});
	t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
	const { outcome, ms } = await drive(t, runtime.tools("a"));
	assert.ok("error" in outcome && outcome.error instanceof SetupFailed, String("error" in outcome && outcome.error));
	assert.match(outcome.error.message, /^MCP server "a" failed to start: setup did not finish within 1 s\./);
	assert.ok(ms >= 1000 && ms <= 1000 + 2 * STEP_MS, `failed after ${ms} fake ms`);
	// b's setup would wait 60 s for its credentials: a reconnect and the shutdown do not wait for it.
	const failed = (e: unknown) => (e instanceof Error ? e.message : String(e));
	const pending = runtime.tools("b").then(() => "connected", failed);
	await drive(t, runtime.reset("b"));
	assert.match(await pending, /cancelled by a reconnect|reset/);
	const again = runtime.tools("b").then(() => "connected", failed);
	const { ms: closing } = await drive(t, runtime.dispose());
	assert.match(await again, /session ended/);
	assert.ok(closing < 60_000, `the shutdown took ${closing} fake ms`);
});
