/**
 * A tool's `excludeTools` edit (#41: `pi-mcp disable <server> <tool>`, the manager's Tab) keeps every guarantee
 * of #39's editor: a symlinked file edited at its target, other entries byte for byte, edits in one process
 * in turn, the cross-process lock waited for and Ctrl+C/SIGTERM honoured while waiting.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { lstat, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { setEnabled } from "../src/config/edit.ts";
import { setToolHidden } from "../src/config/tool-edit.ts";
import { acquireLock } from "../src/store.ts";
import { type Dirs, withDirs, writeText } from "./helpers/config.ts";
import { makeSandbox } from "./helpers/pi.ts";

const BIN = new URL("../bin/pi-mcp.mjs", import.meta.url).pathname;
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

test("pi-mcp disable <server> <tool> waits for another edit's lock and stops on SIGTERM, writing nothing", async () => {
	const box = await makeSandbox();
	try {
		const user = join(box.agentDir, "mcp.json");
		const before = '{ "mcpServers": { "s": { "command": "node" } } }\n';
		await writeFile(user, before);
		const lock = await acquireLock(`${user}.lock`);
		try {
			const child = spawn(process.execPath, [BIN, "disable", "s", "delete_file", "--force"], {
				cwd: box.cwd,
				env: { ...box.env, TMPDIR: box.root },
			});
			const err: Buffer[] = [];
			child.stderr.on("data", (chunk: Buffer) => {
				err.push(chunk);
				if (/waiting for another edit/.test(Buffer.concat(err).toString("utf8"))) child.kill("SIGTERM");
			});
			const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
			const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
			clearTimeout(timer);
			const stderr = Buffer.concat(err).toString("utf8");
			assert.equal(code, 130, stderr);
			assert.match(stderr, /interrupted/);
		} finally {
			await lock.release();
		}
		assert.equal(await readFile(user, "utf8"), before);
	} finally {
		await box.cleanup();
	}
});
