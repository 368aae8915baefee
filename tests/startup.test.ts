/**
 * What starting costs: registration and `session_start` load only the registration, configuration
 * and rendering modules; the rest of pi-mcp (actions, runtime, connect, errors, the SDK loader) loads on the first use of the
 * tool or the command, and the MCP SDK when the model starts writing an `mcp` call (or a server
 * connects). Checked with module hooks in a child process (bench figure 1 measures the time).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";

const ROOT = new URL("..", import.meta.url).pathname;
const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

test("registration and session_start load only index, tool, config, schema, render and output; the first call loads the rest; the SDK loads when the model starts an mcp call", async () => {
	const dir = await mkdtemp(join(tmpdir(), "pi-mcp-startup-"));
	dirs.push(dir);
	const log = join(dir, "modules.log");
	const servers = Object.fromEntries(
		Array.from({ length: 8 }, (_, i) => [
			`s${i + 1}`,
			{ command: process.execPath, args: [join(ROOT, "tests/fixtures/server.mjs")] },
		]),
	);
	await writeFile(join(dir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
	const hooks = pathToFileURL(join(ROOT, "tests/fixtures/module-log.mjs")).href;
	const register = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(hooks)});`;
	const child = spawnSync(
		process.execPath,
		["--import", register, "--import", "tsx", join(ROOT, "tests/fixtures/startup-child.ts"), dir],
		{ cwd: ROOT, env: { ...process.env, MODULE_LOG: log, NODE_OPTIONS: "" }, encoding: "utf8", timeout: 60_000 },
	);
	assert.equal(child.status, 0, child.stderr);
	const lines = (await readFile(log, "utf8")).trim().split("\n");
	const name = (line: string) =>
		line.replace(/^.*\/src\//, "").replace(/^.*@modelcontextprotocol\/client\/dist\/index.*$/, "SDK");
	const phase = (from: string | undefined, to: string) =>
		lines
			.slice(from ? lines.indexOf(from) + 1 : 0, lines.indexOf(to))
			.map(name)
			.sort();

	assert.deepEqual(phase(undefined, "-- registered"), [
		"async.ts",
		"config-check.ts",
		"config.ts",
		"index.ts",
		"output.ts",
		"render.ts",
		"schema.ts",
		"tool.ts",
	]);
	assert.deepEqual(phase("-- registered", "-- session started"), []);
	const status = lines.find((line) => line.startsWith("-- status:"));
	assert.equal(status, "-- status: s1: idle · stdio");
	assert.deepEqual(phase("-- session started", status), [
		"actions.ts",
		"connect.ts",
		"content.ts",
		"errors.ts",
		"processes.ts",
		"runtime.ts",
		"sdk.ts",
	]);
	assert.deepEqual(phase(status, "-- another tool streamed"), []);
	// The model starting an `mcp` call loads the SDK while the arguments stream (nothing connects).
	assert.deepEqual(phase("-- another tool streamed", "-- mcp streamed"), ["SDK", "sdk.lazy.ts"]);
});
