/**
 * The real transports, the default of a session's `Transports` (contracts.ts): a child process per stdio
 * server, Streamable HTTP for the rest. A test hands in its own factory (the SDK's in-memory pairs) where
 * a process would add only time; what a transport is given is decided in `open.ts` either way.
 */
import type { Transports } from "../contracts.ts";
import { loadSdk } from "../sdk.ts";

export const realTransports: Transports = {
	async stdio(params) {
		const sdk = await loadSdk();
		return new sdk.StdioClientTransport(params);
	},
	async http(url, options) {
		const sdk = await loadSdk();
		return new sdk.StreamableHTTPClientTransport(url, options);
	},
};
