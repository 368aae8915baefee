/**
 * End to end in the real Pi 1.6 CLI (JSON and RPC modes; isolated agent dir; PI_OFFLINE=1;
 * pi-ai's faux model) with the product extension and real fixture servers.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { FauxStep } from "./fixtures/faux.ts";
import {
	type JsonResult,
	makeSandbox,
	type PiRpc,
	type PromptResult,
	runPiJson,
	type Sandbox,
	startPiRpc,
	toolResults,
} from "./helpers/pi.ts";
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

describe("the mcp tool in a real Pi: one run of the model's calls", () => {
	// One JSON run: the happy path on fx, the errors (unknown server, broken entry, failed setup, an entry nested
	// 200,000 levels deep), a project server used with --approve, and a 5 MiB result and progress on `out`.
	const shared = {} as { run: JsonResult; results: ReturnType<typeof toolResults>; log: string; userPath: string };
	before(async () => {
		const { sandbox, log } = await loggedSandbox();
		const userPath = join(sandbox.agentDir, "mcp.json");
		// 391 KiB; as text, since JSON.stringify recurses per level.
		const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
		const entries = {
			fx: fixture(log),
			broken: { command: "x", colour: "blue" },
			missing: { command: join(sandbox.root, "no-such-binary") },
			// 4 s: the setup and the 5 MiB call must fit on a loaded CI machine; the slow call (6 s) outlasts it.
			out: fixture(`${log}.out`, { requestTimeoutMs: 4000 }),
		};
		await writeFile(
			userPath,
			`${JSON.stringify({ mcpServers: entries }).slice(0, -2)}, "deep": {"command": "x", "args": ${deep}}}}`,
		);
		await mkdir(join(sandbox.cwd, ".pi"), { recursive: true });
		await writeFile(
			join(sandbox.cwd, ".pi", "mcp.json"),
			JSON.stringify({ mcpServers: { proj: fixture(`${log}.proj`, { description: "from the project" }) } }),
		);
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			args: ["--approve"],
			prompt: "use the fixture",
			script: [
				{ tool: "mcp", args: { action: "status" } },
				{ tool: "mcp", args: { action: "tools", server: "fx", query: "echo" } },
				{ tool: "mcp", args: { action: "describe", server: "fx", tool: "echo" } },
				{ tool: "mcp", args: { action: "call", server: "fx", tool: "echo", args: { text: "hello from pi" } } },
				{ tool: "mcp", args: { action: "call", server: "fx", tool: "add", args: '{"a": 2, "b": 40}' } },
				{ tool: "mcp", args: { action: "call", server: "fx", tool: "fail", args: { message: "expected failure" } } },
				{ tool: "mcp", args: { action: "call", server: "ghost", tool: "x", args: {} } },
				{ tool: "mcp", args: { action: "call", server: "broken", tool: "x", args: {} } },
				{ tool: "mcp", args: { action: "call", server: "missing", tool: "x", args: {} } },
				{ tool: "mcp", args: { action: "call", server: "fx", tool: "echo", args: { text: "still here" } } },
				{ tool: "mcp", args: { action: "call", server: "proj", tool: "echo", args: { text: "p" } } },
				{ tool: "mcp", args: { action: "call", server: "out", tool: "big", args: { bytes: 5 * 1024 * 1024 } } },
				{ tool: "mcp", args: { action: "call", server: "out", tool: "slow", args: { ms: 6000, steps: 12 } } },
				{ text: "FINAL {{last}}" },
			],
			timeoutMs: 120_000,
		});
		Object.assign(shared, { run, results: toolResults(run.events), log, userPath });
	});

	const named = (i: number) => shared.results[i];

	test("status → tools → describe → call, lazily, with nothing left running after exit", () => {
		const { run, results, log } = shared;
		assert.equal(run.code, 0, run.stderr);
		assert.equal(results.length, 13, JSON.stringify(results.map((r) => r.text.slice(0, 80))));
		assert.ok(results.every((r) => r.toolName === "mcp"));
		const [status, tools, describeResult, call, jsonArgs, failure] = results;
		assert.equal(status?.isError, false);
		// Status never connects: every server is idle (or invalid) when the model asks.
		assert.match(status?.text ?? "", /^MCP servers:\nfx: idle · stdio — Fixture server for the tests\n/);
		assert.doesNotMatch(status?.text ?? "", /ready|failed/);
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
		assert.match(run.stdout, /FINAL done after 6000ms/);
		assert.equal(unexpectedStderr(run.stderr), "", "no extension error or stray output");

		const wire = readWire(log);
		assert.equal(wire.filter((line) => line.method === "tools/list").length, 1);
		const pids = [log, `${log}.out`, `${log}.proj`].flatMap((file) => startedPids(readWire(file)));
		assert.ok(pids.length >= 3);
		assert.deepEqual(pids.filter(pidAlive), [], "no server process survives Pi's exit");
		assert.deepEqual(run.leftoverPids, []);
	});

	test("errors name the server: unknown server, broken entry, failed setup; other servers keep working", () => {
		const [ghost, broken, missing, fx] = shared.results.slice(6, 10);
		assert.equal(ghost?.isError, true);
		assert.match(ghost?.text ?? "", /unknown MCP server "ghost"; configured: /);
		for (const name of ["fx", "broken", "missing", "out", "deep", "proj"])
			assert.match(ghost?.text ?? "", new RegExp(`\\b${name}\\b`));
		assert.equal(broken?.isError, true);
		assert.match(broken?.text ?? "", /server "broken" \(.*mcp\.json\): field "colour" is not supported/);
		assert.equal(missing?.isError, true);
		assert.match(missing?.text ?? "", /MCP server "missing" failed to start/);
		assert.match(missing?.text ?? "", /\/mcp reconnect missing/);
		assert.equal(fx?.text, "[modern] still here");
	});

	test("an entry nested 200,000 levels deep (issue 32, item 3): Pi starts, status names the entry and field", () => {
		const why = `server "deep" (${shared.userPath}): field "args" nests deeper than 64 levels; the entry is not used`;
		assert.ok(named(0)?.text.includes(`deep: invalid\n  error: ${why}`), named(0)?.text);
	});

	test("a project .pi/mcp.json is used with --approve", () => {
		assert.match(named(0)?.text ?? "", /proj: idle · stdio — from the project/);
		assert.equal(named(10)?.isError, false);
		assert.equal(named(10)?.text, "[modern] p");
	});

	test("a 5 MiB result reaches the model as ≤ 50 KiB plus an overflow path, gone after exit; progress streams as updates", () => {
		const [big, slow] = shared.results.slice(11, 13);
		assert.equal(big?.isError, false);
		assert.ok(Buffer.byteLength(big?.text ?? "") <= 50 * 1024 + 300, `inline ${Buffer.byteLength(big?.text ?? "")} bytes`);
		const path = /Full output: (\S+)\]$/.exec(big?.text ?? "")?.[1];
		assert.ok(path, (big?.text ?? "").slice(-300));
		assert.equal(existsSync(path), false, "the overflow file is removed when Pi exits");
		assert.equal(slow?.text, "done after 6000ms", "progress kept the call alive past its 4 s timeout");
		const updates = shared.run.events.filter((event) => event.type === "tool_execution_update");
		assert.ok(updates.length >= 3, `saw ${updates.length} tool_execution_update events`);
		assert.match(JSON.stringify(updates.at(-1)), /\d+% · step \d/);
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

describe("the /mcp command in a real Pi (one RPC session)", () => {
	const shared = {} as { rpc: PiRpc; log: string };
	const messages = (answer: PromptResult) => answer.uiRequests.map((request) => String(request.message ?? "")).join("\n");
	before(async () => {
		const { sandbox, log } = await loggedSandbox();
		const echo =
			"console.error('argv:', process.argv.slice(1).join(' ')); console.error('boom \\u202eevil\\u202c\\u2066x\\u2069'); process.exit(4);";
		const leakyArgs = ["-e", echo, "--", "--password", "hunter2hunter2", "--token=ARGVSECRET999", "--author", "jane"];
		await writeFile(
			join(sandbox.agentDir, "mcp.json"),
			JSON.stringify({
				mcpServers: {
					fx: fixture(log, { exposure: "direct" }),
					bad: { url: "http://example.com/mcp" },
					leaky: { command: process.execPath, args: leakyArgs },
				},
			}),
		);
		const script: FauxStep[] = [
			{ tool: "mcp", args: { action: "status" } },
			{ text: "done" },
			{ tool: "mcp", args: { action: "call", server: "leaky", tool: "x", args: {} } },
			{ text: "done" },
		];
		shared.rpc = await startPiRpc({ sandbox, extensions: [EXTENSION], script });
		shared.log = log;
	});
	after(async () => {
		const closed = await shared.rpc.close();
		assert.equal(closed.code, 0);
		assert.equal(unexpectedStderr(closed.stderr), "");
		assert.match(closed.stderr, /registers command `\/mcp`, so built-in extension `mcp` was not loaded/);
		assert.deepEqual(startedPids(readWire(shared.log)).filter(pidAlive), [], "no server process survives Pi's exit");
	});

	test("/mcp status and the model's status never connect; bare /mcp is the plain status outside the TUI; ours replaced the built-in", async () => {
		const { rpc, log } = shared;
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
		const [model] = toolResults((await rpc.prompt("status only")).events);
		assert.match(model?.text ?? "", /^MCP servers:\nfx: idle/);
		assert.deepEqual(readWire(log), [], "registration, /mcp status and the model's status start no server");
		// Without arguments: the manager is for the TUI only; RPC (and print, JSON) keep the plain status.
		const bare = await rpc.prompt("/mcp");
		assert.match(String(bare.uiRequests[0]?.message ?? ""), /^MCP servers \(pi-mcp\):\n {2}fx: idle/);
	});

	test("/mcp tools, /mcp reconnect (the era found is reused), and a usage line for an unknown subcommand", async () => {
		const { rpc, log } = shared;
		const toolsText = messages(await rpc.prompt("/mcp tools fx"));
		assert.match(toolsText, /^fx: 13 tools\n {2}echo — Echo the text back/);
		assert.doesNotMatch(toolsText, /app-only/);
		const first = startedPids(readWire(log));
		assert.equal(first.length, 2, "auto: the resident and the probe's sibling");
		const reconnectText = messages(await rpc.prompt("/mcp reconnect fx"));
		assert.match(reconnectText, /^Reconnected: fx: ready · stdio · protocol 2026-07-28 · 13 tools/);
		const again = startedPids(readWire(log)).filter((pid) => !first.includes(pid));
		assert.equal(again.length, 1, "the reconnect starts one process: no sibling, no new probe");
		const usage = await rpc.prompt("/mcp frobnicate");
		assert.match(String(usage.uiRequests[0]?.message ?? ""), /^Usage: \/mcp/);
	});

	test("a failing server's own words (issue 32, items 7, 8 and 10): the cause first, echoed secrets redacted, bidi escaped", async () => {
		const { rpc } = shared;
		const [call] = toolResults((await rpc.prompt("call it")).events);
		const status = messages(await rpc.prompt("/mcp status"));
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
	});
});

describe("servers registered by other extensions", () => {
	const REGISTER_EXT = new URL("./fixtures/register-ext.ts", import.meta.url).pathname;

	/** Pi in RPC mode with pi-mcp and the registering extension; after `body`, Pi exits cleanly, without
	 * extension errors, and no server process is left. */
	async function withRegisteringPi(
		script: Parameters<typeof startPiRpc>[0]["script"],
		body: (rpc: Awaited<ReturnType<typeof startPiRpc>>) => Promise<void>,
		file?: Record<string, unknown>,
	): Promise<void> {
		const { sandbox, log } = await loggedSandbox();
		if (file) await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: file }));
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

	test("a change before first use is what the first call sees (the runtime starts from the current configuration); a file entry of the same name wins", async () => {
		const script = [
			{ tool: "mcp", args: { action: "call", server: "late", tool: "echo", args: { text: "first use" } } },
			{ text: "DONE {{last}}" },
		];
		const file = { registered: fixture(join("/tmp", "unused.log"), { description: "from the file" }) };
		await withRegisteringPi(
			script,
			async (rpc) => {
				const status = await rpc.prompt("/mcp status");
				assert.match(
					status.uiRequests.map((request) => String(request.message ?? "")).join("\n"),
					/registered: idle · stdio — from the file/,
				);
				await rpc.prompt("/register-late");
				const run = await rpc.prompt("call the late server");
				assert.match(JSON.stringify(run.events), /DONE \[modern\] first use/);
			},
			file,
		);
	});
});

describe("hostile names in a real Pi (issue #13, items 2 and 3)", () => {
	const INVISIBLE =
		// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
		/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|\udb40[\udc00-\udc7f]/u;
	const EVIL_NAME = "evil\u001b[2J\u001b]0;pwned\u0007\u202e";
	const EVIL_SHOWN = String.raw`evil\u001b[2J\u001b]0;pwned\u0007\u202e`;

	// The same Pi runs with --no-approve beside a project .pi/mcp.json: project trust (with --approve, the
	// project's server is used: checked in the one run of the model's calls above).
	test("status, listings, errors and /mcp show names escaped; odd tool names are callable; listings are bounded; a project file is ignored with --no-approve", async () => {
		const sandbox = await sandboxWith(
			{
				hx: { command: process.execPath, args: [HOSTILE], env: { HOSTILE_COUNT: "300" } },
				[EVIL_NAME]: { command: process.execPath, args: [HOSTILE] },
			},
			{ proj: fixture(join("/tmp", "unused.log"), { description: "from the project" }) },
		);
		const rpc = await startPiRpc({
			sandbox,
			extensions: [EXTENSION],
			args: ["--no-approve"],
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
				{ tool: "mcp", args: { action: "call", server: "proj", tool: "echo", args: { text: "p" } } },
				{ text: "done" },
			],
		});
		try {
			const run = await rpc.prompt("use the hostile server", 60_000);
			const results = toolResults(run.events);
			assert.equal(results.length, 11, JSON.stringify(results.map((r) => r.text.slice(0, 80))));
			for (const result of results) assert.doesNotMatch(result.text, INVISIBLE, JSON.stringify(result.text.slice(0, 400)));
			const [status, tools, exact, escaped, escName, resources, prompts, templates, unknown, tooMany, proj] = results;
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
			// --no-approve: the project's server is not there.
			assert.doesNotMatch(status?.text ?? "", /proj/);
			assert.equal(proj?.isError, true);
			assert.match(proj?.text ?? "", /unknown MCP server "proj"/);

			const statusCommand = await rpc.prompt("/mcp status");
			const statusText = statusCommand.uiRequests.map((request) => String(request.message ?? "")).join("\n");
			assert.doesNotMatch(statusText, INVISIBLE, JSON.stringify(statusText));
			assert.ok(statusText.includes(`  ${EVIL_SHOWN}: invalid`), statusText);
			assert.doesNotMatch(statusText, /proj: /);
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
