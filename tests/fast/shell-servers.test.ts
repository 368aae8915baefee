/**
 * `pi-mcp` in process over in-memory servers (the SDK's pairs through `CliIo.transports`): what the
 * shell says about servers and their tools, prompts and resources, "did you mean" for each name, one
 * exit-code rule, options after the arguments, `get` that starts nothing, binary content never named by
 * a path that vanishes, hiding one tool checked against the server's list, and escapes in every output.
 * The same commands against real processes: tests/cli.test.ts.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { McpServer } from "@modelcontextprotocol/server";
import { hostileServer } from "../fixtures/hostile-server.mjs";
import { type MemoryTransports, memoryTransports } from "../helpers/memory.ts";
import { notesServer, type ShellBox, type ShellOptions, shell, shellBox } from "../helpers/shell.ts";

const INSTRUCTIONS = "Use notes for the team's notes.\nSecond line of the instructions.\nThird line.\n";

/** The hostile server, without the SDK's console warnings about its names (they are deliberate). */
function quietHostile(): McpServer {
	const warn = console.warn;
	console.warn = () => undefined;
	try {
		return hostileServer();
	} finally {
		console.warn = warn;
	}
}

/** Every command names its server's program: `hostile-cmd` is the hostile server, anything else the notes server. */
const make = (command: string): (() => McpServer) => (command === "hostile-cmd" ? quietHostile : notesServer(INSTRUCTIONS));

const legacy = (command: string, extra: Readonly<Record<string, unknown>> = {}) => ({
	command,
	protocolVersion: "legacy",
	...extra,
});

/** The user file: `notes`, `fixture` (described), `spare` (disabled), `bad` (invalid), `hostile`, `evil` (also in the project file). */
const SERVERS = {
	notes: legacy("notes-cmd"),
	fixture: legacy("fixture-cmd", { description: "the fixture server" }),
	spare: legacy("notes-cmd", { enabled: false }),
	bad: { command: 42 },
	hostile: legacy("hostile-cmd"),
	evil: legacy("notes-cmd"),
};

const state: { box?: ShellBox; memory?: MemoryTransports } = {};
const box = (): ShellBox => state.box as ShellBox;
const memory = (): MemoryTransports => state.memory as MemoryTransports;
const run = (args: readonly string[], options: ShellOptions = {}) =>
	shell(box(), args, { transports: memory().transports, ...options });
const userText = () => readFile(box().userFile, "utf8");

before(async () => {
	state.box = await shellBox();
	state.memory = memoryTransports(make);
	await writeFile(box().userFile, `${JSON.stringify({ mcpServers: SERVERS }, null, 2)}\n`);
	await writeFile(
		box().projectFile,
		JSON.stringify({ mcpServers: { local: legacy("notes-cmd"), evil: legacy("notes-cmd", { args: ["project"] }) } }),
	);
});
after(() => state.box?.cleanup());

describe("reading servers", () => {
	test("list: every server with state and source, nothing started; the project file only with --approve; --json parses", async () => {
		const started = memory().made.length;
		const listed = await run(["list"]);
		assert.equal(listed.code, 2, "an invalid entry (bad) makes list exit 2");
		assert.match(listed.stdout, /fixture: idle · stdio — the fixture server/);
		assert.match(listed.stdout, new RegExp(`source: ${box().userFile}`));
		assert.match(listed.stdout, /spare: disabled/);
		assert.match(listed.stdout, /bad: invalid/);
		assert.match(listed.stdout, /error: server "bad" \(.*mcp\.json\): field "command"/);
		assert.match(listed.stdout, /project: .*\.pi\/mcp\.json \(not read: project not trusted\)/);
		assert.doesNotMatch(listed.stdout, /local:/);

		const approved = await run(["--approve", "list", "--json"]);
		assert.equal(approved.code, 2, approved.stderr);
		const json = JSON.parse(approved.stdout) as { agentDir: string; servers: { name: string; state: string }[] };
		assert.equal(json.agentDir, box().agentDir);
		assert.deepEqual(
			json.servers.map((server) => `${server.name}:${server.state}`),
			["notes:idle", "fixture:idle", "spare:disabled", "bad:invalid", "hostile:idle", "evil:idle", "local:idle"],
		);
		const noted = await run(["--approve", "list"]);
		assert.match(noted.stdout, /note: project entry "evil" replaces the user file's entry of that name/);
		assert.equal(memory().made.length, started, "list starts no server");
	});

	test("tools: descriptions, app-only tools hidden, escapes stripped; a query searches; --json gives schemas; --approve reads the project", async () => {
		const tools = await run(["tools", "fixture"]);
		assert.equal(tools.code, 0, tools.stderr);
		assert.match(tools.stdout, /^echo — Echo the text back$/m);
		assert.match(tools.stdout, /^add — Add two numbers$/m);
		assert.doesNotMatch(tools.stdout, /app-only/, "app-only tools stay hidden");
		assert.match(tools.stdout, /^escapes — /m);
		assert.equal(tools.stdout.includes("\u001b"), false, "escapes stripped from descriptions");

		const found = await run(["tools", "--json", "fixture", "numbers"]);
		assert.equal(found.code, 0, found.stderr);
		const json = JSON.parse(found.stdout) as { tools: { name: string; inputSchema: { properties: object } }[] };
		assert.equal(json.tools[0]?.name, "add");
		assert.deepEqual(Object.keys(json.tools[0]?.inputSchema.properties ?? {}), ["a", "b"]);

		const local = await run(["tools", "--approve", "local"]);
		assert.equal(local.code, 0, local.stderr);
		assert.match(local.stdout, /^local: \d+ tools/);
	});

	test("search across servers; describe one tool", async () => {
		const found = await run(["search", "--json", "add", "numbers"]);
		assert.equal(found.code, 0, found.stderr);
		const hits = JSON.parse(found.stdout).results as { server: string; tool: string }[];
		assert.ok(
			hits.some((hit) => hit.tool === "add"),
			found.stdout,
		);
		const text = await run(["search", "add", "numbers"]);
		assert.equal(text.code, 0, text.stderr);
		assert.match(text.stdout, /^fixture\/add — Add two numbers$/m);
		const described = await run(["describe", "fixture", "add"]);
		assert.equal(described.code, 0, described.stderr);
		assert.match(described.stdout, /"a"/);
	});

	test("get shows the entry and starts nothing; --connect connects for the instructions", async () => {
		const started = memory().made.length;
		const get = await run(["get", "notes"]);
		assert.equal(get.code, 0, get.stderr);
		assert.match(get.stdout, /state: enabled/);
		assert.doesNotMatch(get.stdout + get.stderr, /instructions|connecting/);
		assert.equal(memory().made.length, started, "no server was started");
		const connected = await run(["get", "notes", "--connect"]);
		assert.equal(connected.code, 0, connected.stderr);
		assert.match(connected.stdout, /instructions:\n {2}Use notes for the team's notes\.\n {2}Second line/);
		assert.equal(memory().made.length, started + 1, "--connect did connect");
	});
});

describe("calling", () => {
	test("call: the result on stdout; --json; a tool error exits 1; bad JSON or non-object arguments exit 2", async () => {
		const echo = await run(["call", "fixture", "echo", '{"text":"hello from the shell"}']);
		assert.equal(echo.code, 0, echo.stderr);
		assert.equal(echo.stdout, "[memory] hello from the shell\n");
		const json = await run(["call", "--json", "fixture", "add", '{"a":2,"b":3}']);
		assert.equal(json.code, 0, json.stderr);
		assert.deepEqual(JSON.parse(json.stdout), {
			server: "fixture",
			tool: "add",
			isError: false,
			content: [{ type: "text", text: "5" }],
		});
		const failed = await run(["call", "fixture", "fail", '{"message":"nope"}']);
		assert.equal(failed.code, 1);
		assert.match(failed.stdout, /nope/);
		const bad = await run(["call", "fixture", "echo", "{text:"]);
		assert.equal(bad.code, 2);
		assert.match(bad.stderr, /not valid JSON/);
		const array = await run(["call", "fixture", "echo", "[1]"]);
		assert.equal(array.code, 2);
		assert.match(array.stderr, /the arguments must be one JSON object/);
	});

	test("long output is cut into a file: removed at exit, kept with --out; an image is saved only with --out", async () => {
		const cut = await run(["call", "fixture", "big", '{"bytes":120000}']);
		assert.equal(cut.code, 0, cut.stderr);
		const gonePath = /Full output: (\S+?)\]/.exec(cut.stdout)?.[1];
		assert.ok(gonePath, cut.stdout.slice(-300));
		assert.equal(existsSync(gonePath), false, "the overflow file goes when the command ends");
		assert.match(cut.stderr, /files named above are removed when this command exits; pass --out <dir> to keep them/);

		const kept = join(box().root, "kept");
		const big = await run(["call", "--out", kept, "fixture", "big", '{"bytes":120000}']);
		assert.equal(big.code, 0, big.stderr);
		const path = /Full output: (\S+?)\]/.exec(big.stdout)?.[1];
		assert.ok(
			path?.startsWith(`${kept}/`) && existsSync(path),
			`the overflow file named in the output exists: ${big.stdout.slice(-300)}`,
		);
		assert.equal((await readFile(path as string)).length, 120_000);

		const images = await run(["call", "--out", kept, "fixture", "images", '{"count":1}']);
		assert.equal(images.code, 0, images.stderr);
		const image = /\[image\/png, \d+ B saved to (\S+)\]/.exec(images.stdout)?.[1];
		assert.ok(image?.startsWith(`${kept}/`) && image.endsWith(".png") && existsSync(image), images.stdout);
		assert.deepEqual([...(await readFile(image as string)).subarray(1, 4)], [...Buffer.from("PNG")]);
		assert.match(images.stderr, /files named above are kept in /);

		// Without --out an image is not written at all (a path to a file removed at exit names nothing), and it says so.
		const gone = await run(["call", "fixture", "images", '{"count":1}']);
		assert.match(gone.stdout, /\[image\/png, \d+ B: not kept; pass --out <dir> to save it\]/);
		assert.doesNotMatch(gone.stdout, /saved to/);
	});

	test("read of an image names no file that vanishes: without --out it says it was not kept; with --out the file stays", async () => {
		const read = await run(["read", "notes", "fixture://logo.png"]);
		assert.equal(read.code, 0, read.stderr);
		assert.match(read.stdout, /^\[image\/png, \d+ B: not kept; pass --out <dir> to save it\]$/m);
		assert.doesNotMatch(read.stdout + read.stderr, /saved to|removed when/);
		const out = join(box().root, "kept-read");
		const kept = await run(["read", "notes", "fixture://logo.png", "--out", out]);
		assert.equal(kept.code, 0, kept.stderr);
		const path = /saved to (\S+)\]/.exec(kept.stdout)?.[1];
		assert.ok(path?.startsWith(out) && path.endsWith(".png") && existsSync(path), kept.stdout);
		const text = await run(["read", "notes", "fixture://readme"]);
		assert.equal(text.stdout, "readme\n");
	});

	test("prompt: the messages, role first", async () => {
		const good = await run(["prompt", "notes", "greet", "name=Ada"]);
		assert.equal(good.code, 0, good.stderr);
		assert.match(good.stdout, /^user: Please greet Ada/);
	});
});

describe("names and the command line", () => {
	test("unknown tool, prompt and argument names are usage errors (exit 2) with a did-you-mean, as servers are", async () => {
		const server = await run(["tools", "ntoes"]);
		assert.equal(server.code, 2);
		assert.match(server.stderr, /did you mean "notes"\?/);
		const call = await run(["call", "notes", "ecoh", '{"text":"x"}']);
		assert.equal(call.code, 2, call.stderr);
		assert.match(call.stderr, /MCP server "notes" has no tool "ecoh"; did you mean "echo"\?/);
		const describe = await run(["describe", "notes", "ad"]);
		assert.equal(describe.code, 2, describe.stderr);
		assert.match(describe.stderr, /has no tool "ad"; did you mean "add"\?/);
		const far = await run(["call", "notes", "zzzzzzzz"]);
		assert.equal(far.code, 2);
		assert.match(far.stderr, /has no tool "zzzzzzzz"; it has: .*echo/);
		const prompt = await run(["prompt", "notes", "gret", "name=Ada"]);
		assert.equal(prompt.code, 2, prompt.stderr);
		assert.match(prompt.stderr, /MCP server "notes" has no prompt "gret"; did you mean "greet"\?/);
		const argument = await run(["prompt", "notes", "greet", "nmae=Ada"]);
		assert.equal(argument.code, 2, argument.stderr);
		assert.match(argument.stderr, /prompt "greet" of MCP server "notes" has no argument "nmae"; did you mean "name"\?/);
	});

	test("options after the arguments (tools notes --json), and -- still ends them", async () => {
		const json = await run(["tools", "notes", "--json"]);
		assert.equal(json.code, 0, json.stderr);
		assert.ok((JSON.parse(json.stdout) as { tools: unknown[] }).tools.length > 0);
		const query = await run(["tools", "notes", "--", "--json"]);
		assert.equal(query.code, 0, query.stderr);
		assert.throws(() => JSON.parse(query.stdout), "after --, --json is the query");
		const called = await run(["call", "notes", "add", '{"a":2,"b":3}', "--json"]);
		assert.equal(called.code, 0, called.stderr);
		assert.equal((JSON.parse(called.stdout) as { content: { text: string }[] }).content[0]?.text, "5");
		const dash = await run(["tools", "notes", "-x"]);
		assert.equal(dash.code, 2);
		assert.match(dash.stderr, /unknown option '-x' \(an argument that starts with - goes after --\)/);
	});

	test("after --, a word is an argument even where it looks like an option; a project entry that replaces a user one is named", async () => {
		const smuggled = await run(["call", "evil", "echo", "--", "--approve"]);
		assert.equal(smuggled.code, 2);
		assert.match(smuggled.stderr, /not valid JSON/);
		assert.doesNotMatch(smuggled.stderr, /project file/);
		const shadow = await run(["call", "--approve", "evil", "echo", '{"text":"x"}']);
		assert.equal(shadow.code, 0, shadow.stderr);
		assert.match(shadow.stderr, /server "evil" comes from the project file .*replaces the user file's entry/);
	});

	test("--json output escapes C1 and bidi controls, from a tool's result and from a hostile server's listing", async () => {
		const echoed = await run(["call", "--json", "fixture", "echo", JSON.stringify({ text: "a\u009b2Jb\u009dc\u202ed" })]);
		const tools = await run(["tools", "--json", "hostile"]);
		assert.equal(tools.code, 0, tools.stderr);
		for (const output of [echoed.stdout, tools.stdout]) {
			assert.equal(/[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/.test(output), false, JSON.stringify(output.slice(0, 200)));
			JSON.parse(output);
		}
		assert.match(tools.stdout, /\\u202e/);
	});
});

describe("hiding one tool", () => {
	test("disable <server> <tool> prints the filter as JSON lines (no literal \\n); a tool the server lacks is refused (exit 2), file untouched", async () => {
		const before = await userText();
		const typo = await run(["disable", "notes", "ecoh"]);
		assert.equal(typo.code, 2, typo.stderr);
		assert.match(typo.stderr, /MCP server "notes" has no tool "ecoh"; did you mean "echo"\?/);
		assert.equal(await userText(), before, "nothing written");
		const off = await run(["disable", "notes", "echo"]);
		assert.equal(off.code, 0, off.stderr);
		assert.equal(off.stdout.includes("\\n"), false, off.stdout);
		assert.match(
			off.stdout,
			/^Hid tool "echo" of "notes" in the user file .*mcp\.json from the model:\n\{\n {2}"excludeTools": \[\n {4}"echo"\n {2}\]\n\}\n$/,
		);
		const again = await run(["disable", "notes", "echo"]);
		assert.equal(again.code, 0, again.stderr);
		assert.match(again.stdout, /already hidden from the model; nothing was changed/);
		const typoOn = await run(["enable", "notes", "ecoh"]);
		assert.equal(typoOn.code, 2);
		assert.match(typoOn.stderr, /tool "ecoh" of "notes" is not hidden; did you mean "echo"\?/);
		const on = await run(["enable", "notes", "echo"]);
		assert.equal(on.code, 0, on.stderr);
		assert.match(
			on.stdout,
			/^Showed tool "echo" of "notes" in the user file .*mcp\.json to the model; it has no tool filter left\.\n$/,
		);
		assert.equal(await userText(), before, "showing it again restores the file");
		// A disabled server is started for the check too; --force writes a name without checking.
		const spare = await run(["disable", "spare", "ech"]);
		assert.equal(spare.code, 2, spare.stderr);
		assert.match(spare.stderr, /did you mean "echo"\?/);
		const forced = await run(["disable", "spare", "later-tool", "--force"]);
		assert.equal(forced.code, 0, forced.stderr);
		assert.deepEqual(JSON.parse(await userText()).mcpServers.spare.excludeTools, ["later-tool"]);
		// Back as it was, for the other tests.
		await writeFile(box().userFile, before);
	});

	test('enable removes "enabled": false instead of writing true: disable then enable gives the file back', async () => {
		const before = await userText();
		const off = await run(["disable", "notes"]);
		assert.equal(off.code, 0, off.stderr);
		assert.match(await userText(), /"enabled": false/);
		const on = await run(["enable", "notes"]);
		assert.equal(on.code, 0, on.stderr);
		assert.equal(await userText(), before);
	});
});
