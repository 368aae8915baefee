/**
 * A real SDK client and server joined by the SDK's in-memory transport pair: for tests of logic where a
 * process adds nothing but time (listings, what is kept from the model). `close` closes both ends.
 */
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import type { Transports } from "../../src/contracts.ts";
import { OWNER_ENV } from "../../src/runtime/processes.ts";

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
 * (both eras, as a v2 stdio server serves them), or the error `make` throws. `made` counts the transports,
 * `sent` holds every request method the client sent, in order; `ends` the server ends (to close one).
 */
export function memoryTransports(make: (command: string) => (() => McpServer) | "silent"): MemoryTransports {
	const sent: string[] = [];
	const made: string[] = [];
	const ends: InMemoryTransport[] = [];
	const transports: Transports = {
		async stdio(params) {
			// The server's own command, also when it is wrapped (`setsid env PI_MCP_OWNER=… command …`).
			const marked = params.args?.findIndex((arg) => arg.startsWith(`${OWNER_ENV}=`)) ?? -1;
			const command = marked >= 0 ? (params.args?.[marked + 1] ?? params.command) : params.command;
			made.push(command);
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
	return { transports, made, sent, ends };
}

export type MemoryTransports = Readonly<{ transports: Transports; made: string[]; sent: string[]; ends: InMemoryTransport[] }>;
