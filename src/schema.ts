/**
 * Server configuration shapes: the `mcpServers` entries of Pi's `mcp.json` plus pi-mcp's own
 * fields. Validation here is about shape only; `config.ts` resolves variables, paths and URLs. The
 * entry is checked here as a whole (its transport, which keys belong, an override); each field's own
 * check is `schema/fields.ts`'s, the credentials' `schema/auth.ts`'s.
 */

import { type AuthKind, authKind, type OAuthSettings, oauthSettings } from "./schema/auth.ts";
import type { ConfirmSetting } from "./schema/confirm.ts";
import {
	checkKeys,
	confirmSetting,
	enabledFlag,
	envName,
	type Fields,
	fail,
	isObject,
	onUnlessFalse,
	optionalString,
	type ProtocolMode,
	protocolMode,
	requestTimeout,
	ShapeError,
	stringArray,
	stringMap,
	toolFilter,
} from "./schema/fields.ts";
import { closeMatches, unknownKeys } from "./schema/keys.ts";
import type { ToolFilter } from "./schema/tool-filter.ts";

export type { AuthKind, GrantType, OAuthSettings } from "./schema/auth.ts";
export { PROTOCOL_MODES, type ProtocolMode, parseJson } from "./schema/fields.ts";
export { closeMatches, isObject };

/** What only one transport has: a stdio server's command, an HTTP server's URL and credentials. */
type Transport =
	| Readonly<{
			transport: "stdio";
			command: string;
			url?: undefined;
			auth?: undefined;
			bearerTokenEnv?: undefined;
			oauth?: undefined;
	  }>
	| Readonly<{
			transport: "http";
			url: string;
			command?: undefined;
			auth?: AuthKind;
			bearerTokenEnv?: string;
			oauth?: OAuthSettings;
	  }>;

/** One entry as written in a file, shape-checked, before variables and paths are resolved. */
export type RawServer = Transport &
	ToolFilter &
	Readonly<{
		args: readonly string[];
		env: Readonly<Record<string, string>>;
		cwd?: string;
		headers: Readonly<Record<string, string>>;
		enabled: boolean;
		/** Whether the server may start while the model is still writing a call to it (default true). */
		earlyStart?: boolean;
		description?: string;
		/** Per-request timeout in milliseconds (from `requestTimeoutMs` or `timeout` seconds). */
		requestTimeoutMs?: number;
		protocolVersion: ProtocolMode;
		/** Which tool calls wait for the user's yes (`schema/confirm.ts`); default "none". */
		confirm?: ConfirmSetting;
		/** Pin what the server shows the model until the user approves a change (#47; default true). */
		pin?: boolean;
		/** Pi-only keys that were accepted but have no effect here. */
		ignoredKeys: readonly string[];
	}>;

export type SourceKind = "user" | "project" | "extension";
export type ServerSource = Readonly<{ kind: SourceKind; path: string }>;

/** A fully resolved server (a union on `transport`): variables expanded, paths absolute, URLs checked. */
export type ServerConfig = RawServer &
	Readonly<{
		name: string;
		source: ServerSource;
		requestTimeoutMs: number;
		/** Values that came from environment variables; redacted from every message. */
		secretValues: readonly string[];
	}>;

/** A server that talks Streamable HTTP (the only kind with credentials). */
export type HttpServerConfig = Extract<ServerConfig, { transport: "http" }>;

/** One named entry: usable (`config`) or not (`error`, which names the file, server and field). */
export type ServerEntry = Readonly<{
	name: string;
	source: ServerSource;
	enabled: boolean;
	config?: ServerConfig;
	error?: string;
	/** What is wrong, without the server and file `error` names (set with `error`). */
	problem?: string;
	ignoredKeys: readonly string[];
}>;

export type FileReport = Readonly<{
	scope: "user" | "project";
	path: string;
	state: "loaded" | "missing" | "untrusted" | "error";
	error?: string;
	/** Problems that do not stop the file from loading (top-level keys that are not Pi's). */
	warnings?: readonly string[];
}>;

export type ConfigSnapshot = Readonly<{ servers: readonly ServerEntry[]; files: readonly FileReport[] }>;

/** A project entry that only switches a user entry on or off. */
export type RawOverride = Readonly<{ enabled: boolean; ignoredKeys: readonly string[] }>;

export type EntryShape =
	| Readonly<{ kind: "server"; server: RawServer }>
	| Readonly<{ kind: "override"; override: RawOverride }>
	| Readonly<{ kind: "invalid"; error: string }>;

/** Server names are used in commands and messages; Pi allows the same set. */
export const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const COMMON_KEYS = [
	"type",
	"enabled",
	"disabled",
	"earlyStart",
	"description",
	"timeout",
	"requestTimeoutMs",
	"protocolVersion",
	"includeTools",
	"excludeTools",
	"confirm",
	"pin",
];
const STDIO_KEYS = ["command", "args", "env", "cwd"];
const HTTP_KEYS = ["url", "headers", "auth", "bearerTokenEnv", "oauth"];
const PI_ONLY_KEYS = ["exposure", "toolExposure"];
const OVERRIDE_KEYS = ["enabled", "disabled", ...PI_ONLY_KEYS];

/** The transport an entry uses: `type` as written, or what `command` / `url` imply. */
function transportOf(raw: Fields): "stdio" | "http" {
	const { type, command, url } = raw;
	if (type === "sse") {
		fail(
			'type "sse" (the deprecated HTTP+SSE transport) is not supported; point "url" at the server\'s Streamable HTTP endpoint (often ending in /mcp rather than /sse) and use "type": "http"',
		);
	}
	if (type !== undefined && type !== "stdio" && type !== "http" && type !== "streamable-http") {
		fail('field "type" must be "stdio", "http" or "streamable-http"');
	}
	if (command !== undefined && url !== undefined) fail('set either "command" (stdio) or "url" (HTTP), not both');
	const transport = type === undefined ? (url !== undefined ? "http" : "stdio") : type === "stdio" ? "stdio" : "http";
	if (transport === "stdio" && command === undefined) {
		// A misspelt "command" ("cmd") is the likely cause: name it.
		const unknown = unknownKeys(raw, [...COMMON_KEYS, ...STDIO_KEYS, ...HTTP_KEYS, ...PI_ONLY_KEYS]);
		const base = type === undefined ? 'set "command" (stdio) or "url" (HTTP)' : 'field "command" is required for a stdio server';
		fail(unknown ? `${base}; ${unknown}` : base);
	}
	if (transport === "http" && url === undefined) fail('field "url" is required for an HTTP server');
	return transport;
}

/** A server entry: its transport, only the keys that transport takes, each field checked. */
function serverShape(raw: Fields): RawServer {
	const transport = transportOf(raw);
	const own = transport === "stdio" ? STDIO_KEYS : HTTP_KEYS;
	const other = transport === "stdio" ? HTTP_KEYS : STDIO_KEYS;
	const misplaced = Object.keys(raw).find((key) => other.includes(key));
	if (misplaced) fail(`field "${misplaced}" applies only to ${transport === "stdio" ? "HTTP" : "stdio"} servers`);
	checkKeys(raw, [...COMMON_KEYS, ...own, ...PI_ONLY_KEYS]);
	const auth = transport === "http" ? authKind(raw) : undefined;
	const command = optionalString(raw, "command");
	const url = optionalString(raw, "url");
	const shared = {
		args: stringArray(raw, "args"),
		env: stringMap(raw, "env"),
		cwd: optionalString(raw, "cwd"),
		headers: stringMap(raw, "headers"),
		enabled: enabledFlag(raw),
		earlyStart: onUnlessFalse(raw, "earlyStart"),
		description: optionalString(raw, "description"),
		requestTimeoutMs: requestTimeout(raw),
		...toolFilter(raw),
		confirm: confirmSetting(raw),
		pin: onUnlessFalse(raw, "pin"),
		protocolVersion: protocolMode(raw),
	};
	const ignoredKeys = PI_ONLY_KEYS.filter((key) => key in raw);
	// `transportOf` made sure the stdio server has its command and the HTTP server its URL.
	if (transport === "stdio" && command !== undefined) {
		const none = { auth: undefined, bearerTokenEnv: undefined, oauth: undefined };
		return { transport, command, url: undefined, ...shared, ...none, ignoredKeys };
	}
	if (transport !== "http" || url === undefined) return fail('set "command" (stdio) or "url" (HTTP)');
	const bearerTokenEnv = auth === "bearer" ? envName(raw, "bearerTokenEnv") : undefined;
	const oauth = auth === "oauth" ? oauthSettings(raw) : undefined;
	return { transport, command: undefined, url, ...shared, auth, bearerTokenEnv, oauth, ignoredKeys };
}

function bearerRequirement(server: RawServer): RawServer {
	if (server.auth === "bearer" && server.bearerTokenEnv === undefined) {
		fail('field "bearerTokenEnv" is required for auth "bearer"');
	}
	return server;
}

/**
 * Checks one entry's shape. `allowOverride` is true for project files, where an entry holding only
 * `enabled`/`disabled` (and Pi's exposure keys) switches the user entry of the same name.
 */
export function parseEntry(raw: unknown, allowOverride: boolean): EntryShape {
	try {
		if (!isObject(raw)) fail("entry must be an object");
		const isOverride =
			allowOverride &&
			Object.keys(raw).length > 0 &&
			Object.keys(raw).every((key) => OVERRIDE_KEYS.includes(key)) &&
			(raw.enabled !== undefined || raw.disabled !== undefined);
		if (isOverride) {
			return {
				kind: "override",
				override: { enabled: enabledFlag(raw), ignoredKeys: PI_ONLY_KEYS.filter((key) => key in raw) },
			};
		}
		return { kind: "server", server: bearerRequirement(serverShape(raw)) };
	} catch (error) {
		if (error instanceof ShapeError) return { kind: "invalid", error: error.message };
		throw error;
	}
}
