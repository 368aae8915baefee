/**
 * A tool's `excludeTools` edit (#41: `pi-mcp disable <server> <tool>`, the manager's Tab) keeps the
 * guarantees of #39's editor, in one process (fast tier): a symlinked file edited at its target, other
 * entries byte for byte, edits in one process in turn. The cross-process lock waited for and SIGTERM
 * honoured while waiting: tests/edit-safety.test.ts.
 */
import assert from "node:assert/strict";
import { lstat, readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { setEnabled } from "../../src/config/edit.ts";
import { setToolHidden } from "../../src/config/tool-edit.ts";
import { type Dirs, withDirs, writeText } from "../helpers/config.ts";

const place = (dirs: Dirs) => ({ agentDir: dirs.agentDir, cwd: dirs.cwd, home: dirs.home, env: {} });

test("a symlinked file is edited at its target and stays a link; the other entries stay byte for byte", async () => {
	await withDirs(async (dirs) => {
		const target = join(dirs.home, "dotfiles", "mcp.json");
		const other = '"other":   {"command":"node",  "args": [ "x" ]}';
		await writeText(target, `{\n  "mcpServers": {\n    ${other},\n    "s": { "command": "node" }\n  }\n}\n`);
		await symlink(target, dirs.userPath);
		const change = await setToolHidden(place(dirs), "s", "delete_file", true);
		assert.equal(change.action, "hidden");
		assert.ok((await lstat(dirs.userPath)).isSymbolicLink(), "still a link");
		const text = await readFile(target, "utf8");
		assert.ok(text.includes(other), text);
		assert.deepEqual(JSON.parse(text).mcpServers.s, { command: "node", excludeTools: ["delete_file"] });
	});
});

test("tool toggles and enables asked at once in one process all land", async () => {
	await withDirs(async (dirs) => {
		await writeText(dirs.userPath, JSON.stringify({ mcpServers: { s: { command: "node" }, t: { command: "node" } } }));
		const tools = Array.from({ length: 12 }, (_, i) => `tool_${i}`);
		await Promise.all([
			...tools.map((tool) => setToolHidden(place(dirs), "s", tool, true)),
			setEnabled(place(dirs), "t", false),
			setToolHidden(place(dirs), "t", "x", true),
		]);
		const servers = JSON.parse(await readFile(dirs.userPath, "utf8")).mcpServers;
		assert.deepEqual([...servers.s.excludeTools].sort(), [...tools].sort());
		assert.deepEqual(servers.t, { command: "node", enabled: false, excludeTools: ["x"] });
	});
});
