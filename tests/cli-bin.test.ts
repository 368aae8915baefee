/**
 * The `pi-mcp` binary itself (`node bin/pi-mcp.mjs …`, its own process, the same Node as Pi): it loads
 * through jiti, its exit code and JSON errors reach the shell, `npm run -s pi-mcp` reads the directory
 * npm ran from (INIT_CWD), and Ctrl+C or SIGTERM stops every server it started (the sweep). A pipe into
 * its stdin: the pasted sign-in of tests/cli.test.ts. Every other shell test runs `main()` in process.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { processesWith } from "./helpers/processes.ts";
import { HANG, SERVER } from "./helpers/servers.ts";
import { type ShellBox, shellBox } from "./helpers/shell.ts";
import { runBin, startBin } from "./helpers/shell-bin.ts";

const ROOT = new URL("..", import.meta.url).pathname;

const state: { box?: ShellBox } = {};
const box = (): ShellBox => state.box as ShellBox;
const hangLog = () => join(box().root, "hang.log");

before(async () => {
	state.box = await shellBox();
	const servers = { hang: { command: process.execPath, args: [HANG], env: { FIXTURE_LOG: hangLog() } } };
	await writeFile(box().userFile, JSON.stringify({ mcpServers: servers }));
	await writeFile(box().projectFile, JSON.stringify({ mcpServers: { local: { command: process.execPath, args: [SERVER] } } }));
});
after(() => state.box?.cleanup());

test("the binary: --version; a usage error's exit code and its JSON error reach the shell", async () => {
	const version = await runBin(box(), ["--version"]);
	assert.equal(version.code, 0, version.stderr);
	const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string };
	assert.equal(version.stdout, `pi-mcp ${pkg.version}\n`);
	const bad = await runBin(box(), ["--json", "tools", "nope"]);
	assert.equal(bad.code, 2);
	assert.equal(bad.stderr, "");
	assert.match(JSON.parse(bad.stdout).error.message, /^unknown MCP server "nope"/);
});

test("npm run -s pi-mcp gives clean JSON and reads the directory npm ran from", async () => {
	const npm = spawn("npm", ["--prefix", ROOT, "run", "-s", "pi-mcp", "--", "--approve", "list", "--json"], {
		cwd: box().cwd,
		env: { ...box().env, PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH}` },
	});
	const chunks: Buffer[] = [];
	npm.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
	const code = await new Promise((resolve) => npm.on("close", resolve));
	assert.equal(code, 0);
	const listed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { servers: { name: string }[] };
	assert.ok(
		listed.servers.some((server) => server.name === "local"),
		"the project file of the user's directory",
	);
});

test("Ctrl+C or SIGTERM while a server connects: exit 130 and no server process left", async () => {
	for (const signal of ["SIGINT", "SIGTERM"] as const) {
		const started = startBin(box(), ["tools", "hang"]);
		while (!existsSync(hangLog()) || processesWith(hangLog()).length === 0)
			await new Promise((resolve) => setTimeout(resolve, 100));
		started.child.kill(signal);
		const done = await started.done;
		assert.equal(done.code, 130, done.stderr);
		assert.deepEqual(processesWith(hangLog()), [], `no server left after ${signal}`);
	}
});
