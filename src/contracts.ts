/**
 * What the rooms promise each other, declared once: the runtime's face (\`Runtime\`, its options and
 * the credentials it needs), one open connection, the session the actions run in, and the auth face.
 * Types only: the rooms that implement them (runtime.ts, auth.ts) and the rooms that use them import
 * this file, not each other, so the surfaces above never depend on how a connection is made.
 */

import type { Stream } from "node:stream";
import type {
	AuthProvider,
	CallToolResult,
	Client,
	InsufficientScopeError,
	JsonSchemaType,
	jsonSchemaValidator,
	Middleware,
	StreamableHTTPClientTransportOptions,
	Tool,
	Transport,
} from "@modelcontextprotocol/client";
import type { StdioServerParameters } from "@modelcontextprotocol/client/stdio";
import type { AuthorizationRequired, AuthRequired, Worded, Words } from "./errors.ts";
import type { OverflowStore } from "./output.ts";
import type { ConfigSnapshot, ServerConfig, ServerEntry, ServerSource } from "./schema.ts";

export type ClientInfo = Readonly<{ name: string; version: string }>;

/**
 * A client's output-schema checks (`outputChecks`, runtime/validate.ts): the SDK's validator slot accepts
 * everything; the call compiles and checks here, off Pi's thread, each within a deadline.
 */
export type OutputChecks = jsonSchemaValidator &
	Readonly<{
		/**
		 * Compiles the check for `schema` unless it is held: "compiled" now, "held" already (an earlier
		 * prepare or call), "failed" when it does not compile (left to the call, which reports it).
		 */
		prepare(schema: JsonSchemaType): Promise<Prepared>;
		/** Throws, saying why, when `schema` does not compile within `withinMs`. */
		compile(schema: JsonSchemaType, withinMs: number): Promise<void>;
		/** Throws, saying why, when `value` does not match `schema` or cannot be checked within `withinMs`. */
		check(schema: JsonSchemaType, value: unknown, withinMs: number): Promise<void>;
		/** Ends the checking thread. */
		close(): void;
	}>;

/** What `prepare` did: see `OutputChecks.prepare`; "none" when there was no schema to compile. */
export type Prepared = "compiled" | "held" | "failed" | "none";

/** An open connection. */
export type Live = Readonly<{
	client: Client;
	/** Process group of a stdio server (setsid makes the child its leader). */
	pgid?: number;
	/** Value of `OWNER_ENV` given to a stdio server's processes. */
	owner?: string;
	era: string;
	protocolVersion: string;
	serverName?: string;
	instructions?: string;
	/** Closes on purpose (not reported as a failure): the client, then every process of the server. */
	close(): Promise<void>;
	/** The checks the client validates structured results with. */
	outputChecks: OutputChecks;
}>;

/**
 * An HTTP server's credentials for its transport: the SDK's narrow `AuthProvider` (a token per
 * request, a 401 hook), and for DPoP-bound tokens `fetch`, the wrapper the transport's fetch goes
 * through so that each request carries its proof (the SDK's `withDpop`; it passes other tokens
 * through untouched).
 */
export type TransportAuth = AuthProvider & Readonly<{ fetch?: Middleware }>;

/**
 * What the runtime needs from credentials (`auth.ts` provides it; declared here so that the
 * runtime does not depend on the auth modules).
 */
export interface Credentials {
	/**
	 * The transport's auth provider, or `undefined`; throws `AuthRequired` when sign-in is needed.
	 * `signal` is the setup's (timeout, reconnect, shutdown): requests and keyring calls stop with it.
	 */
	prepare(config: ServerConfig, signal?: AbortSignal): Promise<TransportAuth | undefined>;
	/** A `403 insufficient_scope`: an error carrying a new link for the wider scope. */
	stepUp(config: ServerConfig, error: InsufficientScopeError): Promise<Error>;
	/** Every secret value seen this session, for the sanitiser. */
	secrets(): readonly string[];
	/**
	 * The entry with its `${secret:NAME}` values from the keyring, read at connect time (and remembered
	 * for redaction); throws `SecretRequired` for one not stored for this server, `SetupFailed` when the
	 * keyring cannot be used. Absent where no keyring is used (the entry's secrets are then refused).
	 */
	withSecrets?(config: ServerConfig, signal?: AbortSignal): Promise<ServerConfig>;
}

/** A stdio transport; one over a real process also gives the process's id and its stderr. */
export type StdioTransport = Transport & Partial<Readonly<{ pid: number | null; stderr: Stream | null }>>;

/**
 * Where a session's transports come from: each call makes a new transport, not yet started. The real
 * ones by default (`runtime/transports.ts`); a test hands in the SDK's in-memory pairs.
 */
export type Transports = Readonly<{
	stdio(params: StdioServerParameters): Promise<StdioTransport>;
	http(url: URL, options: StreamableHTTPClientTransportOptions): Promise<Transport>;
}>;

export type RuntimeOptions = Readonly<{
	servers: readonly ServerEntry[];
	env: Readonly<Record<string, string | undefined>>;
	clientInfo: ClientInfo;
	/** Credentials for servers with `auth`; without it such servers fail with `AuthRequired`. */
	auth?: Credentials;
	/** How messages name the next step (the front end's commands); defaults to Pi's `/mcp …`. */
	words?: Words;
	/** Defaults to the real ones (`runtime/transports.ts`): a child process per stdio server, Streamable HTTP. */
	transports?: Transports;
	/** `<agent dir>/mcp-pins.json` (#47); without it nothing is pinned (a session made by hand in a test). */
	pinsPath?: string;
}>;

/** Whether a server's definitions are pinned, how many are withheld, and the model's one line about them. */
export type PinStatus = Readonly<{ state: "pinned" | "not pinned" | "unreadable"; pending: number; note?: string }>;

/** What a review of a server shows (#47): its withheld definitions and, when it cannot be read, the pins file's problem. */
export type PinReview = Readonly<{ state: PinStatus["state"]; pending: readonly PendingChange[]; error?: string }>;

/**
 * A definition withheld from the model until the user approves it (#47), as a review shows it: `before`
 * (the approved one, none when new) and `after` as indented JSON, hidden characters escaped visibly.
 */
export type PendingChange = Readonly<{
	key: string;
	kind: "tools" | "prompts" | "templates" | "instructions";
	name: string;
	reason: "changed" | "new" | "external" | "unreadable";
	/** One line: what it is and why it is withheld. */
	title: string;
	before: string;
	after: string;
}>;

/** A prompt or resource template a request names: refused before sending while it is withheld. */
export type Named = Readonly<{ kind: "prompts" | "templates"; name: string }>;

export type ConnectionState = "idle" | "connecting" | "ready" | "failed" | "disabled" | "invalid";

export type ServerStatus = Readonly<{
	name: string;
	source: ServerSource;
	state: ConnectionState;
	transport?: "stdio" | "http";
	description?: string;
	error?: string;
	/** An invalid entry's problem alone, without the server and file `error` names. */
	problem?: string;
	/** A failure's message made with another front end's words (where it names a next step). */
	errorIn?: Worded;
	era?: string;
	protocolVersion?: string;
	serverName?: string;
	toolCount?: number;
	stderrTail?: string;
	ignoredKeys: readonly string[];
	/** Per field of `includeTools` / `excludeTools` set: how many listed tools it hides (once listed). */
	hiddenTools?: readonly Readonly<{ field: "includeTools" | "excludeTools"; count?: number; names?: readonly string[] }>[];
	/** The server's instructions, sanitised and bounded (once connected); changed ones only once approved. */
	instructions?: string;
	/** Pinning (#47): absent for an entry with no usable configuration. */
	pins?: PinStatus;
}>;

export type Progress = Readonly<{ progress: number; total?: number; message?: string }>;

export type CallOptions = Readonly<{ signal?: AbortSignal; onProgress?: (progress: Progress) => void }>;

/** A server capability a request needs; checked before sending so a missing one gets a clear message. */
export type Capability = "resources" | "prompts" | "completions";

/** Options the SDK request methods take: the caller's cancel and the timeout (shutdown closes the client). */
export type RequestOptions = Readonly<{ signal?: AbortSignal; timeout: number }>;

export interface Runtime {
	/** State of every configured server; never connects. */
	status(): readonly ServerStatus[];
	/** Names of all entries, for completions. */
	names(): readonly string[];
	/** The tools of the last listing in the server's order, those hidden from the model included; never connects. */
	listed(server: string): readonly Tool[];
	/** Connects if needed and lists the model-visible tools anew (joining a listing in flight). */
	tools(server: string, signal?: AbortSignal): Promise<readonly Tool[]>;
	/** The definition of one model-visible tool (from the listing held), its output check compiled. */
	tool(server: string, name: string, signal?: AbortSignal): Promise<Tool>;
	call(server: string, tool: string, args: Record<string, unknown>, options?: CallOptions): Promise<CallToolResult>;
	/**
	 * Runs one SDK request on a server's client (connecting if needed), after checking the
	 * capability; errors become `CallFailed` with the server named. `what` describes the request.
	 */
	request<T>(
		server: string,
		what: string,
		capability: Capability,
		run: (client: Client, options: RequestOptions) => Promise<T>,
		signal?: AbortSignal,
		named?: Named,
	): Promise<T>;
	/** Connects and lists every kind of definition, then what is withheld until the user approves it (#47). */
	changes(server: string, signal?: AbortSignal): Promise<PinReview>;
	/** Approves withheld definitions (these keys, or all), writes the pins and lists again; how many were approved. */
	approve(server: string, keys?: readonly string[], signal?: AbortSignal): Promise<number>;
	/** Closes the client and resets the server to idle (and clears a latched failure). */
	reset(server: string): Promise<void>;
	/** Connects now (used by `/mcp reconnect`); resolves to the status afterwards. */
	connect(server: string, signal?: AbortSignal): Promise<ServerStatus>;
	/** The server's instructions for the model: the first time asked this session, once connected; else undefined. */
	instructionsOnce(server: string): string | undefined;
	/** Replaces the entries; connections whose entry changed or vanished are closed. */
	update(servers: readonly ServerEntry[]): Promise<void>;
	/** Aborts everything, closes every client and kills every process group. Idempotent. */
	dispose(): Promise<void>;
}

/**
 * Tools the user allowed for the rest of the session (`tool/confirm.ts`); owned by the session, gone with it.
 * `entry` marks the server's entry as it was allowed: once the entry changes, the yes no longer holds.
 */
export interface Allowed {
	has(server: string, tool: string, entry: string): boolean;
	add(server: string, tool: string, entry: string): void;
}

/**
 * What a call, `/mcp` or a shell command works in: the session's configuration snapshot, runtime, overflow
 * store and credentials (`SessionOwner.open`, session.ts). `allowed`: absent where nobody is asked.
 */
export type Session = Readonly<{
	config: ConfigSnapshot;
	runtime: Runtime;
	overflow: OverflowStore;
	auth: Auth;
	allowed?: Allowed;
}>;

/**
 * A server's credentials, read locally: what is missing, as data (a face words it: the manager's "needs
 * secret NAME" state), and the one line every face shows as it is.
 */
export type CredentialState = Readonly<{
	/** Stored secrets the entry names and that cannot be given to it (not stored, or stored for another command). */
	missingSecrets: readonly string[];
	/** A browser sign-in is missing or has expired beyond refresh. */
	needsSignIn: boolean;
	/** "needs secret API_KEY; signed in (expires in 5 min)": the same words in every face. */
	text: string;
}>;

export interface Auth {
	/**
	 * Called right before connecting. `undefined` for servers without auth; otherwise the narrow
	 * provider for the transport. Throws `AuthRequired` (`AuthorizationRequired` with a link for
	 * OAuth sign-in), `KeyringUnavailable`, or `SetupFailed` (configuration or server problems).
	 * `signal` (the setup's: timeout, reconnect, shutdown) bounds every request and keyring call;
	 * without one they get the server's request timeout.
	 */
	prepare(config: ServerConfig, signal?: AbortSignal): Promise<TransportAuth | undefined>;
	/** A `403 insufficient_scope`: an error carrying a new link for the wider scope. */
	stepUp(config: ServerConfig, error: InsufficientScopeError): Promise<AuthRequired>;
	/** `/mcp login <server>`: a fresh link, also when signed in (re-authentication). */
	login(config: ServerConfig): Promise<AuthorizationRequired>;
	/** `/mcp login <server> <redirected-url>`: see `LoginService.completeFromUrl`. */
	complete(config: ServerConfig, redirectedUrl: string): Promise<"completed" | "failed">;
	/** `/mcp logout <server>`: deletes the record and forgets session tokens; true if a record existed. */
	logout(config: ServerConfig): Promise<boolean>;
	/** What the server's credentials need, and their line for `/mcp status`; read locally (no network). */
	credentialState(config: ServerConfig): Promise<CredentialState>;
	/** Every secret value seen this session, for other sanitisers. */
	secrets(): readonly string[];
	/** See `Credentials.withSecrets`. */
	withSecrets(config: ServerConfig, signal?: AbortSignal): Promise<ServerConfig>;
	/** Stores `value` as the server's secret `name` in the keyring (for its identity only). */
	setSecret(config: ServerConfig, name: string, value: string): Promise<void>;
	/** Cancels pending sign-ins and forgets session tokens (the login service is disposed by its owner). */
	dispose(): void;
}

// UI stack (`/mcp` command, manager, `pi-mcp`):

/** One `mcp` call as it begins to run: its id and what it names. */
export type CallStart = Readonly<{ id: string; action: string; server?: string }>;

/**
 * Where the `mcp` tool's calls get their session (`index.ts` hands it out; the early start wraps it,
 * `tool/early/listen.ts`). Never connects by itself.
 */
export type Calls = Readonly<{
	/** The configured entries now (none before the configuration is read); never waits or loads. */
	entries(): readonly ServerEntry[];
	/** The current runtime, only if it was made (closing never makes one). */
	runtime(): Runtime | undefined;
	/** Loads the tool's modules and the SDK ahead of a call, and reads the configuration if it is not read yet;
	 * resolves once it is (never rejects: a failure is the call's to report). */
	preload(): Promise<void>;
	/** The session a call runs in (`call`: the one executed now, if any): waits for a session still loading;
	 * its runtime is made on first use. */
	open(call?: CallStart): Promise<Session>;
}>;
