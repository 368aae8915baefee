/**
 * `pi-mcp` in process (`main()`, tests/helpers/shell.ts) where no server starts: help, usage errors and
 * their exit codes, errors that stay on a 24-row screen with a "did you mean", JSON errors, the version
 * and the words a message's next step is said in. The binary itself: tests/cli-bin.test.ts.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { after, before, test } from "node:test";
import { lastLines, type ShellBox, shell, shellBox } from "../helpers/shell.ts";

const COMMANDS = ["list", "tools", "call", "login", "logout", "doctor"];

const state: { box?: ShellBox } = {};
const box = (): ShellBox => state.box as ShellBox;

before(async () => {
	state.box = await shellBox();
	const servers = {
		fixture: { command: "fixture-cmd", description: "the fixture server" },
		broken: { command: "broken-cmd" },
		off: { command: "fixture-cmd", enabled: false },
		bad: { command: 42 },
		token: { url: "http://127.0.0.1:9/mcp", auth: "bearer", bearerTokenEnv: "PI_MCP_TEST_UNSET_TOKEN" },
	};
	await writeFile(box().userFile, `${JSON.stringify({ mcpServers: servers }, null, 2)}\n`);
	await writeFile(box().projectFile, JSON.stringify({ mcpServers: { local: { command: "local-cmd" } } }));
});
after(() => state.box?.cleanup());

test("--help on the command and on every subcommand; no command prints the help and exits 2", async () => {
	const main = await shell(box(), ["--help"]);
	assert.equal(main.code, 0);
	for (const command of COMMANDS) assert.match(main.stdout, new RegExp(`^  ${command}\\b`, "m"));
	assert.match(
		main.stdout,
		/2 usage or configuration error \(an unknown command, option, server, tool, prompt or\nargument name/,
	);
	for (const command of COMMANDS) {
		const help = await shell(box(), [command, "--help"]);
		assert.equal(help.code, 0, help.stderr);
		assert.match(help.stdout, new RegExp(`^Usage: pi-mcp ${command}\\b`), command);
		assert.match(help.stdout, /Exit codes: 0 ok, 1 failed, 2 usage/);
	}
	const importHelp = await shell(box(), ["import", "--help"]);
	assert.match(importHelp.stdout, /Exit 1 when some entries were imported and others skipped \(each named\); 2 when none was\./);
	const none = await shell(box(), []);
	assert.equal(none.code, 2);
	assert.match(none.stdout, /^pi-mcp: the MCP servers/);
});

test("an unknown command: the error and a did-you-mean are the last lines, no help after them (exit 2)", async () => {
	const unknown = await shell(box(), ["frobnicate"]);
	assert.equal(unknown.code, 2);
	assert.match(unknown.stderr, /unknown command "frobnicate"/);
	const typo = await shell(box(), ["lsit"]);
	assert.equal(typo.code, 2);
	assert.equal(typo.stdout, "");
	assert.ok(typo.stderr.split("\n").length <= 3, typo.stderr);
	assert.match(lastLines(typo.stderr, 2), /unknown command "lsit"; did you mean "list"\?/);
	const json = await shell(box(), ["--json", "lsit"]);
	assert.deepEqual(JSON.parse(json.stdout), {
		error: { message: 'unknown command "lsit"; did you mean "list"?', code: "usage" },
	});
});

test("an unknown option: exit 2, the command's help first and the error last; with --json, the error alone on stdout", async () => {
	const option = await shell(box(), ["list", "--frob"]);
	assert.equal(option.code, 2);
	assert.match(option.stderr, /^Usage: pi-mcp list/);
	assert.match(lastLines(option.stderr, 1), /^pi-mcp: unknown option '--frob'$/, "a usage error's help comes before it");
	const json = await shell(box(), ["--json", "list", "--frob"]);
	assert.equal(json.code, 2);
	assert.equal(json.stderr, "");
	assert.deepEqual(JSON.parse(json.stdout), { error: { message: "unknown option '--frob'", code: "usage" } });
});

test("an unknown server: exit 2 naming the configured ones (escaped), the close one, and --approve; JSON errors on stdout", async () => {
	const unknown = await shell(box(), ["tools", "nope"]);
	assert.equal(unknown.code, 2);
	assert.match(
		unknown.stderr,
		/unknown MCP server "nope"; configured: fixture, broken, off, bad, token \(the project file is read only with --approve\)/,
	);
	const near = await shell(box(), ["tools", "fixtrue"]);
	assert.equal(near.code, 2);
	assert.match(near.stderr, /did you mean "fixture"\?/);
	const hostile = await shell(box(), ["tools", "nope\u001b[2J\u202e"]);
	assert.equal(hostile.code, 2);
	assert.ok(hostile.stderr.includes(String.raw`unknown MCP server "nope\u001b[2J\u202e"; configured: fixture`), hostile.stderr);
	assert.equal(hostile.stderr.includes("\u001b") || hostile.stderr.includes("\u202e"), false, JSON.stringify(hostile.stderr));
	const json = await shell(box(), ["--json", "tools", "nope"]);
	assert.equal(json.code, 2);
	assert.equal(json.stderr, "");
	const error = JSON.parse(json.stdout).error as { message: string; code: string };
	assert.equal(error.code, "usage");
	assert.match(error.message, /^unknown MCP server "nope"/);
});

test("an unset bearer variable is a configuration error (exit 2), not a sign-in (3)", async () => {
	const unset = await shell(box(), ["call", "token", "whoami"]);
	assert.equal(unset.code, 2, unset.stderr);
	assert.match(unset.stderr, /bearerTokenEnv PI_MCP_TEST_UNSET_TOKEN is not set/);
	const json = await shell(box(), ["call", "--json", "token", "whoami"]);
	assert.equal(json.code, 2);
	assert.equal(JSON.parse(json.stdout).error.code, "configuration");
});

test("add name cmd args without -- says to put -- before the command, and writes nothing", async () => {
	const before = await readFile(box().userFile, "utf8");
	const add = await shell(box(), ["add", "files", "npx", "-y", "@modelcontextprotocol/server-filesystem"]);
	assert.equal(add.code, 2);
	assert.match(
		add.stderr,
		/^pi-mcp: add: give one server name, then -- before the server's command: pi-mcp add files -- npx …$/m,
	);
	assert.equal(await readFile(box().userFile, "utf8"), before);
});

test("--version: package.json's version, the one servers see in clientInfo", async () => {
	const { VERSION } = await import("../../src/session.ts");
	const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
	assert.equal(VERSION, pkg.version);
	const version = await shell(box(), ["--version"]);
	assert.equal(version.code, 0);
	assert.equal(version.stdout, `pi-mcp ${pkg.version}\n`);
	assert.deepEqual(JSON.parse((await shell(box(), ["--version", "--json"])).stdout), { version: pkg.version });
});

test("a message's next step is data, worded by each front end: Pi's /mcp, the shell's pi-mcp, no paste hint in the shell", async () => {
	const { SHELL_WORDS } = await import("../../src/cli/main.ts");
	const { PI_WORDS } = await import("../../src/errors.ts");
	const { notices, linkText } = await import("../../src/login.ts");
	const { missingVariable } = await import("../../src/auth/record.ts");
	const config = { name: "fx" } as Parameters<typeof missingVariable>[0];
	for (const [words, reconnect, login] of [
		[PI_WORDS, "/mcp reconnect fx", "/mcp login fx"],
		[SHELL_WORDS, "pi-mcp doctor", "pi-mcp login fx"],
	] as const) {
		const missing = missingVariable(config, "bearerTokenEnv", "TOKEN", words);
		assert.deepEqual(missing.hint, { kind: "reconnect", server: "fx" });
		assert.ok(missing.message.endsWith(`then run ${reconnect}.`), missing.message);
		assert.match(notices.failed("fx", "boom", words), new RegExp(`Run ${login} for a new link\\.$`));
		const link = linkText((_config, text) => text, config, { reason: "login", url: "https://as.example/a" } as never, words);
		assert.equal(link.includes("can be pasted with"), words === PI_WORDS, link);
	}
});
