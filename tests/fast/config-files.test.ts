// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in plain strings is the mcp.json syntax under test.
/**
 * Configuration files as editors and reviewers leave them (issue 13, items 10–14): a UTF-8 BOM,
 * comments, duplicate names and fields, more than 64 servers in one file, and problems known at
 * session start (unset variables, `!` commands, NUL bytes) shown in `status` before any call. In one
 * process (fast tier); a FIFO in place of a file (`mkfifo`) and a real fixture server that must not start:
 * tests/config-files.test.ts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runAction } from "../../src/catalog/actions.ts";
import { main } from "../../src/cli/main.ts";
import { MAX_DEPTH } from "../../src/config/scan.ts";
import { MAX_SERVERS } from "../../src/config.ts";
import {
	broken,
	type Dirs,
	expectBad,
	GOOD,
	load,
	textOf,
	usable,
	withDirs,
	withSession,
	writeProject,
	writeText,
	writeUser,
} from "../helpers/config.ts";

describe("BOM and comments", () => {
	it("a UTF-8 BOM at the start of a file is accepted", async () => {
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, `\uFEFF${JSON.stringify({ mcpServers: { bom: GOOD } })}`);
			await writeText(dirs.projectPath, `\uFEFF{\n  "mcpServers": { "also": { "command": "y" } }\n}\n`);
			const snapshot = await load(dirs);
			assert.deepEqual(
				snapshot.files.map((file) => file.state),
				["loaded", "loaded"],
			);
			assert.equal(usable(snapshot, "bom").command, "good-server");
			assert.equal(usable(snapshot, "also").command, "y");
		});
	});

	it("a BOM does not shift the reported position of a syntax error", async () => {
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, '\uFEFF{\n  "mcpServers": {\n    "a": { "command": "x" } "b": {}\n  }\n}\n');
			const snapshot = await load(dirs);
			assert.equal(snapshot.files[0]?.error, `${dirs.userPath}: invalid JSON at line 3, column 29: comma expected`);
		});
	});

	it("comments are refused, as Pi's own mcp.json reader (JSON.parse) refuses them, with a clear reason", async () => {
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, '{\n  // my servers\n  "mcpServers": { "a": { "command": "x" } }\n}\n');
			await writeText(dirs.projectPath, '{ "mcpServers": { /* off */ "b": { "command": "y" } } }');
			const snapshot = await load(dirs);
			const why = "comments are not allowed (mcp.json is strict JSON, as for Pi's own reader)";
			assert.equal(snapshot.files[0]?.error, `${dirs.userPath}: invalid JSON at line 2, column 3: ${why}`);
			assert.equal(snapshot.files[1]?.error, `${dirs.projectPath}: invalid JSON at line 1, column 19: ${why}`);
			assert.deepEqual(snapshot.servers, []);
		});
	});
});

describe("duplicate names and fields", () => {
	it("a server name defined twice in one file: an error naming it, neither definition is used", async () => {
		await withDirs(async (dirs) => {
			await writeText(
				dirs.userPath,
				[
					"{",
					'  "mcpServers": {',
					'    "a": { "command": "first" },',
					'    "good": { "command": "good-server", "args": ["--stdio"] },',
					'    "a": { "command": "second" }',
					"  }",
					"}",
				].join("\n"),
			);
			const snapshot = await load(dirs);
			broken(
				snapshot,
				"a",
				`server "a" (${dirs.userPath}): the name "a" is defined 2 times in this file (lines 3 and 5); none of its definitions is used`,
			);
			assert.equal(snapshot.servers.filter((server) => server.name === "a").length, 1);
			assert.equal(usable(snapshot, "good").command, "good-server");
		});
	});

	it("names equal after JSON unescaping are duplicates too", async () => {
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, '{"mcpServers":{"ab":{"command":"x"},\n"a\\u0062":{"command":"y"}}}');
			const snapshot = await load(dirs);
			broken(
				snapshot,
				"ab",
				`server "ab" (${dirs.userPath}): the name "ab" is defined 2 times in this file (lines 1 and 2); none of its definitions is used`,
			);
		});
	});

	it("a duplicate in a project file shadows the user entry instead of letting either definition run", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, { a: { command: "user" }, good: GOOD });
			await writeText(dirs.projectPath, '{"mcpServers":{\n"a":{"enabled":false},\n"a":{"command":"project"}}}');
			const snapshot = await load(dirs);
			broken(
				snapshot,
				"a",
				`server "a" (${dirs.projectPath}): the name "a" is defined 2 times in this file (lines 2 and 3); none of its definitions is used`,
			);
			usable(snapshot, "good");
		});
	});

	it("a field given twice inside an entry (at any depth) is an error naming the field", async () => {
		await withDirs(async (dirs) => {
			await writeText(
				dirs.userPath,
				[
					'{"mcpServers": {',
					'  "cmd": { "command": "safe",',
					'           "command": "other" },',
					'  "envs": { "command": "x", "env": { "K": "1",',
					'    "K": "2" } },',
					'  "good": { "command": "good-server", "args": ["--stdio"] }',
					"}}",
				].join("\n"),
			);
			const snapshot = await load(dirs);
			broken(
				snapshot,
				"cmd",
				`server "cmd" (${dirs.userPath}): field "command" is given 2 times (lines 2 and 3); the entry is not used`,
			);
			broken(
				snapshot,
				"envs",
				`server "envs" (${dirs.userPath}): field "env.K" is given 2 times (lines 4 and 5); the entry is not used`,
			);
			usable(snapshot, "good");
		});
	});

	it('"mcpServers" given twice makes the file an error; the other file still loads', async () => {
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, '{"mcpServers": {"a": {"command": "x"}},\n "mcpServers": {"b": {"command": "y"}}}');
			await writeProject(dirs, { good: GOOD });
			const snapshot = await load(dirs);
			assert.deepEqual(snapshot.files[0], {
				scope: "user",
				path: dirs.userPath,
				state: "error",
				error: `${dirs.userPath}: "mcpServers" is given 2 times (lines 1 and 2); the file is not used`,
			});
			assert.deepEqual(
				snapshot.servers.map((server) => server.name),
				["good"],
			);
		});
	});
});

describe("at most 64 servers per file", () => {
	const many = (prefix: string, count: number) =>
		Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, { command: `cmd${i}` }]));

	it("65 servers in the user file: an error for that file alone; the project file's servers still load", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, many("s", MAX_SERVERS + 1));
			await writeProject(dirs, { good: GOOD });
			const snapshot = await load(dirs);
			assert.deepEqual(snapshot.files[0], {
				scope: "user",
				path: dirs.userPath,
				state: "error",
				error: `${dirs.userPath}: 65 servers are defined; a file may define at most 64`,
			});
			assert.deepEqual(
				snapshot.servers.map((server) => server.name),
				["good"],
			);
			usable(snapshot, "good");
		});
	});

	it("64 in the user file and more in the project file: every server loads", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, many("u", MAX_SERVERS));
			await writeProject(dirs, { ...many("p", 3), good: GOOD });
			const snapshot = await load(dirs);
			assert.equal(snapshot.servers.length, MAX_SERVERS + 4);
			usable(snapshot, "u0");
			usable(snapshot, "u63");
			usable(snapshot, "p2");
			usable(snapshot, "good");
		});
	});
});

describe("problems known at session start", () => {
	const shell =
		'starts with "!" (a shell command): pi-mcp never runs commands to obtain values; use ${VAR} with a variable set in the environment instead';

	it("an unset ${VAR} in command or cwd is an error naming the variable", async () => {
		await expectBad({ command: "${NO_CMD}/server" }, 'environment variable NO_CMD is not set (used in "command")');
		await expectBad({ command: "x", cwd: "${NO_DIR}/work" }, 'environment variable NO_DIR is not set (used in "cwd")');
	});

	it("a set ${VAR} in command and cwd is expanded; a path is not a secret (issue 48)", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, { v: { command: "${TOOLS}/server", cwd: "${WORK}" } });
			const snapshot = await load(dirs, { env: { TOOLS: "/opt/tools", WORK: "/srv/work" } });
			const config = usable(snapshot, "v");
			assert.equal(config.command, "/opt/tools/server");
			assert.equal(config.cwd, "/srv/work");
			assert.equal(config.secretValues.includes("/opt/tools"), false);
		});
	});

	it('a "!" command or cwd is refused', async () => {
		await expectBad({ command: "!op read op://vault/server" }, `field "command" ${shell}`);
		await expectBad({ command: "x", cwd: "!pwd" }, `field "cwd" ${shell}`);
	});

	it("a NUL byte in command, args, env, cwd, url or headers is refused, naming the field", async () => {
		await expectBad({ command: "x\u0000y" }, 'field "command" contains a NUL byte');
		await expectBad({ command: "x", args: ["ok", "a\u0000b"] }, 'field "args[1]" contains a NUL byte');
		await expectBad({ command: "x", env: { K: "v\u0000" } }, 'field "env.K" contains a NUL byte');
		await expectBad({ command: "x", env: { "K\u0000": "v" } }, 'field "env" has a name containing a NUL byte');
		await expectBad({ command: "x", cwd: "/tmp/\u0000" }, 'field "cwd" contains a NUL byte');
		await expectBad({ url: "https://e.example/\u0000" }, 'field "url" contains a NUL byte');
		await expectBad({ url: "https://e.example/mcp", headers: { "X-A": "\u0000" } }, 'field "headers.X-A" contains a NUL byte');
	});

	it("keys holding control or invisible characters are shown escaped in these errors", async () => {
		await expectBad(
			{ command: "x", env: { "K\u001b[2J\u202e": "${NO_VAR}" } },
			'environment variable NO_VAR is not set (used in "env.K\\u001b[2J\\u202e")',
		);
		await expectBad({ command: "x", env: { "A\nB": "!cmd" } }, `field "env.A\\nB" ${shell}`);
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, '{"mcpServers":{"d":{"command":"x","env":{"\\u001b":"1",\n"\\u001b":"2"}}}}');
			const snapshot = await load(dirs);
			broken(
				snapshot,
				"d",
				`server "d" (${dirs.userPath}): field "env.\\u001b" is given 2 times (lines 1 and 2); the entry is not used`,
			);
		});
	});
});

describe("unreadable files reach the model", () => {
	it("status names each file that could not be read and why; an unknown server says a file could not be read", async () => {
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, '{\n  "mcpServers": {\n    "a": { "command": "x" } "b": {}\n  }\n}\n');
			await writeProject(dirs, { good: GOOD });
			await withSession(dirs, async (session) => {
				const why = `${dirs.userPath}: invalid JSON at line 3, column 29: comma expected`;
				const status = textOf(await runAction(session, { action: "status" }, undefined, undefined));
				assert.equal(
					status,
					`MCP servers:\ngood: idle · stdio\nConfiguration files that could not be read (their servers are missing):\n  ${why}`,
				);
				await assert.rejects(runAction(session, { action: "call", server: "a", tool: "t" }, undefined, undefined), {
					message: `unknown MCP server "a"; configured: good. A configuration file could not be read, so its servers are missing: ${why}`,
				});
			});
		});
	});
});

describe("nesting depth and repeated keys (issue 32, item 3)", () => {
	/** `levels` arrays around `inner`, as text: JSON.stringify itself recurses per level. */
	const arrays = (levels: number, inner = "") => `${"[".repeat(levels)}${inner}${"]".repeat(levels)}`;
	const objects = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
	const good = JSON.stringify(GOOD);
	const deepError = (dirs: Dirs, name: string, what: string) =>
		`server "${name}" (${dirs.userPath}): ${what} nests deeper than 64 levels; the entry is not used`;

	it("a field nested deeper than 64 levels is refused by name and field; 64 levels are read; the other entries work", async () => {
		await withDirs(async (dirs) => {
			await writeText(
				dirs.userPath,
				[
					`{"other": ${arrays(500)},`,
					'"mcpServers": {',
					`  "args65": {"command": "x", "args": ${arrays(MAX_DEPTH + 1)}},`,
					`  "args64": {"command": "x", "args": ${arrays(MAX_DEPTH, '"s"')}},`,
					`  "env65": {"command": "x", "env": ${objects(MAX_DEPTH + 1)}},`,
					`  "whole": ${arrays(MAX_DEPTH + 2)},`,
					`  "good": ${good}`,
					"}}",
				].join("\n"),
			);
			const snapshot = await load(dirs);
			assert.equal(snapshot.files[0]?.state, "loaded");
			broken(snapshot, "args65", deepError(dirs, "args65", 'field "args"'));
			broken(snapshot, "args64", `server "args64" (${dirs.userPath}): field "args" must be an array of strings`);
			broken(snapshot, "env65", deepError(dirs, "env65", 'field "env"'));
			broken(snapshot, "whole", deepError(dirs, "whole", "the entry"));
			assert.equal(usable(snapshot, "good").command, "good-server");
		});
	});

	it("a 200,000-level entry (391 KiB) is refused at once, in loadConfig and in `pi-mcp list`; the other entry works", {
		timeout: 60_000,
	}, async () => {
		await withDirs(async (dirs) => {
			const text = `{"mcpServers": {"deep": {"command": "x", "args": ${arrays(200_000)}},\n"good": ${good}}}`;
			assert.ok(text.length > 390 * 1024);
			await writeText(dirs.userPath, text);
			const snapshot = await load(dirs);
			broken(snapshot, "deep", deepError(dirs, "deep", 'field "args"'));
			assert.equal(usable(snapshot, "good").command, "good-server");
			// The shell command on the same file: before, it never finished (the test's timeout ends it).
			const out: string[] = [];
			const io = {
				out: (text: string) => void out.push(text),
				err: (text: string) => void out.push(text),
				stdin: process.stdin,
				env: { HOME: dirs.home, PI_CODING_AGENT_DIR: dirs.agentDir },
				cwd: dirs.cwd,
			};
			await main(["list"], io);
			const stdout = out.join("");
			assert.match(stdout, /^ {2}good: idle · stdio$/m);
			assert.ok(stdout.includes(deepError(dirs, "deep", 'field "args"')), stdout);
		});
	});

	it("an unclosed file nested 200,000 levels is invalid JSON with its position, not a crash", async () => {
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, `{"mcpServers": {"deep": {"command": "x",\n"args": ${"[".repeat(200_000)}`);
			await writeProject(dirs, { good: GOOD });
			const snapshot = await load(dirs);
			assert.equal(snapshot.files[0]?.error, `${dirs.userPath}: invalid JSON at line 2, column 200009: close brace expected`);
			usable(snapshot, "good");
		});
	});

	it("a key given 20,000 times: one short message naming the first and last lines", async () => {
		await withDirs(async (dirs) => {
			const keys = Array.from({ length: 20_000 }, () => '"K": "v"').join(",\n");
			await writeText(dirs.userPath, `{"mcpServers": {"many": {"command": "x", "env": {\n${keys}}},\n"good": ${good}}}`);
			const snapshot = await load(dirs);
			broken(
				snapshot,
				"many",
				`server "many" (${dirs.userPath}): field "env.K" is given 20000 times (lines 2, 3, 4, 5, … and 20001); the entry is not used`,
			);
			usable(snapshot, "good");
		});
	});
});
