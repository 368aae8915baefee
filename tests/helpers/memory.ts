/**
 * A real SDK client and server joined by the SDK's in-memory transport pair: for tests of logic where a
 * process adds nothing but time (listings, what is kept from the model). `close` closes both ends.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { loadConfig } from "../../src/config.ts";
import type { Runtime, Session, Transports } from "../../src/contracts.ts";
import { OWNER_ENV } from "../../src/runtime/processes.ts";
import { createRuntime } from "../../src/runtime.ts";
import { SessionOwner } from "../../src/session.ts";

export type MemoryPair = Readonly<{ client: Client; server: McpServer; close: () => Promise<void> }>;

/** A server that `register` fills (tools, resources, prompts) and a client connected to it. */
export async function memoryPair(register: (server: McpServer) => void): Promise<MemoryPair> {
	const server = new McpServer({ name: "memory", version: "1.0.0" }, { capabilities: { tools: {} } });
	register(server);
	const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
	const client = new Client({ name: "pi-mcp-test", version: "0" }, { capabilities: {} });
	await Promise.all([server.connect(serverEnd), client.connect(clientEnd)]);
	return {
		client,
		server,
		close: async () => {
			await client.close();
			await server.close();
		},
	};
}

/**
 * A session's transports over the SDK's in-memory pairs (no process, no socket): each stdio transport
 * asked for is one end of a fresh pair, with the server `make` gives for that command on the other
 * (both eras, as a v2 stdio server serves them), or the error `make` throws. `made` counts the residents
 * (`probes` the probe siblings an `auto` entry starts beside one),
 * `sent` holds every request method the client sent, in order; `ends` the server ends (to close one).
 */
export function memoryTransports(make: (command: string) => (() => McpServer) | "silent"): MemoryTransports {
	const sent: string[] = [];
	const made: string[] = [];
	const probes: string[] = [];
	const ends: InMemoryTransport[] = [];
	const transports: Transports = {
		async stdio(params) {
			// The server's own command, also when it is wrapped (`setsid env PI_MCP_OWNER=… command …`).
			const marked = params.args?.findIndex((arg) => arg.startsWith(`${OWNER_ENV}=`)) ?? -1;
			const command = marked >= 0 ? (params.args?.[marked + 1] ?? params.command) : params.command;
			// An `auto` entry's short-lived probe sibling (stderr ignored) is counted apart from the resident.
			(params.stderr === "ignore" ? probes : made).push(command);
			const server = make(command);
			const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
			ends.push(serverEnd);
			// "silent": nothing answers on the other end (a server that never finishes starting).
			if (server !== "silent") serveStdio(server, { transport: serverEnd });
			const send = clientEnd.send.bind(clientEnd);
			clientEnd.send = (message, options) => {
				if ("method" in message && "id" in message) sent.push(message.method);
				return send(message, options);
			};
			return clientEnd;
		},
		http: () => Promise.reject(new Error("no HTTP over the in-memory pairs")),
	};
	return { transports, made, probes, sent, ends };
}

export type MemoryTransports = Readonly<{
	transports: Transports;
	made: string[];
	probes: string[];
	sent: string[];
	ends: InMemoryTransport[];
}>;

/**
 * A session built as the extension and `pi-mcp` build theirs (`SessionOwner`), over an mcp.json holding
 * `servers` in a temporary directory of its own, whose stdio servers are the in-memory ones `make` gives
 * for their command. `close` stops the session and removes the directory.
 */
export async function memorySession(
	servers: Readonly<Record<string, unknown>>,
	make: (command: string) => (() => McpServer) | "silent",
): Promise<MemoryTransports & Readonly<{ session: Session; dir: string; close: () => Promise<void> }>> {
	const dir = await mkdtemp(join(tmpdir(), "pi-mcp-memory-"));
	await writeFile(join(dir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
	const config = await loadConfig({ agentDir: dir, cwd: dir, trusted: false, env: {} });
	const memory = memoryTransports(make);
	const built = new SessionOwner({ config, env: {}, agentDir: dir, overflowDir: dir, transports: memory.transports });
	const session = await built.open();
	const close = async () => {
		await built.dispose();
		await rm(dir, { recursive: true, force: true });
	};
	return { ...memory, session, dir, close };
}

/**
 * A bare runtime (no session) over an mcp.json holding `servers` in a temporary directory of its own, whose
 * stdio servers are the in-memory ones `make` gives for their command. `close` disposes it and removes the directory.
 */
export async function memoryRuntime(
	servers: Readonly<Record<string, unknown>>,
	make: (command: string) => (() => McpServer) | "silent",
): Promise<MemoryTransports & Readonly<{ runtime: Runtime; close: () => Promise<void> }>> {
	const dir = await mkdtemp(join(tmpdir(), "pi-mcp-memory-"));
	await writeFile(join(dir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
	const config = await loadConfig({ agentDir: dir, cwd: dir, trusted: false, env: {} });
	const memory = memoryTransports(make);
	const runtime = createRuntime({
		servers: config.servers,
		env: {},
		clientInfo: { name: "t", version: "0" },
		transports: memory.transports,
	});
	const close = async () => {
		await runtime.dispose();
		await rm(dir, { recursive: true, force: true });
	};
	return { ...memory, runtime, close };
}
