/**
 * What starting costs: registration loads only the registration and rendering modules, and `session_start`
 * without a UI nothing (the configuration is read on first use); the rest of pi-mcp (actions, runtime, connect, errors, the SDK loader) loads on the first use of the
 * tool or the command, and the MCP SDK when the model starts writing an `mcp` call (or a server
 * connects). Checked with module hooks in a child process (bench figure 1 measures the time).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

const ROOT = new URL("..", import.meta.url).pathname;
const run = promisify(execFile);
const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

test("registration loads only index, session, the early start, render and text; session_start without a UI loads nothing (the configuration is read on first use); the first call loads the rest; the SDK loads when the model starts an mcp call", async () => {
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
	const runChild = async (log: string, ...extra: string[]): Promise<string[]> => {
		await run(
			process.execPath,
			["--import", register, "--import", "tsx", join(ROOT, "tests/fixtures/startup-child.ts"), dir, ...extra],
			{ cwd: ROOT, env: { ...process.env, MODULE_LOG: log, NODE_OPTIONS: "" }, encoding: "utf8", timeout: 60_000 },
		).catch((error: Error & { stderr?: string }) => assert.fail(error.stderr || error.message));
		return (await readFile(log, "utf8")).trim().split("\n");
	};
	// The two children load nothing of each other's: they run at once (each is mostly module loading).
	const [other, lines] = await Promise.all([runChild(join(dir, "other.log"), "other"), runChild(log)]);
	// The model writing a call of another tool loads nothing, up to the end of the process.
	const streamed = other.indexOf("-- another tool streamed");
	assert.ok(streamed > 0 && other.at(-1) === "-- exit", other.join("\n"));
	assert.deepEqual(other.slice(streamed + 1, -1), []);
	const name = (line: string) =>
		line.replace(/^.*\/src\//, "").replace(/^.*@modelcontextprotocol\/client\/dist\/index.*$/, "SDK");
	const phase = (from: string | undefined, to: string) =>
		lines
			.slice(from ? lines.indexOf(from) + 1 : 0, lines.indexOf(to))
			.map(name)
			.sort();

	assert.deepEqual(phase(undefined, "-- registered"), [
		"async.ts",
		"catalog/requests.ts",
		"index.ts",
		"output/redact.ts",
		"output/text.ts",
		"render.ts",
		"session.ts",
		"tool/definition.ts",
		"tool/early/listen.ts",
	]);
	assert.deepEqual(phase("-- registered", "-- session started"), []);
	const status = lines.find((line) => line.startsWith("-- status:"));
	assert.equal(status, "-- status: s1: idle · stdio");
	assert.deepEqual(phase("-- session started", status), [
		"catalog/actions.ts",
		"catalog/hints.ts",
		"catalog/listing.ts",
		"catalog/status.ts",
		"config.ts",
		"config/identity.ts",
		"config/safe-file.ts",
		"config/scan.ts",
		"config/secrets.ts",
		"config/values.ts",
		"errors.ts",
		"output.ts",
		"output/content.ts",
		"pins/canonical.ts",
		"pins/diff.ts",
		"pins/file.ts",
		"pins/pins.ts",
		"proc.ts",
		"runtime.ts",
		"runtime/calls.ts",
		"runtime/credentials.ts",
		"runtime/era.ts",
		"runtime/failures.ts",
		"runtime/instructions.ts",
		"runtime/open.ts",
		"runtime/pinned.ts",
		"runtime/pins-io.ts",
		"runtime/processes.ts",
		"runtime/review.ts",
		"runtime/status.ts",
		"runtime/stderr-tail.ts",
		"runtime/table.ts",
		"runtime/transports.ts",
		"runtime/validate.ts",
		"runtime/visible-tools.ts",
		"schema.ts",
		"schema/auth.ts",
		"schema/fields.ts",
		"schema/keys.ts",
		"schema/tool-filter.ts",
		"sdk.ts",
		"store.ts",
		"tool/execute.ts",
	]);
	// The model starting an `mcp` call loads the early start, and the SDK while the arguments stream (nothing connects).
	assert.deepEqual(phase(status, "-- mcp streamed"), ["SDK", "sdk.lazy.ts", "tool/early/start.ts", "tool/early/stream.ts"]);
});
