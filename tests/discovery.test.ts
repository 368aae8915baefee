/**
 * Discovery through the `tools` action (issue 11), against real fixture servers: a large server
 * serving the bench catalog (273 real tool definitions), ranked search, listings that keep every
 * line, search across servers with one that fails, the index kept while the list is unchanged, and
 * the same end to end in the real Pi 1.6 with the faux model.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { runAction } from "../src/catalog/actions.ts";
import type { Params } from "../src/catalog/requests.ts";
import type { Session } from "../src/contracts.ts";
import { indexOf } from "../src/search/rank.ts";
import { MAX_NAMES, MIN_NAMES, WEAK_RESULT_CHARS } from "../src/search/weak.ts";
import { makeSandbox, runPiJson, type Sandbox, toolResults } from "./helpers/pi.ts";
import { CRASH, SERVER } from "./helpers/servers.ts";
import { openSession } from "./helpers/session.ts";

const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const CATALOG = new URL("../bench/data/mcp-tool-catalog.json", import.meta.url).pathname;

const SERVERS = {
	big: { command: process.execPath, args: [SERVER, "stdio"], env: { FIXTURE_CATALOG: CATALOG } },
	fx: { command: process.execPath, args: [SERVER, "stdio"] },
	broken: { command: process.execPath, args: [CRASH] },
};

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
	for (const cleanup of cleanups) await cleanup();
});

async function makeSession(servers: Record<string, unknown>): Promise<Session> {
	const { session, close } = await openSession(servers, "pi-mcp-discovery-");
	cleanups.push(close);
	return session;
}

const textOf = (result: { content: readonly { type: string; text?: string }[] }) =>
	result.content
		.filter((block) => block.type === "text")
		.map((block) => block.text)
		.join("");

describe("the tools action", async () => {
	const session = await makeSession(SERVERS);
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
		assert.equal(header, 'big: no tool matches "zzqqxx" (285 tools; list them without "query")');
		// No match is the weakest: the server's names follow, within the result's budget, for the model to judge.
		assert.equal(lead, "Tools by name, to judge by meaning:");
		assert.match(names ?? "", /^\S+( \S+)+( … \(\d+ more; list them without "query"\))?$/);
	});

	test("a listing of 50 tools shows 50 lines and its paging line: never cut by the 2,000-character error sanitiser", async () => {
		const text = await run({ action: "tools", server: "big", limit: 50 });
		const lines = text.split("\n");
		assert.ok(text.length > 2000, `long enough to have been cut before (${text.length})`);
		assert.equal(lines[0], "big: 285 tools");
		assert.equal(lines.length, 52, text);
		assert.equal(lines[51], "… 235 more: cursor 50");
		assert.doesNotMatch(text, /\[cut\]/);
		for (const line of lines.slice(1, 51)) assert.match(line, /^[\w.-]+( \[[\w, -]+\])?( — .+)?$/, line);
		const next = (await run({ action: "tools", server: "big", limit: 50, cursor: "50" })).split("\n");
		assert.equal(next.length, 52);
		assert.notEqual(next[1], lines[1]);
	});

	test("a query without a server searches every enabled server: `server/tool`, one line for a server that fails", async () => {
		const fresh = await makeSession(SERVERS);
		const before = fresh.runtime.status().map((status) => status.state);
		assert.deepEqual(before, ["idle", "idle", "idle"], "nothing connected before the search");
		const search = async () =>
			textOf(await runAction(fresh, { action: "tools", query: "echo the text back", limit: 3 }, undefined, undefined));
		// On a loaded machine a server may take longer than the search's budget to start: the answer names it,
		// and the next search includes it (issue 20).
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
		assert.match(failed[0] ?? "", /fixture crash: missing API_KEY|exited|closed/);
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

describe("discovery in a real Pi", () => {
	const sandboxes: Sandbox[] = [];
	after(async () => {
		await Promise.all(sandboxes.map((sandbox) => sandbox.cleanup()));
	});

	async function sandboxWith(servers: Record<string, unknown>): Promise<Sandbox> {
		const sandbox = await makeSandbox();
		sandboxes.push(sandbox);
		await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
		return sandbox;
	}

	test("the model searches a large server with a plain phrase, calls the first result and gets its answer", async () => {
		const sandbox = await sandboxWith({ big: SERVERS.big });
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			prompt: "make a folder called notes",
			script: [
				{ tool: "mcp", args: { action: "tools", server: "big", query: "make a new folder" } },
				{
					tool: "mcp",
					args: { action: "call", server: "big", tool: "{{match:\\n(\\S+)(?: \\[[^\\]]*\\])? — }}", args: { path: "notes" } },
				},
				{ text: "FINAL {{last}}" },
			],
			timeoutMs: 60_000,
		});
		assert.equal(run.code, 0, run.stderr);
		const [search, call] = toolResults(run.events);
		assert.match(
			search?.text ?? "",
			/^big: \d+ tools match "make a new folder", best first\ncreate_directory( \[[\w, -]+\])? — /,
		);
		assert.equal(call?.isError, false, call?.text);
		assert.equal(call?.text, 'create_directory ran with {"path":"notes"}');
		assert.match(run.stdout, /FINAL create_directory ran with/);
	});

	test("a query no tool name answers: the answer says so and names the related tools (20–40, not all), within its budget", async () => {
		const sandbox = await sandboxWith({ big: SERVERS.big });
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			prompt: "which dependencies are vulnerable",
			env: { PI_FAUX_TOKENS_PER_SECOND: "50" },
			script: [
				{ tool: "mcp", args: { action: "tools", server: "big", query: "vulnerable dependencies" } },
				{ tool: "mcp", args: { action: "call", server: "big", tool: "list_dependabot_alerts", args: { owner: "o", repo: "r" } } },
				{ text: "FINAL {{last}}" },
			],
			timeoutMs: 60_000,
		});
		assert.equal(run.code, 0, run.stderr);
		const [search, call] = toolResults(run.events);
		const text = search?.text ?? "";
		assert.match(text, /\n(Weak match: .*|Tools by name, to judge by meaning:)\n/, text);
		assert.ok(text.split(/\s+/).includes("list_dependabot_alerts"), `the tool is in the names the model reads:\n${text}`);
		// The budget is the search's; the server's instructions (given once, at most ~1 KiB) come on top.
		const searched = text.split('\nInstructions from MCP server "big"')[0] ?? "";
		const names =
			searched
				.split("\n")
				.at(-1)
				?.replace(/ … \(.*$/, "")
				.split(" ") ?? [];
		assert.ok(names.length >= MIN_NAMES && names.length <= MAX_NAMES, `${names.length} names, not the server's every name`);
		assert.ok(searched.length <= WEAK_RESULT_CHARS, `${searched.length} characters`);
		assert.equal(call?.isError, false, call?.text);
	});

	test("a search across servers with one failing server still answers, and the model calls what it found", async () => {
		const log = "${WIRE}";
		const sandbox = await sandboxWith({
			big: { ...SERVERS.big, env: { ...SERVERS.big.env, FIXTURE_LOG: log } },
			fx: { ...SERVERS.fx, env: { FIXTURE_LOG: log } },
			broken: SERVERS.broken,
		});
		const wire = join(sandbox.root, "wire.log");
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			prompt: "echo hello",
			// The search starts the servers while it is written (issue 20), as a real model's pace allows; the
			// call's end waits for a first listing, which a loaded machine may take seconds to reach.
			env: { PI_FAUX_TOKENS_PER_SECOND: "50", WIRE: wire, PI_FAUX_HOLD_FILE: wire, PI_FAUX_HOLD_TEXT: '"method":"tools/list"' },
			script: [
				{ tool: "mcp", args: { action: "tools", query: "echo the text back", limit: 1 } },
				{
					tool: "mcp",
					args: {
						action: "call",
						server: "{{match:\\n([^/\\s]+)/}}",
						tool: "{{match:\\n[^/\\s]+/(\\S+)(?: \\[[^\\]]*\\])? — }}",
						args: { text: "hello" },
					},
				},
				{ text: "FINAL {{last}}" },
			],
			timeoutMs: 60_000,
		});
		assert.equal(run.code, 0, run.stderr);
		const [search, call] = toolResults(run.events);
		assert.equal(search?.isError, false);
		// `big` (285 tools) may still be starting on a loaded machine: the answer then names it (issue 20).
		assert.match(search?.text ?? "", /across [12] servers?, best first\n(big|fx)\/echo — Echo the text back\n/);
		assert.match(search?.text ?? "", /\nbroken: not searched — .+/);
		assert.equal(call?.isError, false, call?.text);
		assert.match(call?.text ?? "", /hello$/);
	});
});
