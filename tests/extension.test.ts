/**
 * End to end in the real Pi 1.6 CLI (JSON, print and RPC modes; isolated agent dir; PI_OFFLINE=1;
 * pi-ai's faux model) with the product extension and real fixture servers.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { FAUX_EXT, makeSandbox, PI_CLI, runPiJson, type Sandbox, startPiRpc, toolResults } from "./helpers/pi.ts";
import { HOSTILE, pidAlive, readWire, SERVER, startedPids } from "./helpers/servers.ts";

const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const sandboxes: Sandbox[] = [];
after(async () => {
	await Promise.all(sandboxes.map((sandbox) => sandbox.cleanup()));
});

/** A fresh sandbox (removed after the tests) and the path of its fixture wire log. */
async function loggedSandbox(): Promise<{ sandbox: Sandbox; log: string }> {
	const sandbox = await makeSandbox();
	sandboxes.push(sandbox);
	return { sandbox, log: join(sandbox.root, "wire.log") };
}

async function sandboxWith(servers: Record<string, unknown>, project?: Record<string, unknown>): Promise<Sandbox> {
	const sandbox = await makeSandbox();
	sandboxes.push(sandbox);
	await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
	if (project) {
		await mkdir(join(sandbox.cwd, ".pi"), { recursive: true });
		await writeFile(join(sandbox.cwd, ".pi", "mcp.json"), JSON.stringify({ mcpServers: project }));
	}
	return sandbox;
}

const fixture = (log: string, extra: Record<string, unknown> = {}) => ({
	command: process.execPath,
	args: [SERVER, "stdio"],
	env: { FIXTURE_LOG: log },
	description: "Fixture server for the tests",
	...extra,
});

/** Pi's stderr without the expected notice that our `/mcp` replaced the built-in MCP. */
function unexpectedStderr(stderr: string): string {
	return stderr
		.split("\n")
		.filter((line) => line.trim() !== "")
		.filter((line) => !/built-in extension `mcp` was not loaded|builtin:mcp/.test(line))
		.join("\n");
}

describe("the mcp tool in a real Pi", () => {
	test("status → tools → describe → call, lazily, with nothing left running after exit", async () => {
		const { sandbox, log } = await loggedSandbox();
		await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { fx: fixture(log) } }));
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			prompt: "use the fixture",
			script: [
				{ tool: "mcp", args: { action: "status" } },
				{ tool: "mcp", args: { action: "tools", server: "fx", query: "echo" } },
				{ tool: "mcp", args: { action: "describe", server: "fx", tool: "echo" } },
				{ tool: "mcp", args: { action: "call", server: "fx", tool: "echo", args: { text: "hello from pi" } } },
				{ tool: "mcp", args: { action: "call", server: "fx", tool: "add", args: '{"a": 2, "b": 40}' } },
				{ tool: "mcp", args: { action: "call", server: "fx", tool: "fail", args: { message: "expected failure" } } },
				{ text: "FINAL {{last}}" },
			],
			timeoutMs: 60_000,
		});
		assert.equal(run.code, 0, run.stderr);
		const results = toolResults(run.events);
		assert.deepEqual(
			results.map((r) => r.toolName),
			["mcp", "mcp", "mcp", "mcp", "mcp", "mcp"],
		);
		const [status, tools, describeResult, call, jsonArgs, failure] = results;
		assert.equal(status?.isError, false);
		assert.match(status?.text ?? "", /^MCP servers:\nfx: idle · stdio — Fixture server for the tests$/);
		assert.match(
			tools?.text ?? "",
			/^fx: 1 tool matches "echo", best first\necho — Echo the text back\nInstructions from MCP server "fx" \(given once per session; each of its lines starts with "fx│"\):\nfx│ Fixture server for pi-mcp tests\.$/,
		);
		assert.match(describeResult?.text ?? "", /^fx\/echo\nEcho the text back\ninput schema: \{.*"text".*\}/s);
		assert.equal(call?.isError, false);
		assert.equal(call?.text, "[modern] hello from pi");
		assert.equal(jsonArgs?.text, "42", "args given as a JSON string work for weaker models");
		assert.equal(failure?.isError, true, "an MCP isError result is a Pi tool error");
		assert.equal(failure?.text, "expected failure");
		assert.match(run.stdout, /FINAL expected failure/);
		assert.equal(unexpectedStderr(run.stderr), "", "no extension error or stray output");

		const wire = readWire(log);
		assert.equal(wire.filter((line) => line.method === "tools/list").length, 1);
		const pids = startedPids(wire);
		assert.ok(pids.length >= 1);
		assert.deepEqual(pids.filter(pidAlive), [], "no server process survives Pi's exit");
		assert.deepEqual(run.leftoverPids, []);
	});

	test("status never connects, and registration spawns nothing", async () => {
		const { sandbox, log } = await loggedSandbox();
		await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { fx: fixture(log) } }));
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			prompt: "status only",
			script: [{ tool: "mcp", args: { action: "status" } }, { text: "done" }],
		});
		assert.equal(run.code, 0, run.stderr);
		assert.deepEqual(readWire(log), [], "no server process was started");
	});

	test("errors name the server: unknown server, broken entry, failed setup; other servers keep working", async () => {
		const { sandbox, log } = await loggedSandbox();
		await writeFile(
			join(sandbox.agentDir, "mcp.json"),
			JSON.stringify({
				mcpServers: {
					fx: fixture(log),
					broken: { command: "x", colour: "blue" },
					missing: { command: join(sandbox.root, "no-such-binary") },
				},
			}),
		);
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			prompt: "errors",
			script: [
				{ tool: "mcp", args: { action: "call", server: "ghost", tool: "x", args: {} } },
				{ tool: "mcp", args: { action: "call", server: "broken", tool: "x", args: {} } },
				{ tool: "mcp", args: { action: "call", server: "missing", tool: "x", args: {} } },
				{ tool: "mcp", args: { action: "call", server: "fx", tool: "echo", args: { text: "still here" } } },
				{ text: "done" },
			],
			timeoutMs: 60_000,
		});
		assert.equal(run.code, 0, run.stderr);
		const [ghost, broken, missing, fx] = toolResults(run.events);
		assert.equal(ghost?.isError, true);
		assert.match(ghost?.text ?? "", /unknown MCP server "ghost"; configured: fx, broken, missing/);
		assert.equal(broken?.isError, true);
		assert.match(broken?.text ?? "", /server "broken" \(.*mcp\.json\): field "colour" is not supported/);
		assert.equal(missing?.isError, true);
		assert.match(missing?.text ?? "", /MCP server "missing" failed to start/);
		assert.match(missing?.text ?? "", /\/mcp reconnect missing/);
		assert.equal(fx?.text, "[modern] still here");
	});
});

describe("a failing server's own words in a real Pi (issue 32, items 7, 8 and 10)", () => {
	test("the model's error and /mcp status: the cause first, echoed secrets redacted, bidi controls escaped", async () => {
		const { sandbox } = await loggedSandbox();
		const echo =
			"console.error('argv:', process.argv.slice(1).join(' ')); console.error('boom \\u202eevil\\u202c\\u2066x\\u2069'); process.exit(4);";
		const args = ["-e", echo, "--", "--password", "hunter2hunter2", "--token=ARGVSECRET999", "--author", "jane"];
		await writeFile(
			join(sandbox.agentDir, "mcp.json"),
			JSON.stringify({ mcpServers: { leaky: { command: process.execPath, args } } }),
		);
		const rpc = await startPiRpc({
			sandbox,
			extensions: [EXTENSION],
			script: [{ tool: "mcp", args: { action: "call", server: "leaky", tool: "x", args: {} } }, { text: "done" }],
		});
		try {
			const [call] = toolResults((await rpc.prompt("call it")).events);
			const status = (await rpc.prompt("/mcp status")).uiRequests.map((request) => String(request.message ?? "")).join("\n");
			assert.equal(call?.isError, true);
			assert.match(
				call?.text ?? "",
				/^MCP server "leaky" failed to start: the server exited with code 4 before the MCP handshake\.\n/,
			);
			for (const text of [call?.text ?? "", status]) {
				assert.match(text, /--password \[redacted\] --token=\[redacted\] --author jane/);
				assert.match(text, /boom \\u202eevil\\u202c\\u2066x\\u2069/);
				assert.equal(/hunter2hunter2|ARGVSECRET999|[\u202a-\u202e\u2066-\u2069]/.test(text), false, text);
			}
			assert.match(status, /leaky: failed/);
		} finally {
			const closed = await rpc.close();
			assert.equal(closed.code, 0);
		}
	});
});

describe("a configuration file that cannot be read, in a real Pi", () => {
	test("the model's status and an unknown server name the file and why; so does /mcp login <unknown>", async () => {
		const { sandbox, log } = await loggedSandbox();
		const userPath = join(sandbox.agentDir, "mcp.json");
		await writeFile(userPath, '{\n  "mcpServers": {\n    "gh": { "command": "x" } "b": {}\n  }\n}\n');
		await mkdir(join(sandbox.cwd, ".pi"), { recursive: true });
		await writeFile(join(sandbox.cwd, ".pi", "mcp.json"), JSON.stringify({ mcpServers: { fx: fixture(log) } }));
		const why = `${userPath}: invalid JSON at line 3, column 30: comma expected`;
		const rpc = await startPiRpc({
			sandbox,
			extensions: [EXTENSION],
			args: ["--approve"],
			script: [
				{ tool: "mcp", args: { action: "status" } },
				{ tool: "mcp", args: { action: "call", server: "gh", tool: "x", args: {} } },
				{ text: "done" },
			],
		});
		try {
			const run = await rpc.prompt("status and a call");
			const [status, call] = toolResults(run.events);
			assert.equal(
				status?.text,
				`MCP servers:\nfx: idle · stdio — Fixture server for the tests\nConfiguration files that could not be read (their servers are missing):\n  ${why}`,
			);
			assert.equal(call?.isError, true);
			assert.equal(
				call?.text,
				`unknown MCP server "gh"; configured: fx. A configuration file could not be read, so its servers are missing: ${why}`,
			);
			for (const command of ["/mcp login gh", "/mcp tools gh"]) {
				const answer = await rpc.prompt(command);
				const text = answer.uiRequests.map((request) => String(request.message ?? "")).join("\n");
				assert.match(text, /^unknown MCP server "gh"; configured: fx\. A configuration file could not be read/, command);
				assert.ok(text.endsWith(why), text);
			}
		} finally {
			const closed = await rpc.close();
			assert.equal(closed.code, 0);
		}
		assert.deepEqual(readWire(log), [], "nothing was started");
	});
});

describe("a configuration entry nested 200,000 levels deep, in a real Pi (issue 32, item 3)", () => {
	test("Pi starts, status names the entry and field, and the other server answers", async () => {
		const { sandbox, log } = await loggedSandbox();
		const userPath = join(sandbox.agentDir, "mcp.json");
		// 391 KiB; as text, since JSON.stringify recurses per level.
		const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
		await writeFile(
			userPath,
			`{"mcpServers": {"deep": {"command": "x", "args": ${deep}}, "fx": ${JSON.stringify(fixture(log))}}}`,
		);
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			prompt: "status and a call",
			script: [
				{ tool: "mcp", args: { action: "status" } },
				{ tool: "mcp", args: { action: "call", server: "fx", tool: "echo", args: { text: "still here" } } },
				{ text: "done" },
			],
			timeoutMs: 60_000,
		});
		assert.equal(run.code, 0, run.stderr);
		const [status, fx] = toolResults(run.events);
		const why = `server "deep" (${userPath}): field "args" nests deeper than 64 levels; the entry is not used`;
		assert.ok(status?.text.includes(`deep: invalid\n  error: ${why}`), status?.text);
		assert.equal(fx?.text, "[modern] still here");
	});
});

describe("output in a real Pi", () => {
	test("a 5 MiB result reaches the model as ≤ 50 KiB plus an overflow path, gone after exit; progress streams as updates", async () => {
		const { sandbox, log } = await loggedSandbox();
		await writeFile(
			join(sandbox.agentDir, "mcp.json"),
			// 3 s: the setup and the 5 MiB call must fit on a loaded CI machine; the slow call outlasts it.
			JSON.stringify({ mcpServers: { fx: fixture(log, { requestTimeoutMs: 3000 }) } }),
		);
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			prompt: "big",
			script: [
				{ tool: "mcp", args: { action: "call", server: "fx", tool: "big", args: { bytes: 5 * 1024 * 1024 } } },
				{ tool: "mcp", args: { action: "call", server: "fx", tool: "slow", args: { ms: 6000, steps: 12 } } },
				{ text: "done" },
			],
			timeoutMs: 90_000,
		});
		assert.equal(run.code, 0, run.stderr);
		const [big, slow] = toolResults(run.events);
		assert.equal(big?.isError, false);
		assert.ok(Buffer.byteLength(big?.text ?? "") <= 50 * 1024 + 300, `inline ${Buffer.byteLength(big?.text ?? "")} bytes`);
		const path = /Full output: (\S+)\]$/.exec(big?.text ?? "")?.[1];
		assert.ok(path, (big?.text ?? "").slice(-300));
		assert.equal(existsSync(path), false, "the overflow file is removed when Pi exits");
		assert.equal(slow?.text, "done after 6000ms", "progress kept the call alive past its 3 s timeout");
		const updates = run.events.filter((event) => event.type === "tool_execution_update");
		assert.ok(updates.length >= 3, `saw ${updates.length} tool_execution_update events`);
		assert.match(JSON.stringify(updates.at(-1)), /\d+% · step \d/);
	});
});

describe("the /mcp command in a real Pi", () => {
	test("RPC: /mcp status, /mcp tools, /mcp reconnect; ours replaced the built-in", async () => {
		const { sandbox, log } = await loggedSandbox();
		await writeFile(
			join(sandbox.agentDir, "mcp.json"),
			JSON.stringify({ mcpServers: { fx: fixture(log, { exposure: "direct" }), bad: { url: "http://example.com/mcp" } } }),
		);
		const rpc = await startPiRpc({ sandbox, extensions: [EXTENSION] });
		try {
			const status = await rpc.prompt("/mcp status");
			assert.equal(status.response.success, true);
			const statusText = status.uiRequests
				.map((request) => String(request.message ?? ""))
				.filter((message) => message.startsWith("MCP servers"))
				.join("\n");
			assert.match(statusText, /^MCP servers \(pi-mcp\):/);
			assert.match(statusText, /fx: idle · stdio — Fixture server for the tests/);
			assert.match(statusText, /bad: invalid/);
			assert.match(statusText, /uses http: to a non-loopback host/);
			assert.match(statusText, /Ignored Pi-only keys.*fx \(exposure\)/);
			assert.deepEqual(readWire(log), [], "/mcp status never connects");
			// Without arguments: the manager is for the TUI only; RPC (and print, JSON) keep the plain status.
			const bare = await rpc.prompt("/mcp");
			assert.match(String(bare.uiRequests[0]?.message ?? ""), /^MCP servers \(pi-mcp\):\n {2}fx: idle/);

			const tools = await rpc.prompt("/mcp tools fx");
			const toolsText = tools.uiRequests.map((request) => String(request.message ?? "")).join("\n");
			assert.match(toolsText, /^fx: 13 tools\n {2}echo — Echo the text back/);
			assert.doesNotMatch(toolsText, /app-only/);

			const reconnect = await rpc.prompt("/mcp reconnect fx");
			const reconnectText = reconnect.uiRequests.map((request) => String(request.message ?? "")).join("\n");
			assert.match(reconnectText, /^Reconnected: fx: ready · stdio · protocol 2026-07-28 · 13 tools/);

			const usage = await rpc.prompt("/mcp frobnicate");
			assert.match(String(usage.uiRequests[0]?.message ?? ""), /^Usage: \/mcp/);
		} finally {
			const closed = await rpc.close();
			assert.equal(closed.code, 0);
			assert.equal(unexpectedStderr(closed.stderr), "");
			assert.match(closed.stderr, /registers command `\/mcp`, so built-in extension `mcp` was not loaded/);
		}
		assert.deepEqual(startedPids(readWire(log)).filter(pidAlive), [], "no server process survives Pi's exit");
	});

	test("print mode: /mcp status is plain text (on stderr; Pi keeps stdout for the agent)", async () => {
		const sandbox = await sandboxWith({ fx: fixture(join("/tmp", "unused.log")) });
		// Spawned directly: with a piped stdin, Pi's print mode reads stdin into the prompt.
		const run = spawnSync(
			process.execPath,
			[PI_CLI, "-p", "--no-session", "--model", "faux/faux-1", "-e", FAUX_EXT, "-e", EXTENSION, "/mcp status"],
			{ cwd: sandbox.cwd, env: sandbox.env, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", timeout: 60_000 },
		);
		assert.equal(run.status, 0, run.stderr);
		assert.match(run.stderr, /^MCP servers \(pi-mcp\):\n {2}fx: idle · stdio/m);
		assert.equal(run.stdout, "");
	});
});

describe("project trust", () => {
	const projectRun = async (flag: "--approve" | "--no-approve") => {
		const { sandbox, log } = await loggedSandbox();
		await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { user: fixture(log) } }));
		await mkdir(join(sandbox.cwd, ".pi"), { recursive: true });
		await writeFile(
			join(sandbox.cwd, ".pi", "mcp.json"),
			JSON.stringify({ mcpServers: { proj: fixture(log, { description: "from the project" }) } }),
		);
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			args: [flag],
			prompt: "trust",
			script: [
				{ tool: "mcp", args: { action: "status" } },
				{ tool: "mcp", args: { action: "call", server: "proj", tool: "echo", args: { text: "p" } } },
				{ text: "done" },
			],
			timeoutMs: 60_000,
		});
		assert.equal(run.code, 0, run.stderr);
		return toolResults(run.events);
	};

	test("a project .pi/mcp.json is ignored with --no-approve", async () => {
		const [status, call] = await projectRun("--no-approve");
		assert.doesNotMatch(status?.text ?? "", /proj/);
		assert.match(status?.text ?? "", /user: idle/);
		assert.equal(call?.isError, true);
		assert.match(call?.text ?? "", /unknown MCP server "proj"/);
	});

	test("a project .pi/mcp.json is used with --approve", async () => {
		const [status, call] = await projectRun("--approve");
		assert.match(status?.text ?? "", /proj: idle · stdio — from the project/);
		assert.equal(call?.isError, false);
		assert.equal(call?.text, "[modern] p");
	});
});

describe("servers registered by other extensions", () => {
	const REGISTER_EXT = new URL("./fixtures/register-ext.ts", import.meta.url).pathname;

	/** Pi in RPC mode with pi-mcp and the registering extension; after `body`, Pi exits cleanly, without
	 * extension errors, and no server process is left. */
	async function withRegisteringPi(
		script: Parameters<typeof startPiRpc>[0]["script"],
		body: (rpc: Awaited<ReturnType<typeof startPiRpc>>) => Promise<void>,
	): Promise<void> {
		const { sandbox, log } = await loggedSandbox();
		const rpc = await startPiRpc({ sandbox, extensions: [EXTENSION, REGISTER_EXT], env: { REGISTER_EXT_LOG: log }, script });
		try {
			await body(rpc);
		} finally {
			const closed = await rpc.close();
			assert.equal(closed.code, 0);
			assert.doesNotMatch(closed.stderr, /Extension error/);
		}
		assert.deepEqual(startedPids(readWire(log)).filter(pidAlive), []);
	}

	test("appear in /mcp status with their source, are callable, follow mcp_servers_change, without extension errors", async () => {
		const script = [
			{ tool: "mcp", args: { action: "call", server: "registered", tool: "echo", args: { text: "from an extension" } } },
			{ text: "FIRST {{last}}" },
			{ tool: "mcp", args: { action: "call", server: "late", tool: "echo", args: { text: "late one" } } },
			{ text: "SECOND {{last}}" },
		];
		await withRegisteringPi(script, async (rpc) => {
			const status = await rpc.prompt("/mcp status");
			const statusText = status.uiRequests.map((request) => String(request.message ?? "")).join("\n");
			assert.match(statusText, /registered: idle · stdio — Registered by an extension\n {4}source: extension .*register-ext\.ts/);
			const first = await rpc.prompt("call the registered server");
			assert.match(JSON.stringify(first.events), /\[modern\] from an extension/);
			await rpc.prompt("/register-late");
			const after = await rpc.prompt("/mcp status");
			assert.match(
				after.uiRequests.map((request) => String(request.message ?? "")).join("\n"),
				/late: idle · stdio — Registered late/,
			);
			const second = await rpc.prompt("call the late server");
			assert.match(JSON.stringify(second.events), /\[modern\] late one/);
		});
	});

	test("a change before first use is what the first call sees (the runtime starts from the current configuration)", async () => {
		const script = [
			{ tool: "mcp", args: { action: "call", server: "late", tool: "echo", args: { text: "first use" } } },
			{ text: "DONE {{last}}" },
		];
		await withRegisteringPi(script, async (rpc) => {
			await rpc.prompt("/register-late");
			const run = await rpc.prompt("call the late server");
			assert.match(JSON.stringify(run.events), /DONE \[modern\] first use/);
		});
	});

	test("a file entry of the same name wins over a registered server", async () => {
		const sandbox = await sandboxWith({ registered: fixture(join("/tmp", "unused.log"), { description: "from the file" }) });
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION, REGISTER_EXT],
			prompt: "status",
			script: [{ tool: "mcp", args: { action: "status" } }, { text: "done" }],
		});
		assert.equal(run.code, 0, run.stderr);
		assert.match(toolResults(run.events)[0]?.text ?? "", /registered: idle · stdio — from the file/);
		assert.doesNotMatch(run.stderr, /Extension error/);
	});
});

describe("hostile names in a real Pi (issue #13, items 2 and 3)", () => {
	const INVISIBLE =
		// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
		/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|\udb40[\udc00-\udc7f]/u;
	const EVIL_NAME = "evil\u001b[2J\u001b]0;pwned\u0007\u202e";
	const EVIL_SHOWN = String.raw`evil\u001b[2J\u001b]0;pwned\u0007\u202e`;

	test("status, listings, errors and /mcp show names escaped; odd tool names are callable; listings are bounded", async () => {
		const sandbox = await sandboxWith({
			hx: { command: process.execPath, args: [HOSTILE], env: { HOSTILE_COUNT: "300" } },
			[EVIL_NAME]: { command: process.execPath, args: [HOSTILE] },
		});
		const rpc = await startPiRpc({
			sandbox,
			extensions: [EXTENSION],
			script: [
				{ tool: "mcp", args: { action: "status" } },
				{ tool: "mcp", args: { action: "tools", server: "hx" } },
				{ tool: "mcp", args: { action: "call", server: "hx", tool: "odd\nname" } },
				{ tool: "mcp", args: { action: "call", server: "hx", tool: String.raw`odd\nname` } },
				{ tool: "mcp", args: { action: "call", server: "hx", tool: "esc\u001b[2J\u001b]0;title\u0007tool" } },
				{ tool: "mcp", args: { action: "resources", server: "hx", limit: 200 } },
				{ tool: "mcp", args: { action: "prompts", server: "hx" } },
				{ tool: "mcp", args: { action: "templates", server: "hx" } },
				{ tool: "mcp", args: { action: "call", server: "nope\u001b[2J\u2066", tool: "x" } },
				{ tool: "mcp", args: { action: "prompts", server: "hx", limit: 1000 } },
				{ text: "done" },
			],
		});
		try {
			const run = await rpc.prompt("use the hostile server", 60_000);
			const results = toolResults(run.events);
			assert.equal(results.length, 10, JSON.stringify(results.map((r) => r.text.slice(0, 80))));
			for (const result of results) assert.doesNotMatch(result.text, INVISIBLE, JSON.stringify(result.text.slice(0, 400)));
			const [status, tools, exact, escaped, escName, resources, prompts, templates, unknown, tooMany] = results;
			assert.ok(status?.text.includes(`${EVIL_SHOWN}: invalid`), status?.text);
			assert.ok(status?.text.includes(`error: server "${EVIL_SHOWN}" (`), status?.text);
			assert.equal(tools?.text.split("\n").length, 6, tools?.text);
			assert.match(tools?.text ?? "", /^hx: 5 tools\nodd\\nname — /);
			assert.equal(exact?.text, "called odd-newline");
			assert.equal(escaped?.text, "called odd-newline");
			assert.equal(escName?.text, "called odd-escapes");
			assert.ok(Buffer.byteLength(resources?.text ?? "") <= 50 * 1024);
			assert.match(resources?.text ?? "", /\[Output truncated: showing \d+ of 202 lines .*Full output: \S+\]$/);
			assert.match(prompts?.text ?? "", /^hx: 300 prompts\nprompt0\\u001b\[31m\\nforged\(arg\\na0\\u001b\[2J_long/);
			assert.match(templates?.text ?? "", /^hx: 1 resource template\n/);
			assert.equal(unknown?.isError, true);
			assert.match(unknown?.text ?? "", /unknown MCP server "nope\\u001b\[2J\\u2066"; configured: hx, evil\\u001b\[2J/);
			assert.equal(tooMany?.isError, true);
			assert.match(tooMany?.text ?? "", /limit/);

			const statusCommand = await rpc.prompt("/mcp status");
			const statusText = statusCommand.uiRequests.map((request) => String(request.message ?? "")).join("\n");
			assert.doesNotMatch(statusText, INVISIBLE, JSON.stringify(statusText));
			assert.ok(statusText.includes(`  ${EVIL_SHOWN}: invalid`), statusText);
			const toolsCommand = await rpc.prompt("/mcp tools hx");
			const toolsText = toolsCommand.uiRequests.map((request) => String(request.message ?? "")).join("\n");
			assert.doesNotMatch(toolsText, INVISIBLE, JSON.stringify(toolsText));
			assert.match(toolsText, /^hx: 5 tools\n {2}odd\\nname — /);
		} finally {
			const closed = await rpc.close();
			assert.equal(closed.code, 0);
			assert.equal(unexpectedStderr(closed.stderr), "");
		}
	});
});
