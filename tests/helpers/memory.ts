/**
 * A real SDK client and server joined by the SDK's in-memory transport pair: for tests of logic where a
 * process adds nothing but time (listings, what is kept from the model). `close` closes both ends.
 */
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/server";

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
