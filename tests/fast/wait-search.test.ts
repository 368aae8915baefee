/**
 * How long a search across servers waits (issue 20, items 1-2; issue 49, figure 12), on a fake clock
 * (`mock.timers`): once the servers that were starting have listed, a quiet gap of `SEARCH_QUIET_MS` ends
 * the wait; a server already ready or one failing at once does not start the gap; the budget
 * (`SEARCH_WAIT_MS`) ends it when a server has listed; with none listed by then, the first to list ends it,
 * and at `SEARCH_FIRST_MS` the answer names every server still starting. A slow server keeps starting, and
 * a later search includes it. In-memory servers, each "starting" for as long as its transport takes to be
 * made (fake time). The real Pi's search across servers: tests/early-bounds.test.ts.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { before, describe, type TestContext, test } from "node:test";
import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { SEARCH_FIRST_MS, SEARCH_QUIET_MS, SEARCH_WAIT_MS, toolsAction } from "../../src/catalog/listing.ts";
import { loadConfig } from "../../src/config.ts";
import type { Session, Transports } from "../../src/contracts.ts";
import { OWNER_ENV } from "../../src/runtime/processes.ts";
import { SessionOwner } from "../../src/session.ts";
import { memoryTransports } from "../helpers/memory.ts";
import { textOf } from "../helpers/output.ts";

/** The fake clock's step: answers are timed to within two of it. */
const STEP_MS = 20;

function echoServer(): McpServer {
	const server = new McpServer({ name: "mem", version: "1.0.0" }, { capabilities: { tools: {} } });
	server.registerTool("echo", { description: "Echo text back", inputSchema: z.object({ text: z.string() }) }, async () => ({
		content: [{ type: "text", text: "ok" }],
	}));
	return server;
}

type Opened = Readonly<{ session: Session; made: string[]; dispose: () => Promise<void>; dir: string }>;

/**
 * A session over servers named in `starts`: each takes its number of ms (on the clock, fake once enabled) to
 * be reached, or fails at once ("fails"). Pinning is off: the pins file's I/O would take real time, not fake.
 */
async function sessionOf(starts: Readonly<Record<string, number | "fails">>): Promise<Opened> {
	const dir = await mkdtemp(join(tmpdir(), "pi-mcp-fast-wait-"));
	const servers = Object.fromEntries(
		Object.keys(starts).map((name) => [name, { command: name, args: [], protocolVersion: "legacy", pin: false }]),
	);
	await writeFile(join(dir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
	const config = await loadConfig({ agentDir: dir, cwd: dir, trusted: false, env: {} });
	const memory = memoryTransports((command) => {
		if (starts[command] === "fails") throw new Error(`spawn ${command} ENOENT`);
		return echoServer;
	});
	const transports: Transports = {
		async stdio(params) {
			// The server's own command, also when it is wrapped (`setsid env PI_MCP_OWNER=… command …`).
			const marked = params.args?.findIndex((arg) => arg.startsWith(`${OWNER_ENV}=`)) ?? -1;
			const ms = starts[marked >= 0 ? (params.args?.[marked + 1] ?? "") : params.command];
			if (typeof ms === "number" && ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
			return memory.transports.stdio(params);
		},
		http: memory.transports.http,
	};
	const owner = new SessionOwner({ config, env: {}, agentDir: dir, overflowDir: dir, transports });
	const session = await owner.open();
	return { session, made: memory.made, dispose: () => owner.dispose(), dir };
}

/** Lets promises and the in-memory messages run, without moving the fake clock. */
async function settle(): Promise<void> {
	for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Moves the fake clock in steps of `STEP_MS`, letting everything due run between steps, until `work`
 * settles (or `limitMs` passed: then it throws); resolves with its value and the fake ms it took.
 */
async function drive<T>(
	t: TestContext,
	work: Promise<T>,
	step = STEP_MS,
	limitMs = 30_000,
): Promise<Readonly<{ value: T; ms: number }>> {
	const begun = Date.now();
	const outcome: { done?: { value: T } | { error: unknown } } = {};
	work.then(
		(value) => {
			outcome.done = { value };
		},
		(error: unknown) => {
			outcome.done = { error };
		},
	);
	await settle();
	while (outcome.done === undefined) {
		if (Date.now() - begun > limitMs) throw new Error(`still pending after ${limitMs} fake ms`);
		t.mock.timers.tick(step);
		await settle();
	}
	if ("error" in outcome.done) throw outcome.done.error;
	return { value: outcome.done.value, ms: Date.now() - begun };
}

/** Moves the fake clock `ms` on, in steps, letting everything due run. */
async function pass(t: TestContext, ms: number): Promise<void> {
	for (let moved = 0; moved < ms; moved += STEP_MS) {
		t.mock.timers.tick(STEP_MS);
		await settle();
	}
}

/** A search across every server of `opened`, on the fake clock: its text and when it answered. */
async function search(t: TestContext, opened: Opened) {
	const { value, ms } = await drive(
		t,
		toolsAction(opened.session, { action: "tools", query: "echo text" }, undefined, undefined),
	);
	return { text: textOf(value), ms };
}

/** A session on the fake clock (from 0): `use` runs the test, then the session is closed. */
async function onFakeClock(
	t: TestContext,
	starts: Readonly<Record<string, number | "fails">>,
	use: (opened: Opened) => Promise<void>,
) {
	const opened = await sessionOf(starts);
	t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
	try {
		await use(opened);
	} finally {
		// On the fake clock: the close waits up to 2 s for the setups it aborts (a delayed transport ignores them).
		await drive(t, opened.dispose(), 250);
		t.mock.timers.reset();
		await rm(opened.dir, { recursive: true, force: true });
	}
}

/** Within one step of `expected` fake ms, never before it. */
function near(ms: number, expected: number, what: string): void {
	assert.ok(ms >= expected && ms <= expected + 2 * STEP_MS, `${what}: answered after ${ms} ms, expected ${expected}`);
}

// Untimed, on the real clock: the SDK, the schemas and the search modules load once, so fake time measures the wait.
before(async () => {
	const opened = await sessionOf({ warm: 0 });
	await toolsAction(opened.session, { action: "tools", query: "echo text" }, undefined, undefined);
	await opened.dispose();
	await rm(opened.dir, { recursive: true, force: true });
});

describe("how long a search across servers waits, on a fake clock", () => {
	test("every server healthy: the answer comes when the last one lists, without the quiet gap", async (t) => {
		await onFakeClock(t, { s200: 200, s350: 350 }, async (opened) => {
			const { text, ms } = await search(t, opened);
			assert.match(text, /^2 tools match "echo text" across 2 servers, best first\n/);
			assert.doesNotMatch(text, /still starting/);
			near(ms, 350, "the last listing");
		});
	});

	test("one slow server: the answer comes a quiet gap after the others listed and names it; it keeps starting, and a later search includes it", async (t) => {
		await onFakeClock(t, { s300: 300, s350: 350, s4000: 4000 }, async (opened) => {
			const first = await search(t, opened);
			assert.match(first.text, /across 2 servers, best first/);
			assert.match(first.text, /\ns300\/echo /);
			assert.match(
				first.text,
				/still starting, not searched: s4000 \(search again in a moment, or name the server, to include it\)/,
			);
			near(first.ms, 350 + SEARCH_QUIET_MS, "a quiet gap after the last healthy listing");
			assert.ok(first.ms < SEARCH_WAIT_MS);
			await pass(t, 4000 - Date.now() + STEP_MS);
			assert.equal(opened.session.runtime.status().find((status) => status.name === "s4000")?.state, "ready");
			const second = await search(t, opened);
			assert.match(second.text, /across 3 servers, best first/);
			assert.doesNotMatch(second.text, /still starting/);
			assert.ok(second.ms <= STEP_MS, `answered after ${second.ms} ms: every server was ready`);
			assert.deepEqual([...opened.made].sort(), ["s300", "s350", "s4000"], "the slow server was started once, not again");
		});
	});

	test("a server already ready does not start the gap: one still starting is waited for", async (t) => {
		await onFakeClock(t, { s0: 0, s700: 700 }, async (opened) => {
			await drive(t, opened.session.runtime.tools("s0"));
			const { text, ms } = await search(t, opened);
			assert.match(text, /across 2 servers/, "the starting server's listing 0.7 s later is included");
			near(ms, 700, "the starting server's listing");
		});
	});

	test("a server failing at once does not start the gap: it is named with its error, the others are waited for", async (t) => {
		await onFakeClock(t, { broken: "fails", s1000: 1000 }, async (opened) => {
			const { text, ms } = await search(t, opened);
			assert.match(text, /across 1 server, best first/);
			assert.match(text, /\nbroken: not searched — MCP server "broken" failed to start: .*ENOENT/);
			near(ms, 1000, "the healthy server's listing");
		});
	});

	test("the budget ends the wait once a server has listed: the one still starting is named", async (t) => {
		await onFakeClock(t, { s0: 0, s5000: 5000 }, async (opened) => {
			await drive(t, opened.session.runtime.tools("s0"));
			const { text, ms } = await search(t, opened);
			assert.match(text, /across 1 server, best first/);
			assert.match(text, /still starting, not searched: s5000 /);
			near(ms, SEARCH_WAIT_MS, "the budget");
		});
	});

	test("none listed at the budget: the first to list ends the wait a quiet gap later; the other is named", async (t) => {
		await onFakeClock(t, { one: 2000, two: 12_000 }, async (opened) => {
			const { text, ms } = await search(t, opened);
			assert.match(text, /across 1 server, best first\n/);
			assert.match(text, /\none\/echo /);
			assert.match(text, /still starting, not searched: two \(search again in a moment/);
			near(ms, 2000 + SEARCH_QUIET_MS, "a quiet gap after the first listing");
		});
	});

	test(`with no server listed within ${SEARCH_FIRST_MS / 1000} s, the search answers anyway and names every one still starting`, async (t) => {
		await onFakeClock(t, { one: 14_000, two: 14_000 }, async (opened) => {
			const { text, ms } = await search(t, opened);
			assert.match(text, /^No server has listed its tools within 10 s\n/);
			assert.match(
				text,
				/still starting, not searched: one, two \(search again in a moment, or name the server, to include them\)/,
			);
			near(ms, SEARCH_FIRST_MS, "the first-listing budget");
		});
	});
});
