/**
 * The only module that loads the MCP SDK at runtime: `sdk.ts` imports it on first use (a
 * connection, a sign-in, or the model starting an `mcp` call) for the runtime and auth alike, so
 * registering the extension costs nothing. Elsewhere the SDK is imported for types only.
 */
export {
	AuthorizationServerMismatchError,
	auth,
	Client,
	ClientCredentialsProvider,
	computeScopeUnion,
	DpopSession,
	extractWWWAuthenticateParams,
	InsufficientScopeError,
	IssuerMismatchError,
	OAuthError,
	ProtocolError,
	ProtocolErrorCode,
	SdkError,
	SdkErrorCode,
	SdkHttpError,
	StreamableHTTPClientTransport,
	UriTemplate,
	withDpop,
} from "@modelcontextprotocol/client";
export { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

/** The SDK as `loadSdk()` gives it; modules that only need its types import this type from here. */
export type Sdk = typeof import("./sdk.lazy.ts");
