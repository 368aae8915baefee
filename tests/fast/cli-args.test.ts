/** The shell's argument handling, in process (no child, no server): where options may go and what `--` does. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseArgs, UsageError } from "../../src/cli/args.ts";

const usage = (pattern: RegExp) => (error: unknown) => error instanceof UsageError && pattern.test(error.message);

test("options go before or after the arguments, and before the command; each is checked against the command", () => {
	const after = parseArgs(["tools", "notes", "--json", "--timeout", "5"]);
	assert.deepEqual([after.command, after.args, after.flags.json, after.flags.timeout], ["tools", ["notes"], true, 5]);
	const call = parseArgs(["call", "notes", "add", '{"a":1}', "--approve"]);
	assert.deepEqual([call.args, call.flags.approve], [["notes", "add", '{"a":1}'], true]);
	const first = parseArgs(["--scope", "project", "remove", "x"]);
	assert.deepEqual([first.command, first.flags.scope], ["remove", "project"]);
	assert.throws(() => parseArgs(["--scope", "project", "tools", "x"]), usage(/^option --scope does not apply to pi-mcp tools$/));
	assert.equal(parseArgs(["doctor", "--verbose"]).flags.verbose, true);
	assert.equal(parseArgs(["get", "x", "--connect"]).flags.connect, true);
	assert.throws(() => parseArgs(["list", "--verbose"]), usage(/does not apply to pi-mcp list/));
});

test("-- still ends the options; an unknown option after an argument says how to pass it as one", () => {
	const query = parseArgs(["search", "x", "--", "--approve"]);
	assert.deepEqual([query.args, query.flags.approve], [["x", "--approve"], false]);
	assert.throws(
		() => parseArgs(["search", "foo", "-x"]),
		usage(/^unknown option '-x' \(an argument that starts with - goes after --\)$/),
	);
	assert.throws(() => parseArgs(["--frob"]), usage(/^unknown option '--frob'$/));
	assert.throws(() => parseArgs(["list", "--token=secret"]), usage(/^unknown option '--token=…'$/), "a value is never shown");
});

test("add: the server's command after --; without it, the message says to put -- before the command", () => {
	const add = parseArgs(["add", "files", "--scope", "project", "--", "npx", "-y", "pkg"]);
	assert.deepEqual([add.args, add.rest, add.flags.scope], [["files"], ["npx", "-y", "pkg"], "project"]);
	assert.throws(
		() => parseArgs(["add", "files", "npx", "-y", "pkg"]),
		usage(/^add: give one server name, then -- before the server's command: pi-mcp add files -- npx …$/),
	);
	const http = parseArgs(["add", "remote", "--url", "https://x/mcp"]);
	assert.deepEqual([http.args, http.flags.url], [["remote"], "https://x/mcp"]);
});
