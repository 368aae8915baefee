/**
 * The transport factory a session is built with: a test hands in the SDK's in-memory pair, and a real
 * session call runs over it (no child process, no socket), in both eras, and a reconnect reuses the era found.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { InMemoryTransport } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import * as z from "zod/v4";
import { loadConfig } from "../../src/config.ts";
import type { Transports } from "../../src/contracts.ts";
import { SessionOwner } from "../../src/session.ts";

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
	for (const cleanup of cleanups) await cleanup();
});

function echoServer(): McpServer {
	const server = new McpServer({ name: "in-memory", version: "1.0.0" }, { capabilities: { tools: {} } });
	server.registerTool("echo", { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
		content: [{ type: "text", text: `echo: ${text}` }],
	}));
	return server;
}

/** Each stdio transport asked for is one end of a fresh in-memory pair with a server on the other end. */
function inMemory(made: string[]): Transports {
	return {
		async stdio(params) {
			made.push(params.command);
			const [client, server] = InMemoryTransport.createLinkedPair();
			// Both eras, as a v2 stdio server serves them; the opening message picks one.
			serveStdio(echoServer, { transport: server });
			return client;
		},
		http: () => Promise.reject(new Error("no HTTP in this test")),
	};
}

async function session(protocolVersion: string, transports: Transports) {
	const dir = await mkdtemp(join(tmpdir(), "pi-mcp-transports-"));
	const servers = { mem: { command: "never-run", args: [], protocolVersion } };
	await writeFile(join(dir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
	const config = await loadConfig({ agentDir: dir, cwd: dir, trusted: false, env: process.env });
	const built = new SessionOwner({ config, env: process.env, agentDir: dir, overflowDir: dir, transports });
	cleanups.push(async () => {
		await built.dispose();
		await rm(dir, { recursive: true, force: true });
	});
	return built.open();
}

for (const [mode, era, made] of [
	["auto", "modern", 2],
	["legacy", "legacy", 1],
] as const) {
	test(`a session call runs over the in-memory pair it was given (${mode})`, async () => {
		const transports: string[] = [];
		const { runtime } = await session(mode, inMemory(transports));
		const result = await runtime.call("mem", "echo", { text: "hi" });
		assert.deepEqual(result.content, [{ type: "text", text: "echo: hi" }]);
		const status = runtime.status().find((entry) => entry.name === "mem");
		assert.equal(status?.state, "ready");
		assert.equal(status?.era, era);
		// From the factory, nothing spawned for the command: in `auto`, the probe sibling's and the resident's.
		assert.equal(transports.length, made);
		// A reconnect reuses the era found: one transport, no sibling.
		await runtime.reset("mem");
		assert.deepEqual((await runtime.call("mem", "echo", { text: "again" })).content, [{ type: "text", text: "echo: again" }]);
		assert.equal(transports.length, made + 1);
		assert.equal(runtime.status().find((entry) => entry.name === "mem")?.era, era);
		await runtime.dispose();
	});
}
