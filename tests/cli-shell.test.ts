/**
 * `pi-mcp` as a newcomer found it (issue 46, item 6), run as a user runs it (its own process, real
 * fixture servers): errors that stay on a 24-row screen with a "did you mean", one exit-code rule,
 * options after the arguments, `get` that starts nothing, `doctor`'s instructions in one line, binary
 * content never named by a path that vanishes, and edits that write only what they mean.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { makeSandbox, type Sandbox } from "./helpers/pi.ts";
import { readWire, SERVER } from "./helpers/servers.ts";

const BIN = new URL("../bin/pi-mcp.mjs", import.meta.url).pathname;

type Run = Readonly<{ code: number | null; stdout: string; stderr: string }>;

function run(box: Sandbox, args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<Run> {
	const child = spawn(process.execPath, [BIN, ...args], { cwd: box.cwd, env: { ...box.env, TMPDIR: box.root, ...env } });
	const out: Buffer[] = [];
	const err: Buffer[] = [];
	child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
	child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
	const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
	return new Promise((resolve) =>
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
		}),
	);
}

const lastLines = (text: string, count: number) => text.trimEnd().split("\n").slice(-count).join("\n");

const state: { box?: Sandbox } = {};
const box = (): Sandbox => state.box as Sandbox;
const userFile = () => join(box().agentDir, "mcp.json");
const log = () => join(box().root, "wire.log");
const instructionsFile = () => join(box().root, "instructions.txt");

/** The user file: `notes` (the fixture, logging what it receives), `spare` (disabled), `token` (bearer, variable unset). */
const SERVERS = () => ({
	notes: {
		command: process.execPath,
		args: [SERVER],
		env: { FIXTURE_LOG: log(), FIXTURE_INSTRUCTIONS: instructionsFile() },
	},
	spare: { command: process.execPath, args: [SERVER], enabled: false },
	token: { url: "http://127.0.0.1:9/mcp", auth: "bearer", bearerTokenEnv: "PI_MCP_TEST_UNSET_TOKEN" },
});

before(async () => {
	state.box = await makeSandbox();
	await writeFile(instructionsFile(), "Use notes for the team's notes.\nSecond line of the instructions.\nThird line.\n");
	await writeFile(userFile(), `${JSON.stringify({ mcpServers: SERVERS() }, null, 2)}\n`);
	await mkdir(join(box().cwd, ".pi"), { recursive: true });
});
after(() => state.box?.cleanup());

describe("errors a 24-row terminal keeps on screen", () => {
	test("an unknown command: the error and a did-you-mean are the last lines, no help after them (exit 2)", async () => {
		const typo = await run(box(), ["lsit"]);
		assert.equal(typo.code, 2);
		assert.equal(typo.stdout, "");
		assert.ok(typo.stderr.split("\n").length <= 3, typo.stderr);
		assert.match(lastLines(typo.stderr, 2), /unknown command "lsit"; did you mean "list"\?/);
		const json = await run(box(), ["--json", "lsit"]);
		assert.deepEqual(JSON.parse(json.stdout), {
			error: { message: 'unknown command "lsit"; did you mean "list"?', code: "usage" },
		});
		const option = await run(box(), ["tools", "--frob"]);
		assert.equal(option.code, 2);
		assert.match(lastLines(option.stderr, 1), /^pi-mcp: unknown option '--frob'$/, "a usage error's help comes before it");
	});

	test("unknown tool, prompt and argument names are usage errors (exit 2) with a did-you-mean, as servers are", async () => {
		const server = await run(box(), ["tools", "ntoes"]);
		assert.equal(server.code, 2);
		assert.match(server.stderr, /did you mean "notes"\?/);
		const call = await run(box(), ["call", "notes", "ecoh", '{"text":"x"}']);
		assert.equal(call.code, 2, call.stderr);
		assert.match(call.stderr, /MCP server "notes" has no tool "ecoh"; did you mean "echo"\?/);
		const describe = await run(box(), ["describe", "notes", "ad"]);
		assert.equal(describe.code, 2, describe.stderr);
		assert.match(describe.stderr, /has no tool "ad"; did you mean "add"\?/);
		const far = await run(box(), ["call", "notes", "zzzzzzzz"]);
		assert.equal(far.code, 2);
		assert.match(far.stderr, /has no tool "zzzzzzzz"; it has: .*echo/);
		const prompt = await run(box(), ["prompt", "notes", "gret", "name=Ada"]);
		assert.equal(prompt.code, 2, prompt.stderr);
		assert.match(prompt.stderr, /MCP server "notes" has no prompt "gret"; did you mean "greet"\?/);
		const argument = await run(box(), ["prompt", "notes", "greet", "nmae=Ada"]);
		assert.equal(argument.code, 2, argument.stderr);
		assert.match(argument.stderr, /prompt "greet" of MCP server "notes" has no argument "nmae"; did you mean "name"\?/);
		const good = await run(box(), ["prompt", "notes", "greet", "name=Ada"]);
		assert.equal(good.code, 0, good.stderr);
		assert.match(good.stdout, /^user: Please greet Ada/);
	});

	test("an unset bearer variable is a configuration error (exit 2), not a sign-in (3); --help says the rule", async () => {
		const unset = await run(box(), ["call", "token", "whoami"]);
		assert.equal(unset.code, 2, unset.stderr);
		assert.match(unset.stderr, /bearerTokenEnv PI_MCP_TEST_UNSET_TOKEN is not set/);
		const help = await run(box(), ["--help"]);
		assert.match(
			help.stdout,
			/2 usage or configuration error \(an unknown command, option, server, tool, prompt or\nargument name/,
		);
		const importHelp = await run(box(), ["import", "--help"]);
		assert.match(
			importHelp.stdout,
			/Exit 1 when some entries were imported and others skipped \(each named\); 2 when none was\./,
		);
	});
});

describe("the command line", () => {
	test("options after the arguments (tools notes --json), and -- still ends them", async () => {
		const json = await run(box(), ["tools", "notes", "--json"]);
		assert.equal(json.code, 0, json.stderr);
		assert.ok((JSON.parse(json.stdout) as { tools: unknown[] }).tools.length > 0);
		const query = await run(box(), ["tools", "notes", "--", "--json"]);
		assert.equal(query.code, 0, query.stderr);
		assert.throws(() => JSON.parse(query.stdout), "after --, --json is the query");
		const called = await run(box(), ["call", "notes", "add", '{"a":2,"b":3}', "--json"]);
		assert.equal(called.code, 0, called.stderr);
		assert.equal((JSON.parse(called.stdout) as { content: { text: string }[] }).content[0]?.text, "5");
		const dash = await run(box(), ["tools", "notes", "-x"]);
		assert.equal(dash.code, 2);
		assert.match(dash.stderr, /unknown option '-x' \(an argument that starts with - goes after --\)/);
	});

	test("add name cmd args without -- says to put -- before the command, and writes nothing", async () => {
		const before = await readFile(userFile(), "utf8");
		const add = await run(box(), ["add", "files", "npx", "-y", "@modelcontextprotocol/server-filesystem"]);
		assert.equal(add.code, 2);
		assert.match(add.stderr, /give one server name, then -- before the server's command: pi-mcp add files -- npx …/);
		assert.equal(await readFile(userFile(), "utf8"), before);
	});
});

describe("commands that say only what they did", () => {
	test("get shows the entry and starts nothing; --connect connects for the instructions", async () => {
		const seen = readWire(log()).length;
		const get = await run(box(), ["get", "notes"]);
		assert.equal(get.code, 0, get.stderr);
		assert.match(get.stdout, /state: enabled/);
		assert.doesNotMatch(get.stdout + get.stderr, /instructions|connecting/);
		assert.equal(readWire(log()).length, seen, "no server process received anything");
		const connected = await run(box(), ["get", "notes", "--connect"]);
		assert.equal(connected.code, 0, connected.stderr);
		assert.match(connected.stdout, /instructions:\n {2}Use notes for the team's notes\.\n {2}Second line/);
		assert.ok(readWire(log()).length > seen, "--connect did connect");
	});

	test("doctor prints the first line of a server's instructions, the rest with --verbose", async () => {
		const doctor = await run(box(), ["doctor"]);
		assert.match(doctor.stdout, /instructions: Use notes for the team's notes\. \(2 more lines: --verbose\)\n/);
		assert.doesNotMatch(doctor.stdout, /Second line/);
		const verbose = await run(box(), ["doctor", "--verbose"]);
		assert.match(
			verbose.stdout,
			/instructions: Use notes for the team's notes\.\n +Second line of the instructions\.\n +Third line\./,
		);
	});

	test("read of an image names no file that vanishes: without --out it says it was not kept; with --out the file stays", async () => {
		const read = await run(box(), ["read", "notes", "fixture://logo.png"]);
		assert.equal(read.code, 0, read.stderr);
		assert.match(read.stdout, /^\[image\/png, \d+ B: not kept; pass --out <dir> to save it\]$/m);
		assert.doesNotMatch(read.stdout + read.stderr, /saved to|removed when/);
		const out = join(box().root, "kept");
		const kept = await run(box(), ["read", "notes", "fixture://logo.png", "--out", out]);
		assert.equal(kept.code, 0, kept.stderr);
		const path = /saved to (\S+)\]/.exec(kept.stdout)?.[1];
		assert.ok(path?.startsWith(out) && path.endsWith(".png") && existsSync(path), kept.stdout);
		const image = await run(box(), ["call", "notes", "images", '{"count":1}']);
		assert.equal(image.code, 0, image.stderr);
		assert.match(image.stdout, /\[image\/png, \d+ B: not kept; pass --out <dir> to save it\]/);
	});
});

describe("editing one tool", () => {
	test("disable <server> <tool> prints the filter as JSON lines (no literal \\n); a tool the server lacks is refused (exit 2), file untouched", async () => {
		const before = await readFile(userFile(), "utf8");
		const typo = await run(box(), ["disable", "notes", "ecoh"]);
		assert.equal(typo.code, 2, typo.stderr);
		assert.match(typo.stderr, /MCP server "notes" has no tool "ecoh"; did you mean "echo"\?/);
		assert.equal(await readFile(userFile(), "utf8"), before, "nothing written");
		const off = await run(box(), ["disable", "notes", "echo"]);
		assert.equal(off.code, 0, off.stderr);
		assert.equal(off.stdout.includes("\\n"), false, off.stdout);
		assert.match(
			off.stdout,
			/^Hid tool "echo" of "notes" in the user file .*mcp\.json from the model:\n\{\n {2}"excludeTools": \[\n {4}"echo"\n {2}\]\n\}\n$/,
		);
		const again = await run(box(), ["disable", "notes", "echo"]);
		assert.equal(again.code, 0, again.stderr);
		assert.match(again.stdout, /already hidden from the model; nothing was changed/);
		const typoOn = await run(box(), ["enable", "notes", "ecoh"]);
		assert.equal(typoOn.code, 2);
		assert.match(typoOn.stderr, /tool "ecoh" of "notes" is not hidden; did you mean "echo"\?/);
		const on = await run(box(), ["enable", "notes", "echo"]);
		assert.equal(on.code, 0, on.stderr);
		assert.equal(on.stdout.includes("\\n"), false, on.stdout);
		assert.equal(await readFile(userFile(), "utf8"), before, "showing it again restores the file");
		// A disabled server is started for the check too; --force writes a name without checking.
		const spare = await run(box(), ["disable", "spare", "ech"]);
		assert.equal(spare.code, 2, spare.stderr);
		assert.match(spare.stderr, /did you mean "echo"\?/);
		const forced = await run(box(), ["disable", "spare", "later-tool", "--force"]);
		assert.equal(forced.code, 0, forced.stderr);
		assert.deepEqual(JSON.parse(await readFile(userFile(), "utf8")).mcpServers.spare.excludeTools, ["later-tool"]);
	});

	test('enable removes "enabled": false instead of writing true: disable then enable gives the file back', async () => {
		const before = await readFile(userFile(), "utf8");
		const off = await run(box(), ["disable", "notes"]);
		assert.equal(off.code, 0, off.stderr);
		assert.match(await readFile(userFile(), "utf8"), /"enabled": false/);
		const on = await run(box(), ["enable", "notes"]);
		assert.equal(on.code, 0, on.stderr);
		assert.equal(await readFile(userFile(), "utf8"), before);
	});
});

describe("import's exit code says what was written", () => {
	test("some imported and some skipped: exit 1; none imported: exit 2", async () => {
		const file = join(box().root, "claude.json");
		await writeFile(
			file,
			JSON.stringify({ mcpServers: { fresh: { command: "fresh-cmd" }, old: { type: "sse", url: "https://x/sse" } } }),
		);
		const partly = await run(box(), ["import", "claude-desktop", file]);
		assert.equal(partly.code, 1, partly.stderr);
		assert.match(partly.stdout, /Imported 1 of 2 servers/);
		assert.equal(JSON.parse(await readFile(userFile(), "utf8")).mcpServers.fresh.command, "fresh-cmd");
		const none = await run(box(), ["import", "claude-desktop", file]);
		assert.equal(none.code, 2, none.stderr);
		assert.match(none.stdout, /Imported 0 of 2 servers/);
	});
});
