/**
 * Discovery through the `tools` action (issue 11), fast: a large server serving the bench catalog (273 real
 * tool definitions) in process over in-memory pairs (no process). Ranked search, listings that keep every
 * line, search across servers with one that fails, the index kept while the list is unchanged. The same
 * end to end in the real Pi 1.6, over real stdio servers, is in tests/discovery.test.ts.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import { fromJsonSchema, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { runAction } from "../../src/catalog/actions.ts";
import type { Params } from "../../src/catalog/requests.ts";
import type { Session } from "../../src/contracts.ts";
import { indexOf } from "../../src/search/rank.ts";
import { memorySession } from "../helpers/memory.ts";
import { textOf } from "../helpers/output.ts";

type CatalogTool = Readonly<{ name: string; title?: string; description?: string; inputSchema?: object; annotations?: object }>;
const CATALOG = JSON.parse(
	readFileSync(new URL("../../bench/data/mcp-tool-catalog.json", import.meta.url), "utf8"),
) as CatalogTool[];

/** A catalog tool's schema listed as written and compiled only when called (273 compilations cost ~0.5 s). */
function lazySchema(schema: object) {
	const held: { schema?: ReturnType<typeof fromJsonSchema> } = {};
	const compiled = () => {
		held.schema ??= fromJsonSchema(schema as Parameters<typeof fromJsonSchema>[0]);
		return held.schema["~standard"];
	};
	return {
		"~standard": {
			version: 1 as const,
			vendor: "mcp",
			jsonSchema: { input: () => schema, output: () => schema },
			validate: (data: unknown) => compiled().validate(data),
		},
	};
}

/** The fixture server's `echo` (its instructions too), and with `catalog` every catalog tool beside it. */
function fixtureServer(catalog: boolean): McpServer {
	const server = new McpServer(
		{ name: "pi-mcp-fixture", version: "1.0.0" },
		{ capabilities: { tools: {} }, instructions: "Fixture server for pi-mcp tests." },
	);
	const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });
	server.registerTool("echo", { description: "Echo the text back", inputSchema: z.object({ text: z.string() }) }, async (args) =>
		text(args.text),
	);
	server.registerTool(
		"add",
		{ description: "Add two numbers", inputSchema: z.object({ a: z.number(), b: z.number() }) },
		async (args) => text(String(args.a + args.b)),
	);
	for (const tool of catalog ? CATALOG : []) {
		if (tool.name === "echo" || tool.name === "add") continue;
		server.registerTool(
			tool.name,
			{
				title: tool.title,
				description: tool.description,
				inputSchema: lazySchema(tool.inputSchema ?? { type: "object" }) as unknown as ReturnType<typeof fromJsonSchema>,
				annotations: tool.annotations,
			},
			async (args: unknown) => text(`${tool.name} ran with ${JSON.stringify(args)}`),
		);
	}
	return server;
}

/** How many tools `big` serves: the catalog's names and the fixture's two. */
const BIG = new Set(["echo", "add", ...CATALOG.map((tool) => tool.name)]).size;

const SERVERS = { big: { command: "big" }, fx: { command: "fx" }, broken: { command: "broken" } };
const make = (command: string) => {
	if (command === "broken") throw new Error("fixture crash: missing API_KEY");
	return () => fixtureServer(command === "big");
};

const opened: (() => Promise<void>)[] = [];
after(async () => {
	for (const close of opened) await close();
});

async function makeSession(): Promise<Session> {
	const open = await memorySession(SERVERS, make);
	opened.push(open.close);
	return open.session;
}

describe("the tools action", async () => {
	const session = await makeSession();
	const run = async (params: Params) => textOf(await runAction(session, params, undefined, undefined));

	test("a plain phrase over a large server: ranked, best first, `name — description`, 10 by default", async () => {
		const text = await run({ action: "tools", server: "big", query: "make a new folder" });
		const lines = text.split("\n");
		assert.match(lines[0] ?? "", /^big: \d+ tools match "make a new folder", best first$/);
		// A tool's hints in words follow its name; the description is cut near 120 characters.
		assert.match(
			lines[1] ?? "",
			/^create_directory( \[[\w, -]+\])? — Create a new directory or ensure a directory exists\. .*…$/,
		);
		assert.ok(((lines[1] ?? "").split(" — ")[1] ?? "").length <= 120, lines[1]);
		// 10 tools, the header, the server's instructions (2 lines: given with the first listing), the paging line.
		assert.equal(lines.length, 14, text);
		assert.match(lines[13] ?? "", /^… \d+ more: cursor 10$/);
		// Typos, plurals and synonyms reach the same tool.
		assert.match(
			await run({ action: "tools", server: "big", query: "comit histroy", limit: 3 }),
			/\n(git_log|list_commits)( \[[\w, -]+\])? — /,
		);
		assert.match(
			await run({ action: "tools", server: "big", query: "open a PR", limit: 1 }),
			/\ncreate_pull_request( \[[\w, -]+\])? — /,
		);
		const none = await run({ action: "tools", server: "big", query: "zzqqxx" });
		const [header, lead, names] = none.split("\n");
		assert.equal(header, `big: no tool matches "zzqqxx" (${BIG} tools; list them without "query")`);
		// No match is the weakest: the server's names follow, within the result's budget, for the model to judge.
		assert.equal(lead, "Tools by name, to judge by meaning:");
		assert.match(names ?? "", /^\S+( \S+)+( … \(\d+ more; list them without "query"\))?$/);
	});

	test("a listing of 50 tools shows 50 lines and its paging line: never cut by the 2,000-character error sanitiser", async () => {
		const text = await run({ action: "tools", server: "big", limit: 50 });
		const lines = text.split("\n");
		assert.ok(text.length > 2000, `long enough to have been cut before (${text.length})`);
		assert.equal(lines[0], `big: ${BIG} tools`);
		assert.equal(lines.length, 52, text);
		assert.equal(lines[51], `… ${BIG - 50} more: cursor 50`);
		assert.doesNotMatch(text, /\[cut\]/);
		for (const line of lines.slice(1, 51)) assert.match(line, /^[\w.-]+( \[[\w, -]+\])?( — .+)?$/, line);
		const next = (await run({ action: "tools", server: "big", limit: 50, cursor: "50" })).split("\n");
		assert.equal(next.length, 52);
		assert.notEqual(next[1], lines[1]);
	});

	test("a query without a server searches every enabled server: `server/tool`, one line for a server that fails", async () => {
		const fresh = await makeSession();
		const before = fresh.runtime.status().map((status) => status.state);
		assert.deepEqual(before, ["idle", "idle", "idle"], "nothing connected before the search");
		const search = async () =>
			textOf(await runAction(fresh, { action: "tools", query: "echo the text back", limit: 3 }, undefined, undefined));
		const answers = [await search()];
		while (/still starting, not searched: /.test(answers.at(-1) ?? "") && answers.length < 10) answers.push(await search());
		const text = answers.at(-1) ?? "";
		const lines = text.split("\n");
		assert.match(lines[0] ?? "", /^\d+ tools match "echo the text back" across 2 servers, best first$/);
		assert.deepEqual(
			lines
				.slice(1, 3)
				.map((line) => line.split(" — ")[0])
				.sort(),
			["big/echo", "fx/echo"],
			text,
		);
		const failed = lines.filter((line) => line.startsWith("broken: not searched — "));
		assert.equal(failed.length, 1, text);
		assert.match(failed[0] ?? "", /fixture crash: missing API_KEY/);
		assert.equal(text.includes("\u001b"), false, "escapes stripped");
		const states = new Map(fresh.runtime.status().map((status) => [status.name, status.state]));
		assert.equal(states.get("big"), "ready");
		assert.equal(states.get("fx"), "ready");
		assert.equal(states.get("broken"), "failed");
		await assert.rejects(runAction(fresh, { action: "tools" }, undefined, undefined), {
			message: 'mcp tools: give "server" to list its tools, or "query" to search every server; action "status" lists servers',
		});
	});

	test("the index is built once per list: an unchanged tools/list keeps the same list object and index", async () => {
		const first = await session.runtime.tools("big");
		const second = await session.runtime.tools("big");
		assert.equal(second, first, "the runtime hands out the same list while the server's list is unchanged");
		const index = indexOf([{ server: "big", tools: first }]);
		assert.equal(indexOf([{ server: "big", tools: second }]), index);
	});
});
