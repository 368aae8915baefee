/**
 * Demo/`npm start` only: registers the bundled example server with `pi.registerMcpServer()`, which
 * pi-mcp picks up like a configured server. Not part of the product.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI): void {
	pi.registerMcpServer("example", {
		command: process.execPath,
		args: [new URL("./server.mjs", import.meta.url).pathname],
		description: "Small text utilities (word count, slugify, dice)",
	});
}
