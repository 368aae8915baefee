/**
 * What a server's tools/list becomes for the model (`runtime/visible-tools.ts`), over a real SDK client and
 * server joined in memory: app-only and task-only tools are kept from the model with their reason, and an
 * unchanged list keeps its index (and what is cached on it).
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { nextIndex } from "../../src/runtime/visible-tools.ts";
import { memoryPair } from "../helpers/memory.ts";

const closes: (() => Promise<void>)[] = [];
after(() => Promise.all(closes.map((close) => close())));

test("app-only tools are kept from the model with their reason; an unchanged list keeps its index", async () => {
	const pair = await memoryPair((server) => {
		const text = async () => ({ content: [{ type: "text" as const, text: "ok" }] });
		server.registerTool("visible", { description: "for the model" }, text);
		server.registerTool("app", { description: "for an app", _meta: { ui: { visibility: ["app"] } } }, text);
		server.registerTool("both", { description: "for both", _meta: { ui: { visibility: ["app", "model"] } } }, text);
	});
	closes.push(pair.close);
	const first = nextIndex(undefined, (await pair.client.listTools()).tools);
	assert.deepEqual(
		first.tools.map((tool) => tool.name),
		["visible", "both"],
	);
	assert.match(first.hidden.get("app") ?? "", /MCP Apps only/);
	assert.equal(nextIndex(first, (await pair.client.listTools()).tools), first, "the same list: the same index");
});
