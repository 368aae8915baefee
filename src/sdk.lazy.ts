/**
 * The only module that loads the MCP SDK at runtime. `runtime.ts` imports it lazily on the first
 * connection so that registering the extension costs nothing.
 */
export {
	Client,
	InsufficientScopeError,
	SdkError,
	SdkErrorCode,
	SdkHttpError,
	StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
export { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
