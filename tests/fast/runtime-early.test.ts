/**
 * The early start's work for a call (issue 15), over in-memory servers: a call being written starts the
 * shared setup and the listing the call then joins; a listing sent early is used by its own call only; a
 * failure latches like a call's; nothing starts for a disabled, broken or unknown server; a declined call's
 * server is closed unless another running call uses it; a cancel ends a call's wait for its early listing;
 * two calls streaming at once do their early work once each.
 * The real tier (tests/early.test.ts) proves the same over real processes and in a real Pi.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { runAction } from "../../src/catalog/actions.ts";
import type { Runtime, Session } from "../../src/contracts.ts";
import type { ServerEntry } from "../../src/schema.ts";
import { indexOf } from "../../src/search/rank.ts";
import { DESCRIPTION, parameters } from "../../src/tool/definition.ts";
import { EarlyStart } from "../../src/tool/early/start.ts";
import { writer } from "../helpers/early.ts";
import { memorySession } from "../helpers/memory.ts";
import { textOf } from "../helpers/output.ts";

const closes: (() => Promise<void>)[] = [];
after(async () => {
	for (const close of closes) await close();
});

/** A server with `echo`, three resources, a template and a prompt. */
function fixture(): McpServer {
	const server = new McpServer({ name: "fx", version: "1.0.0" }, { capabilities: { tools: {}, resources: {}, prompts: {} } });
	server.registerTool(
		"echo",
		{ description: "Echo text back", inputSchema: z.object({ text: z.string().optional() }) },
		async ({ text }) => ({
			content: [{ type: "text", text: `echo: ${text ?? ""}` }],
		}),
	);
	for (const name of ["readme", "notes", "data"])
		server.registerResource(name, `fixture://${name}`, { mimeType: "text/plain" }, async (uri) => ({
			contents: [{ uri: uri.href, text: name }],
		}));
	server.registerResource("item", new ResourceTemplate("fixture://items/{id}", { list: undefined }), {}, async (uri, { id }) => ({
		contents: [{ uri: uri.href, text: `item ${id}` }],
	}));
	server.registerPrompt(
		"greet",
		{ description: "Greet someone", argsSchema: z.object({ name: z.string() }) },
		async ({ name }) => ({
			messages: [{ role: "user", content: { type: "text", text: `Please greet ${name}.` } }],
		}),
	);
	return server;
}

/** A session over `servers` (mcp.json entries, legacy era); `broken` fails to start, `stuck` never answers. */
async function opened(servers: Readonly<Record<string, unknown>>) {
	const memory = await memorySession(servers, (command) => {
		if (command === "broken") throw new Error("fixture crash: missing API_KEY");
		return command === "stuck" ? "silent" : fixture;
	});
	closes.push(memory.close);
	const count = (method: string) => memory.sent.filter((sent) => sent === method).length;
	return { ...memory, count };
}

const entry = (command = "fx", extra: Readonly<Record<string, unknown>> = {}) => ({
	command,
	args: [],
	protocolVersion: "legacy",
	...extra,
});

const stateOf = (session: Session, name: string) => session.runtime.status().find((status) => status.name === name)?.state;

describe("the early start's work for a call, over in-memory servers", { concurrency: true }, () => {
	test("starts the shared setup and the tool listing the call then joins: one server, one tools/list", async () => {
		const { session, made, count } = await opened({ fx: entry() });
		const { write, run } = writer(session);
		await write("a", { action: "call", server: "fx", tool: "echo", args: { text: "early" } });
		assert.equal(stateOf(session, "fx"), "connecting");
		const result = await run("a", "call", "fx").runtime.call("fx", "echo", { text: "early" });
		assert.equal(textOf(result), "echo: early");
		assert.deepEqual(made, ["fx"]);
		assert.equal(count("initialize"), 1);
		assert.equal(count("tools/list"), 1);
	});

	test("a tools call uses the listing sent for it; a call without one lists anew", async () => {
		const { session, count } = await opened({ fx: entry() });
		const { write, run } = writer(session);
		await write("a", { action: "tools", server: "fx" });
		const listed = await run("a", "tools", "fx").runtime.tools("fx");
		assert.ok(listed.some((tool) => tool.name === "echo"));
		assert.equal(count("tools/list"), 1, "the early listing was used");
		await session.runtime.tools("fx");
		assert.equal(count("tools/list"), 2, "a call that had no early start lists anew");
	});

	test("for a ready server: a call being written lists nothing, a tools call lists once for itself", async () => {
		const { session, count } = await opened({ fx: entry() });
		const { write, run } = writer(session);
		await session.runtime.tools("fx");
		await write("a", { action: "call", server: "fx", tool: "echo", args: {} });
		await run("a", "call", "fx").runtime.call("fx", "echo", {});
		assert.equal(count("tools/list"), 1, "a call or describe being written lists nothing");
		await write("b", { action: "tools", server: "fx" });
		const called = run("b", "tools", "fx").runtime;
		await called.tools("fx");
		await called.tools("fx");
		assert.equal(count("tools/list"), 2, "one listing for the tools call being written, which it uses");
	});

	test("a query's search index is built from the early listing, the very list the call gets", async () => {
		const { session, sent } = await opened({ fx: entry() });
		const { write, run } = writer(session);
		await write("a", { action: "tools", server: "fx", query: "echo" });
		const tools = await run("a", "tools", "fx").runtime.tools("fx");
		const built = indexOf([{ server: "fx", tools }]);
		assert.equal(indexOf([{ server: "fx", tools }]), built, "one index per listing");
		assert.deepEqual(sent, ["initialize", "tools/list"], "no request but the early start's");
	});

	test("a failed early setup latches like a call's, and the call reports it", async () => {
		const { session, made } = await opened({ broken: entry("broken") });
		const { write, run } = writer(session);
		await write("a", { action: "read", server: "broken", uri: "x" });
		await write("b", { action: "tools", server: "broken" });
		await assert.rejects(
			run("b", "tools", "broken").runtime.tools("broken"),
			/MCP server "broken" failed to start: .*missing API_KEY/s,
		);
		assert.equal(stateOf(session, "broken"), "failed");
		await assert.rejects(session.runtime.call("broken", "echo", {}), /failed to start/);
		assert.deepEqual(made, ["broken"], "latched: neither the second call written nor the call started it again");
	});

	test("a call the user declined (confirm) is closed like a blocked one, unless another running call uses its server", async () => {
		const { session } = await opened({ fx: entry() });
		const resets: string[] = [];
		const runtime: Runtime = { ...session.runtime, reset: async (name) => void resets.push(name) };
		const { early, write, run } = writer({ ...session, runtime });
		const result = (declined: boolean) => ({ content: [], details: { action: "call", declined } });
		await write("a", { action: "call", server: "fx", tool: "echo", args: {} });
		run("a", "call", "fx");
		early.ended("a", result(false));
		assert.deepEqual(resets, [], "a call that ran keeps what was started for it");
		await session.runtime.reset("fx");
		await write("b", { action: "call", server: "fx", tool: "echo", args: {} });
		run("b", "call", "fx");
		run("c", "tools", "fx");
		early.ended("b", result(true));
		assert.deepEqual(resets, [], "another running call uses the server");
		early.ended("c", result(false));
		await session.runtime.reset("fx");
		await write("d", { action: "call", server: "fx", tool: "echo", args: {} });
		run("d", "call", "fx");
		early.ended("d", result(true));
		assert.deepEqual(resets, ["fx"], "what was started only for the declined call is closed");
	});

	test("a resources, templates or prompts call uses the listing its early start sent", async () => {
		const { session, made, count } = await opened({ fx: entry() });
		const { write, run } = writer(session);
		await write("a", { action: "resources", server: "fx" });
		assert.equal(stateOf(session, "fx"), "connecting", "an idle server starts for it");
		const listed = await runAction(run("a", "resources", "fx"), { action: "resources", server: "fx" }, undefined, undefined);
		assert.match(textOf(listed), /^fx: 3 resources\n/);
		assert.equal(count("resources/list"), 1, "the call took the early listing");
		await runAction(session, { action: "resources", server: "fx" }, undefined, undefined);
		assert.equal(count("resources/list"), 2, "a call without one lists");
		await write("b", { action: "prompts", server: "fx" });
		const other = run("b", "templates", "fx");
		assert.match(
			textOf(await runAction(other, { action: "templates", server: "fx" }, undefined, undefined)),
			/fixture:\/\/items\/\{id\}/,
		);
		assert.equal(count("resources/templates/list"), 1, "a held listing of another action is not taken");
		assert.match(textOf(await runAction(other, { action: "prompts", server: "fx" }, undefined, undefined)), /greet/);
		assert.equal(count("prompts/list"), 1);
		assert.deepEqual(made, ["fx"]);
	});

	test("a call waiting for its early listing: a cancel ends the wait, a failure is the call's", async () => {
		const { session } = await opened({ stuck: entry("stuck"), broken: entry("broken") });
		const { write, run } = writer(session);
		await write("a", { action: "prompts", server: "stuck" });
		const controller = new AbortController();
		const waiting = runAction(run("a", "prompts", "stuck"), { action: "prompts", server: "stuck" }, controller.signal, undefined);
		for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
		controller.abort();
		await assert.rejects(waiting, (error: Error & { reason?: string }) => {
			assert.equal(error.message, 'the request to MCP server "stuck" was cancelled');
			assert.equal(error.reason, "cancelled");
			return true;
		});
		await write("b", { action: "resources", server: "broken" });
		await assert.rejects(
			runAction(run("b", "resources", "broken"), { action: "resources", server: "broken" }, undefined, undefined),
			/MCP server "broken" failed to start: .*missing API_KEY/s,
		);
	});

	test("starts nothing for a disabled, broken or unknown server", async () => {
		const { session, made } = await opened({ off: entry("fx", { enabled: false }), bad: { command: 42 }, fx: entry() });
		const { write } = writer(session);
		await write("a", { action: "call", server: "off", tool: "echo", args: {} });
		await write("b", { action: "call", server: "bad", tool: "echo", args: {} });
		await write("c", { action: "call", server: "nope", tool: "echo", args: {} });
		assert.deepEqual(
			session.runtime.status().map((status) => [status.name, status.state]),
			[
				["off", "disabled"],
				["bad", "invalid"],
				["fx", "idle"],
			],
		);
		assert.deepEqual(made, [], "no server was started");
	});
});

describe("two calls streaming at once (alternating updates)", () => {
	test("each call's early work happens once", async () => {
		const listings: string[] = [];
		const runtime = {
			status: () => [{ name: "fx", state: "idle" }],
			request: async (server: string) => {
				listings.push(server);
				return { resources: [] };
			},
			reset: async () => undefined,
		} as unknown as Runtime;
		const entry = (name: string): ServerEntry => ({
			name,
			source: { kind: "user", path: "/x" },
			enabled: true,
			ignoredKeys: [],
			config: { name } as unknown as NonNullable<ServerEntry["config"]>,
		});
		const session = { config: { servers: [entry("fx")], files: [] }, runtime } as unknown as Session;
		const early = new EarlyStart(
			{
				entries: () => session.config.servers,
				runtime: () => runtime,
				preload: async () => undefined,
				open: async () => session,
			},
			() => true,
			{ name: "mcp", description: DESCRIPTION, parameters },
		);
		const update = (id: string, type: string, args: Record<string, unknown>, delta = "") =>
			early.update({
				type: "message_update",
				assistantMessageEvent: {
					type,
					contentIndex: 0,
					delta,
					partial: { content: [{ type: "toolCall", id, name: "mcp", arguments: args }] },
				},
			} as never);
		update("a", "toolcall_start", {});
		update("b", "toolcall_start", {});
		const args = { action: "resources", server: "fx", uri: "" };
		for (let round = 0; round < 40; round += 1) {
			update("a", "toolcall_delta", args);
			update("b", "toolcall_delta", args);
		}
		await new Promise((resolve) => setImmediate(resolve));
		assert.deepEqual(listings, ["fx", "fx"], "one early listing (and start) per call, not one per update");
	});
});
