/**
 * Connecting while the model writes the call (issue 15): which partial arguments name a server, the
 * early start over real processes (the server begun for a call that names another is killed; its logic,
 * over in-memory servers, is in tests/fast/runtime-early.test.ts), the output-schema check of the tool a streamed call names, compiled before the call (no request of its
 * own), and end to end in the real Pi: the server's own log shows it started before the call's streaming
 * ended, and a `status` call starts nothing.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { validateToolArguments } from "@earendil-works/pi-ai";
import type { JsonSchemaType } from "@modelcontextprotocol/client";
import type { Runtime, Session } from "../src/contracts.ts";
import { outputChecks } from "../src/runtime/validate.ts";
import { parameters } from "../src/tool/definition.ts";
import {
	type ArgumentCheck,
	compileArgumentCheck,
	endedIn,
	loadJsonReader,
	StreamedCall,
	streamedSearch,
	streamedServer,
	streamedTool,
} from "../src/tool/early/stream.ts";
import { MCP_TOOL, writer } from "./helpers/early.ts";
import { makeSandbox, runPiJson, type Sandbox, type Step, toolResults } from "./helpers/pi.ts";
import {
	CRASH,
	count,
	LEGACY_EXIT,
	pidAlive,
	readWire,
	SERVER,
	startedPids,
	startHttpFixture,
	waitForWire,
} from "./helpers/servers.ts";
import { openSession } from "./helpers/session.ts";

const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
	await Promise.all(cleanups.map((cleanup) => cleanup()));
});

describe("which streamed arguments name a server to start", () => {
	test("an action that connects and a server, both complete", () => {
		assert.deepEqual(streamedServer({ action: "call", server: "fx", tool: "" }, false), { server: "fx", action: "call" });
		assert.deepEqual(streamedServer({ action: "tools", server: "fx" }, true), { server: "fx", action: "tools" });
		assert.deepEqual(streamedServer({ server: "fx", action: "describe", tool: "e" }, false), {
			server: "fx",
			action: "describe",
		});
	});

	test("nothing while the server or the action may still grow", () => {
		// "fx" may be the start of "fx2": only a following argument or the call's end settles it.
		assert.equal(streamedServer({ action: "call", server: "fx" }, false), undefined);
		assert.equal(streamedServer({ server: "fx", action: "prompt" }, false), undefined);
		assert.equal(streamedServer({ action: "call" }, false), undefined);
		assert.equal(streamedServer({}, false), undefined);
	});

	test("nothing for status, an unknown action, an empty or non-string server, or non-object arguments", () => {
		assert.equal(streamedServer({ action: "status", server: "fx" }, true), undefined);
		assert.equal(streamedServer({ action: "launch", server: "fx" }, true), undefined);
		assert.equal(streamedServer({ action: "call", server: "" }, true), undefined);
		assert.equal(streamedServer({ action: "call", server: 3 }, true), undefined);
		assert.equal(streamedServer("call fx", true), undefined);
		assert.equal(streamedServer(null, true), undefined);
		assert.equal(streamedServer(["call", "fx"], true), undefined);
	});
});

describe("the early steps of a streamed call, each once per call", () => {
	test("the server, the tool and the search come due as their names complete, once each; the text is kept until then", () => {
		// Only the steps that came due (JSON drops the others).
		const due = (on: StreamedCall, args: Record<string, unknown>, complete: boolean, delta?: string) =>
			JSON.parse(JSON.stringify(on.due(args, complete, delta)));
		const marks = new StreamedCall();
		const steps = (args: Record<string, unknown>, complete = false) => due(marks, args, complete, "");
		assert.deepEqual(steps({ action: "call", server: "fx" }), {}, "the server may still grow");
		assert.deepEqual(steps({ action: "call", server: "fx", tool: "ec" }), { named: { server: "fx", action: "call" } });
		assert.deepEqual(steps({ action: "call", server: "fx", tool: "echo", args: {} }), {
			called: { server: "fx", tool: "echo" },
		});
		assert.equal(marks.keepsText(), false, "nothing more needs the raw text");
		assert.deepEqual(steps({ action: "call", server: "fx", tool: "echo", args: {} }, true), {}, "nothing twice");
		const search = new StreamedCall();
		const query = { action: "tools", server: "fx", query: "ec" };
		assert.deepEqual(due(search, query, false, ""), { named: { server: "fx", action: "tools" }, searched: "fx" });
		assert.ok(search.keepsText(), "a tools call keeps its text until it is complete");
		assert.deepEqual(due(search, query, true), {});
		assert.equal(search.keepsText(), false);
		assert.deepEqual(due(new StreamedCall(), { action: "resources", server: "fx" }, true), {
			named: { server: "fx", action: "resources" },
		});
	});
});

describe("Pi's argument check, compiled while the call streams", () => {
	test("checks a valid call against the very schema object the tool registers (pi-ai caches per object)", () => {
		const seen: Parameters<ArgumentCheck>[] = [];
		assert.equal(
			compileArgumentCheck((tool, call) => {
				seen.push([tool, call]);
			}, MCP_TOOL),
			true,
		);
		assert.equal(seen.length, 1);
		const [tool, call] = seen[0] ?? [];
		assert.equal(tool?.parameters, parameters, "the registered object, not a copy: a copy compiles a validator Pi never uses");
		assert.equal(tool?.name, "mcp");
		assert.equal(call?.name, "mcp");
		// pi-ai's own check accepts the arguments, so the compile is never reported as an error.
		assert.deepEqual(validateToolArguments({ name: "mcp", description: "", parameters }, call as never), { action: "status" });
	});

	test("with pi-ai's validateToolArguments it runs; a missing or throwing check only loses the head start", () => {
		assert.equal(compileArgumentCheck(validateToolArguments as unknown as ArgumentCheck, MCP_TOOL), true);
		assert.equal(compileArgumentCheck(undefined, MCP_TOOL), false);
		assert.equal(
			compileArgumentCheck(() => {
				throw new Error("no such tool");
			}, MCP_TOOL),
			false,
		);
	});
});

type Harness = Readonly<{ log: string; runtime: Runtime; session: Session }>;

async function harness(servers: (log: string) => Record<string, unknown>): Promise<Harness> {
	const opened = await openSession((dir) => servers(join(dir, "wire.log")), "pi-mcp-early-");
	cleanups.push(opened.close);
	return { log: join(opened.dir, "wire.log"), runtime: opened.session.runtime, session: opened.session };
}

describe("which streamed arguments name the tool a call will call", () => {
	test("a call's server and tool, once the tool's name is complete", () => {
		assert.deepEqual(streamedTool({ action: "call", server: "fx", tool: "echo", args: {} }, false), {
			server: "fx",
			tool: "echo",
		});
		assert.deepEqual(streamedTool({ action: "call", server: "fx", tool: "echo" }, true), { server: "fx", tool: "echo" });
		assert.deepEqual(streamedTool({ tool: "echo", action: "call", server: "fx", args: {} }, false), {
			server: "fx",
			tool: "echo",
		});
	});

	test("nothing while the name may still grow, for other actions, or without a server", () => {
		// "ec" may be the start of "echo".
		assert.equal(streamedTool({ action: "call", server: "fx", tool: "ec" }, false), undefined);
		assert.equal(streamedTool({ action: "call", server: "fx" }, true), undefined);
		assert.equal(streamedTool({ action: "call", server: "fx", tool: "" }, true), undefined);
		assert.equal(streamedTool({ action: "call", server: "fx", tool: 7 }, true), undefined);
		assert.equal(streamedTool({ action: "describe", server: "fx", tool: "echo" }, true), undefined);
		assert.equal(streamedTool({ action: "call", tool: "echo", args: {} }, true), undefined);
		assert.equal(streamedTool({ action: "call", server: "fx", tool: "echo" }, false), undefined);
	});
});

describe("which streamed arguments name a server whose tools a query will search", () => {
	test("a tools call with a server that is complete and a query begun, even an unfinished one", () => {
		assert.equal(streamedSearch({ action: "tools", server: "fx", query: "" }, false), "fx");
		assert.equal(streamedSearch({ action: "tools", server: "fx", query: "echo the" }, false), "fx");
		assert.equal(streamedSearch({ query: "echo", action: "tools", server: "fx" }, true), "fx");
	});

	test("nothing without a query, for other actions, or while the server may still grow", () => {
		assert.equal(streamedSearch({ action: "tools", server: "fx", limit: 3 }, true), undefined);
		assert.equal(streamedSearch({ action: "tools", query: "echo" }, true), undefined, "a search of every server");
		assert.equal(streamedSearch({ action: "call", server: "fx", query: "echo" }, true), undefined);
		assert.equal(streamedSearch({ action: "tools", query: "echo", server: "fx" }, false), undefined);
		assert.equal(streamedSearch({ action: "tools", server: "fx", query: 3 }, true), undefined);
	});
});

describe("a name counts as written at its closing quote", () => {
	/** The reader the extension uses (`loadJsonReader`): pi-ai's streaming parser, as Pi's providers read arguments. */
	const reader: { parse?: (text: string) => unknown } = {};
	before(async () => {
		reader.parse = await loadJsonReader();
	});
	const parse = (text: string): unknown => {
		assert.ok(reader.parse, "pi-ai's StreamingJsonParser loaded");
		return reader.parse(text);
	};
	/** The partial arguments Pi would hand over for `raw`, and whether the server and tool count as written. */
	const read = (raw: string) => {
		const args = parse(raw) as Record<string, unknown>;
		const ended = endedIn(raw, args, parse);
		return { server: streamedServer(args, false, ended)?.server, tool: streamedTool(args, false, ended)?.tool };
	};

	test("the closing quote completes a value before the next argument begins", () => {
		assert.deepEqual(read('{"action":"call","server":"fx"'), { server: "fx", tool: undefined });
		assert.deepEqual(read('{"action":"call","server":"fx",'), { server: "fx", tool: undefined });
		assert.deepEqual(read('{"action": "call", "server": "fx" '), { server: "fx", tool: undefined });
		assert.deepEqual(read('{"action":"call","server":"fx","tool":"echo"'), { server: "fx", tool: "echo" });
		// A name written with an escape is still the name once its quote closes.
		assert.deepEqual(read('{"action":"call","server":"f\\u0078"'), { server: "fx", tool: undefined });
	});

	test("an open string, a pending escape or an open action is not a name yet", () => {
		assert.deepEqual(read('{"action":"call","server":"fx'), { server: undefined, tool: undefined });
		assert.deepEqual(read('{"action":"call","server":"f\\'), { server: undefined, tool: undefined });
		assert.deepEqual(read('{"action":"call","server":"f\\u00'), { server: undefined, tool: undefined });
		assert.deepEqual(read('{"action":"call","server":"fx","tool":"ec'), { server: "fx", tool: undefined });
		assert.deepEqual(read('{"server":"fx","action":"cal'), { server: undefined, tool: undefined });
		assert.deepEqual(read('{"server":"fx","action":"status"'), { server: undefined, tool: undefined });
	});

	test("raw text that does not give the arguments Pi parsed (a provider that restarted) proves nothing", () => {
		const args = { action: "call", server: "fx" };
		const ended = endedIn('{"action":"call","server":"other"', args, parse);
		assert.equal(ended("server"), false);
		assert.equal(streamedServer(args, false, ended), undefined);
		assert.equal(endedIn('{"action":"call","server":"fx"', { action: "call", server: 3 }, parse)("server"), false);
	});
});

describe("output-schema checks", () => {
	test("each schema object is compiled once; an equal but new object (a new listing) is compiled again", async () => {
		const checks = outputChecks();
		try {
			const schema: JsonSchemaType = { type: "object" };
			assert.equal(await checks.prepare(schema), "compiled");
			assert.equal(await checks.prepare(schema), "held");
			const validator = checks.getValidator(schema);
			assert.deepEqual(
				validator({ a: 1 }),
				{ valid: true, data: { a: 1 }, errorMessage: undefined },
				"the SDK's own check accepts",
			);
			await checks.check(schema, { a: 1 }, 5000);
			assert.equal(await checks.prepare({ type: "object" }), "compiled");
		} finally {
			checks.close();
		}
	});

	test("a schema that does not compile: prepare says so; the call's compile throws why", async () => {
		const checks = outputChecks();
		try {
			const bad = { type: "string", pattern: "(" } as JsonSchemaType;
			assert.equal(await checks.prepare(bad), "failed");
			// A bound far above the compile (a few ms): a loaded machine can take seconds to start the worker's thread.
			await assert.rejects(checks.compile(bad, 30_000), /its output schema is invalid: Invalid regular expression/);
		} finally {
			checks.close();
		}
	});
});

const fixture = (log: string, extra: Record<string, unknown> = {}) => ({
	command: process.execPath,
	args: [SERVER, "stdio"],
	env: { FIXTURE_LOG: log },
	protocolVersion: "legacy",
	...extra,
});

// The early start's logic (shared setups and listings, latches, declines, cancels): tests/fast/runtime-early.test.ts.
// Here, what needs a real process: the output check's compile, and the kill of a server begun for nothing.
describe("the early start's work for a call", { concurrency: true }, () => {
	test("the named tool's output check comes from the early listing, with no request of its own", async () => {
		const { log, session } = await harness((log) => ({
			out: {
				command: process.execPath,
				args: [LEGACY_EXIT],
				env: { FIXTURE_LOG: log, FIXTURE_OUTPUT_TOOLS: "1" },
				protocolVersion: "legacy",
			},
		}));
		const { write, run } = writer(session);
		await write("a", { action: "call", server: "out", tool: "weather", args: {} });
		const runtime = run("a", "call", "out").runtime;
		await runtime.tools("out");
		assert.deepEqual(
			readWire(log).flatMap((line) => (line.method ? [line.method] : [])),
			["initialize", "notifications/initialized", "tools/list"],
			"no request but the early start's",
		);
		const weather = await runtime.call("out", "weather", {});
		assert.deepEqual(weather.structuredContent, { temperature: 21, conditions: "sunny" });
		// The SDK checks results with these checks: a result that breaks the schema still fails.
		await assert.rejects(runtime.call("out", "mismatch", {}), /does not match the tool's output schema/);
	});

	test("the executed call names another server: the one begun early is closed, the one used is kept (issue 39 item 12)", async () => {
		const { log, session } = await harness((log) => ({ fx: fixture(log), fx2: fixture(log) }));
		const { write, run } = writer(session);
		await write("a", { action: "call", server: "fx", tool: "echo", args: {} });
		const state = (name: string) => session.runtime.status().find((status) => status.name === name)?.state;
		assert.equal(state("fx"), "connecting");
		await waitForWire(log, (lines) => count(lines, "start") === 1, "the early start's process");
		const runtime = run("a", "call", "fx2").runtime;
		assert.equal(state("fx"), "idle", "closed: the call did not use it");
		await runtime.call("fx2", "echo", { text: "x" });
		assert.equal(state("fx2"), "ready");
		const pids = startedPids(readWire(log));
		assert.equal(pids.length, 2);
		// A bound on the kill (SIGTERM, then SIGKILL after a second), not a timed assertion.
		for (const started = Date.now(); pids.filter(pidAlive).length > 1 && Date.now() - started < 5000; ) {
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
		assert.equal(pids.filter(pidAlive).length, 1, "only the used server's process is alive");
	});
});

// Each test runs its own Pi and servers, and none measures time: three run at once (more would crowd two cores).
describe("in a real Pi", { concurrency: 3 }, () => {
	async function sandboxWith(
		log: string,
		sandbox: Sandbox,
		servers: Record<string, unknown> = { fx: { command: process.execPath, args: [SERVER, "stdio"], env: { FIXTURE_LOG: log } } },
	): Promise<void> {
		await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
	}

	/** Pi with pi-mcp and the faux model writing `script`, in a fresh sandbox whose servers log to one wire log. */
	async function runInPi(
		prompt: string,
		script: readonly Step[],
		env: (log: string) => Record<string, string> = () => ({}),
		servers?: (log: string) => Record<string, unknown>,
	) {
		const sandbox = await makeSandbox();
		cleanups.push(() => sandbox.cleanup());
		const log = join(sandbox.root, "wire.log");
		await sandboxWith(log, sandbox, servers?.(log));
		const run = await runPiJson({ sandbox, extensions: [EXTENSION], prompt, script, env: env(log), timeoutMs: 60_000 });
		return { run, log };
	}

	test("the server starts, connects and lists its tools while the model is still writing the call", async () => {
		// The faux model holds the end of each tool call until the server's log shows its tool listing
		// (at most 20 s), then logs the end: with early start the listing comes first.
		const { run, log } = await runInPi(
			"call the fixture",
			[
				{ tool: "mcp", args: { action: "call", server: "fx", tool: "echo", args: { text: "streamed" } } },
				{ text: "FINAL {{last}}" },
			],
			(log) => ({ PI_FAUX_HOLD_FILE: log, PI_FAUX_HOLD_TEXT: '"method":"tools/list"' }),
		);
		assert.equal(run.code, 0, run.stderr);
		const [call] = toolResults(run.events);
		assert.equal(call?.isError, false, call?.text);
		assert.equal(call?.text, "[modern] streamed");
		const wire = readWire(log);
		const end = wire.findIndex((line) => line.event === "toolcall_end");
		assert.deepEqual(wire[end], { event: "toolcall_end", seen: true }, "the tool listing came before the call's end");
		const before = wire.slice(0, end);
		assert.ok(count(before, "start") >= 1, "the server process started before the call was complete");
		assert.equal(count(before, "tools/list"), 1, "and listed its tools");
		assert.equal(count(wire, "tools/list"), 1, "the call joined that listing");
		assert.equal(count(before, "tools/call"), 0);
		assert.equal(count(wire.slice(end), "tools/call"), 1);
		assert.deepEqual(startedPids(wire).filter(pidAlive), [], "nothing survives Pi's exit");
	});

	test("over Streamable HTTP: the connection and the tool listing come while the model is still writing the call", async () => {
		const sandbox = await makeSandbox();
		cleanups.push(() => sandbox.cleanup());
		const log = join(sandbox.root, "wire.log");
		const http = await startHttpFixture([], { FIXTURE_LOG: log });
		cleanups.push(() => http.stop());
		await sandboxWith(log, sandbox, { web: { url: http.url } });
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			prompt: "call the web fixture",
			script: [
				{ tool: "mcp", args: { action: "call", server: "web", tool: "echo", args: { text: "over http" } } },
				{ text: "FINAL {{last}}" },
			],
			env: { PI_FAUX_HOLD_FILE: log, PI_FAUX_HOLD_TEXT: '"method":"tools/list"' },
			timeoutMs: 60_000,
		});
		assert.equal(run.code, 0, run.stderr);
		const [call] = toolResults(run.events);
		assert.equal(call?.isError, false, call?.text);
		assert.match(call?.text ?? "", /over http$/);
		const wire = readWire(log);
		const end = wire.findIndex((line) => line.event === "toolcall_end");
		assert.deepEqual(wire[end], { event: "toolcall_end", seen: true }, "the tool listing came before the call's end");
		assert.equal(count(wire.slice(0, end), "tools/list"), 1);
		assert.equal(count(wire, "tools/list"), 1, "the call joined that listing");
		assert.equal(count(wire.slice(0, end), "tools/call"), 0);
		assert.equal(count(wire.slice(end), "tools/call"), 1);
	});

	/**
	 * The model writes one `mcp` call with `args`, stopping after `"server":"fx"` until the server's log shows
	 * `method`, then writing the rest at 50 tokens/s: the listing is in by the call's end, and the call must not
	 * send it again. Without the early listing the hold times out. Legacy era: there the SDK caches no listing
	 * (a modern server's `ttlMs` would hide a second one). Resolves with the call's text.
	 */
	async function listedWhileWritten(
		prompt: string,
		args: NonNullable<Extract<Step, { tool: string }>["args"]>,
		method: string,
	): Promise<string> {
		const { run, log } = await runInPi(
			prompt,
			[{ tool: "mcp", args }, { text: "FINAL {{last}}" }],
			(log) => ({
				PI_FAUX_HOLD_FILE: log,
				PI_FAUX_HOLD_TEXT: `"method":"${method}"`,
				PI_FAUX_HOLD_AFTER: '"server":"fx"',
				PI_FAUX_TOKENS_PER_SECOND: "50",
				PI_FAUX_EVENT_LOG: log,
			}),
			(log) => ({ fx: fixture(log) }),
		);
		assert.equal(run.code, 0, run.stderr);
		const [result] = toolResults(run.events);
		assert.equal(result?.isError, false, result?.text);
		const wire = readWire(log);
		const held = wire.findIndex((line) => line.event === "held");
		assert.deepEqual(wire[held], { event: "held", seen: true }, "the listing came while the model had written only the server");
		assert.ok(held < wire.findIndex((line) => line.event === "tool_call"), "before Pi executed the call");
		assert.equal(count(wire, method), 1, "the call used that listing: it did not list again");
		assert.deepEqual(startedPids(wire).filter(pidAlive), [], "nothing survives Pi's exit");
		return result?.text ?? "";
	}

	test("a tools call: the server lists its tools while the model writes the call, and the call uses that listing", async () => {
		const args = { action: "tools", server: "fx", query: "echo the given text back to me" };
		assert.match(await listedWhileWritten("find the echo tool", args, "tools/list"), /^echo\b/m);
	});

	test("a resources call: the listing it needs is sent while the model writes the call, and the call uses it", async () => {
		const args = { action: "resources", server: "fx", limit: 20 };
		assert.match(await listedWhileWritten("list the fixture's resources", args, "resources/list"), /^fx: 3 resources\n/);
	});

	test("a second tools call: the connected server lists its tools while the model writes the call", async () => {
		const query = (text: string) => ({ tool: "mcp", args: { action: "tools", server: "fx", query: text } });
		const { run, log } = await runInPi(
			"search the fixture twice",
			[query("echo the given text back to me"), query("write some text to standard error"), { text: "done" }],
			(log) => ({ PI_FAUX_TOKENS_PER_SECOND: "50", PI_FAUX_EVENT_LOG: log }),
			(log) => ({ fx: fixture(log) }),
		);
		assert.equal(run.code, 0, run.stderr);
		const results = toolResults(run.events);
		assert.deepEqual(
			results.map((result) => result.isError),
			[false, false],
			JSON.stringify(results),
		);
		const wire = readWire(log);
		const order = wire.flatMap((line) =>
			line.method === "tools/list" ? ["tools/list"] : line.event === "tool_call" ? ["tool_call"] : [],
		);
		// The first call may run before its server is up (a short call); the second finds it connected.
		assert.deepEqual(order.slice(-2), ["tools/list", "tool_call"], `the second listing before its call ran: ${order}`);
		assert.equal(count(wire, "tools/list"), 2, "one listing per call");
	});

	test("the server's name counts as written at its closing quote: it starts before the next argument begins", async () => {
		// The model's text stops right after `"server":"fx"` (nothing of the next argument yet) until the server's
		// log shows its tool listing (at most 20 s).
		const { run, log } = await runInPi(
			"call the fixture",
			[
				{ tool: "mcp", args: { action: "call", server: "fx", tool: "echo", args: { text: "quoted" } } },
				{ text: "FINAL {{last}}" },
			],
			(log) => ({ PI_FAUX_HOLD_FILE: log, PI_FAUX_HOLD_TEXT: '"method":"tools/list"', PI_FAUX_HOLD_AFTER: '"server":"fx"' }),
		);
		assert.equal(run.code, 0, run.stderr);
		const wire = readWire(log);
		const held = wire.findIndex((line) => line.event === "held");
		assert.deepEqual(
			wire[held],
			{ event: "held", seen: true },
			"the tool listing came while the model had written only the server",
		);
		assert.ok(count(wire.slice(0, held), "start") >= 1);
		assert.equal(count(wire, "tools/list"), 1, "the call joined that listing");
		assert.equal(count(wire.slice(held), "tools/call"), 1);
		const [call] = toolResults(run.events);
		assert.equal(call?.text, "[modern] quoted");
		assert.deepEqual(startedPids(wire).filter(pidAlive), [], "nothing survives Pi's exit");
	});

	test("at a real model's pace (50 tokens/s), the server's own log shows it started before Pi executed the call", async () => {
		const text = "Summarise the open issues of the project in three short sentences for the weekly status note.";
		// Pi's `tool_call` event (the call is about to execute) goes to the server's own log file.
		const { run, log } = await runInPi(
			"call the fixture",
			[{ tool: "mcp", args: { action: "call", server: "fx", tool: "echo", args: { text } } }, { text: "done" }],
			(log) => ({ PI_FAUX_TOKENS_PER_SECOND: "50", PI_FAUX_EVENT_LOG: log }),
		);
		assert.equal(run.code, 0, run.stderr);
		const wire = readWire(log);
		// When the process began (`spawned`), not when it wrote its first line: a loaded machine can take a second
		// to boot Node, and the line then comes after the call's.
		const started = Math.min(...wire.flatMap((line) => (line.event === "start" && line.spawned ? [line.spawned] : [])));
		const executed = wire.find((line) => line.event === "tool_call")?.at;
		assert.ok(Number.isFinite(started) && executed !== undefined, JSON.stringify(wire));
		assert.ok(started < executed, `the server started before the call executed: ${JSON.stringify(wire)}`);
		const [call] = toolResults(run.events);
		assert.equal(call?.text, `[modern] ${text}`);
	});

	test("a call the model never completes leaves a connection that is torn down as usual", async () => {
		const { run, log } = await runInPi(
			"call the fixture",
			[
				{
					tool: "mcp",
					args: { action: "call", server: "fx", tool: "echo", args: { text: "never sent" } },
					error: "the model stopped",
				},
			],
			(log) => ({ PI_FAUX_HOLD_FILE: log, PI_FAUX_HOLD_TEXT: '"method":"tools/list"' }),
		);
		assert.deepEqual(toolResults(run.events), [], "the call never ran");
		const wire = readWire(log);
		assert.deepEqual(
			wire.find((line) => line.event === "toolcall_end"),
			{ event: "toolcall_end", seen: true },
		);
		assert.equal(count(wire, "tools/call"), 0);
		const pids = startedPids(wire);
		assert.ok(pids.length >= 1, "the server had started while the call was written");
		assert.deepEqual(pids.filter(pidAlive), [], "and is gone after Pi's exit");
		assert.deepEqual(run.leftoverPids, []);
	});

	test("a server that fails while the call is written: the call reports it, and the failure is latched", async () => {
		const call = { tool: "mcp", args: { action: "call", server: "broken", tool: "echo", args: { text: "x" } } };
		const { run, log } = await runInPi(
			"call the broken server twice",
			[call, call, { tool: "mcp", args: { action: "status" } }, { text: "done" }],
			(log) => ({ PI_FAUX_HOLD_FILE: log, PI_FAUX_HOLD_TEXT: '"event":"start"' }),
			// Pinned to legacy: in `auto` one setup spawns twice (the SDK's probe sibling, then the resident process).
			(log) => ({
				broken: { command: process.execPath, args: [CRASH], env: { FIXTURE_LOG: log }, protocolVersion: "legacy" },
			}),
		);
		assert.equal(run.code, 0, run.stderr);
		const wire = readWire(log);
		const end = wire.findIndex((line) => line.event === "toolcall_end");
		assert.deepEqual(wire[end], { event: "toolcall_end", seen: true }, "the server was spawned before the call's end");
		const [first, second, status] = toolResults(run.events);
		for (const result of [first, second]) {
			assert.equal(result?.isError, true, result?.text);
			assert.match(result?.text ?? "", /MCP server "broken" failed to start/);
			assert.match(result?.text ?? "", /fixture crash: missing API_KEY/);
		}
		assert.match(status?.text ?? "", /^broken: failed/m);
		assert.equal(count(wire, "start"), 1, "latched: the second call did not spawn again");
		assert.deepEqual(run.leftoverPids, []);
	});

	test("a status call, even one naming a server, starts nothing", async () => {
		const { run, log } = await runInPi("status", [{ tool: "mcp", args: { action: "status", server: "fx" } }, { text: "done" }]);
		assert.equal(run.code, 0, run.stderr);
		const [status] = toolResults(run.events);
		assert.match(status?.text ?? "", /^fx: idle · stdio/m);
		assert.deepEqual(readWire(log), [], "no server process was started");
	});
});
