/**
 * Published MCP servers, pinned as dev dependencies: server-everything over stdio and Streamable
 * HTTP (through our runtime and through the real Pi), server-filesystem and server-memory over stdio.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runAction } from "../src/catalog/actions.ts";
import type { Params } from "../src/catalog/requests.ts";
import { loadConfig } from "../src/config.ts";
import type { Session } from "../src/contracts.ts";
import { SessionOwner } from "../src/session.ts";
import type { FauxStep } from "./fixtures/faux.ts";
import { textOf } from "./helpers/output.ts";
import { makeSandbox, runPiJson, type Sandbox, toolResults } from "./helpers/pi.ts";
import { FIXTURES } from "./helpers/servers.ts";

const MODULES = new URL("../node_modules/@modelcontextprotocol/", import.meta.url).pathname;
const EVERYTHING = join(MODULES, "server-everything/dist/index.js");
const FILESYSTEM = join(MODULES, "server-filesystem/dist/index.js");
const MEMORY = join(MODULES, "server-memory/dist/index.js");
const EXTENSION = new URL("../index.ts", import.meta.url).pathname;

function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const probe = createServer();
		probe.once("error", reject);
		probe.listen(0, "127.0.0.1", () => {
			const address = probe.address();
			const port = typeof address === "object" && address ? address.port : 0;
			probe.close(() => resolve(port));
		});
	});
}

/** server-everything in its streamableHttp mode, bound to 127.0.0.1 by a preload. */
async function startEverythingHttp(): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
	const port = await freePort();
	const child = spawn(process.execPath, ["--import", join(FIXTURES, "loopback-only.mjs"), EVERYTHING, "streamableHttp"], {
		env: { ...process.env, PORT: String(port) },
		stdio: ["ignore", "pipe", "pipe"],
	});
	await new Promise<void>((resolve, reject) => {
		const timer = setTimeout(() => reject(new Error("server-everything did not start")), 15_000);
		const onData = (chunk: Buffer) => {
			if (chunk.toString().includes("listening on port")) {
				clearTimeout(timer);
				resolve();
			}
		};
		child.stderr?.on("data", onData);
		child.stdout?.on("data", onData);
		child.once("exit", (code) => reject(new Error(`server-everything exited with ${code}`)));
	});
	return {
		url: `http://127.0.0.1:${port}/mcp`,
		child,
		stop: () =>
			new Promise<void>((resolve) => {
				if (child.exitCode !== null || child.signalCode !== null) return resolve();
				child.once("exit", () => resolve());
				child.kill("SIGTERM");
			}),
	};
}

/** One server-everything over Streamable HTTP for the file: the runtime's tests and Pi's use it in turn. */
const shared: { http?: Awaited<ReturnType<typeof startEverythingHttp>> } = {};
before(async () => {
	shared.http = await startEverythingHttp();
});
after(async () => {
	await shared.http?.stop();
});
const httpUrl = () => shared.http?.url ?? assert.fail("no HTTP server");

describe("published servers through the runtime", () => {
	const state: { session?: Session; owner?: SessionOwner; dir?: string } = {};
	before(async () => {
		const dir = await mkdtemp(join(tmpdir(), "pi-mcp-interop-"));
		state.dir = dir;
		await writeFile(
			join(dir, "mcp.json"),
			JSON.stringify({
				mcpServers: {
					"everything-stdio": { command: process.execPath, args: [EVERYTHING, "stdio"] },
					"everything-http": { url: httpUrl() },
					files: { command: process.execPath, args: [FILESYSTEM, dir] },
					memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } },
				},
			}),
		);
		const config = await loadConfig({ agentDir: dir, cwd: dir, trusted: false, env: process.env });
		state.owner = new SessionOwner({ config, env: process.env, agentDir: dir, overflowDir: dir });
		state.session = await state.owner.open();
	});
	after(async () => {
		await state.owner?.dispose();
		if (state.dir) await rm(state.dir, { recursive: true, force: true });
	});
	const run = (params: Params, onUpdate?: (text: string) => void) =>
		runAction(state.session as Session, params, undefined, onUpdate ? (update) => onUpdate(textOf(update)) : undefined);

	for (const server of ["everything-stdio", "everything-http"]) {
		test(`${server}: tools, echo, image, structured content, progress, unknown tool, resources, prompts`, async () => {
			const tools = textOf(await run({ action: "tools", server }));
			assert.match(tools, /^everything-\w+: 12 tools\n/, tools);
			assert.match(tools, /\necho \[read-only, idempotent\] — Echoes back the input string/);
			assert.doesNotMatch(tools, /simulate-research-query/, "a task-only tool is hidden");
			await assert.rejects(
				run({ action: "call", server, tool: "simulate-research-query", args: { topic: "x" } }),
				/requires MCP tasks/,
			);

			assert.equal(textOf(await run({ action: "call", server, tool: "echo", args: { message: "hi" } })), "Echo: hi");
			const image = await run({ action: "call", server, tool: "get-tiny-image", args: {} });
			assert.deepEqual(
				image.content.map((block) => block.type),
				["text", "image"],
			);
			assert.equal((image.content[1] as { mimeType?: string }).mimeType, "image/png");
			const structured = textOf(
				await run({ action: "call", server, tool: "get-structured-content", args: { location: "New York" } }),
			);
			assert.deepEqual(Object.keys(JSON.parse(structured)).sort(), ["conditions", "humidity", "temperature"]);

			const updates: string[] = [];
			const long = await run(
				{ action: "call", server, tool: "trigger-long-running-operation", args: { duration: 1, steps: 2 } },
				(text) => updates.push(text),
			);
			assert.match(textOf(long), /Long running operation completed/);
			// The SDK can drop the last progress notification when it arrives in the same chunk as the
			// result (it dispatches notifications a microtask later); the first one always arrives.
			assert.equal(updates[0], "50%");

			await assert.rejects(
				run({ action: "call", server, tool: "nope", args: {} }),
				/MCP server "everything-\w+" has no tool "nope"/,
			);

			const resources = textOf(await run({ action: "resources", server, limit: 2 }));
			assert.match(resources, /^everything-\w+: \d+ resources\ndemo:\/\//);
			const uri = /\n(demo:\/\/\S+) —/.exec(resources)?.[1] ?? "";
			assert.ok(textOf(await run({ action: "read", server, uri })).length > 0);
			assert.match(textOf(await run({ action: "prompts", server })), /simple-prompt\(\): A prompt with no arguments/);
			assert.match(textOf(await run({ action: "prompt", server, prompt: "args-prompt", args: { city: "Oslo" } })), /Oslo/);
			const status = state.session?.runtime.status().find((s) => s.name === server);
			assert.equal(status?.era, "legacy", "server-everything is legacy-only; auto falls back");
		});
	}

	test("server-filesystem and server-memory over stdio", async () => {
		const dir = state.dir as string;
		assert.match(textOf(await run({ action: "tools", server: "files" })), /read_text_file/);
		const path = join(dir, "note.txt");
		assert.match(
			textOf(await run({ action: "call", server: "files", tool: "write_file", args: { path, content: "hello fs" } })),
			/Successfully wrote/,
		);
		assert.equal(textOf(await run({ action: "call", server: "files", tool: "read_text_file", args: { path } })), "hello fs");
		const outside = await run({ action: "call", server: "files", tool: "read_text_file", args: { path: "/etc/hostname" } });
		assert.equal(outside.isError, true, "the filesystem server's own access check is a tool error");

		await run({
			action: "call",
			server: "memory",
			tool: "create_entities",
			args: { entities: [{ name: "pi", entityType: "agent", observations: ["uses mcp"] }] },
		});
		const graph = JSON.parse(textOf(await run({ action: "call", server: "memory", tool: "read_graph", args: {} })));
		assert.deepEqual(graph.entities, [{ name: "pi", entityType: "agent", observations: ["uses mcp"] }]);
	});
});

describe("server-everything through the real Pi", () => {
	const sandboxes: Sandbox[] = [];
	after(async () => {
		await Promise.all(sandboxes.map((sandbox) => sandbox.cleanup()));
	});

	// One Pi for both transports: the same steps against each server, in one faux script.
	test("stdio and http: tools, echo, image, structured content, progress through the mcp tool", async () => {
		const sandbox = await makeSandbox();
		sandboxes.push(sandbox);
		const entries = { stdio: { command: process.execPath, args: [EVERYTHING, "stdio"] }, http: { url: httpUrl() } };
		await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: entries }));
		const steps = (server: string): FauxStep[] => [
			{ tool: "mcp", args: { action: "tools", server, query: "echo" } },
			{ tool: "mcp", args: { action: "call", server, tool: "echo", args: { message: "via pi" } } },
			{ tool: "mcp", args: { action: "call", server, tool: "get-tiny-image", args: {} } },
			{ tool: "mcp", args: { action: "call", server, tool: "get-structured-content", args: { location: "Chicago" } } },
			{
				tool: "mcp",
				args: { action: "call", server, tool: "trigger-long-running-operation", args: { duration: 1, steps: 2 } },
			},
			{ tool: "mcp", args: { action: "call", server, tool: "nope", args: {} } },
		];
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			prompt: "everything",
			script: [...steps("stdio"), ...steps("http"), { text: "done" }],
			timeoutMs: 90_000,
		});
		assert.equal(run.code, 0, run.stderr);
		const results = toolResults(run.events);
		for (const [index, server] of ["stdio", "http"].entries()) {
			const [tools, echo, image, structured, long, unknown] = results.slice(index * 6, index * 6 + 6);
			assert.match(
				tools?.text ?? "",
				new RegExp(`^${server}: \\d+ tools? match(es)? "echo", best first\\necho( \\[[\\w, -]+\\])? — `),
			);
			assert.equal(echo?.text, "Echo: via pi");
			assert.match(image?.text ?? "", /\[image:image\/png\]/);
			assert.match(structured?.text ?? "", /"temperature"/);
			assert.match(long?.text ?? "", /Long running operation completed/);
			assert.equal(unknown?.isError, true);
			assert.match(unknown?.text ?? "", new RegExp(`MCP server "${server}" has no tool "nope"`));
			// Progress reached Pi while the long operation ran.
			const updated = run.events.some((event) => event.type === "tool_execution_update" && event.toolCallId === long?.toolCallId);
			assert.ok(updated, `progress from ${server}`);
		}
		assert.doesNotMatch(run.stderr, /Extension error/);
	});
});
