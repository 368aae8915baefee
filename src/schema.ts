/**
 * Server configuration shapes: the `mcpServers` entries of Pi's `mcp.json` plus pi-mcp's own
 * fields. Validation here is about shape only; `config.ts` resolves variables, paths and URLs.
 */

import type { ConfirmSetting } from "./schema/confirm.ts";
import { closeMatches, unknownKeys } from "./schema/keys.ts";
import type { ToolFilter } from "./schema/tool-filter.ts";

export { closeMatches };

export type ProtocolMode = "auto" | "legacy" | "2026-07-28";
export type AuthKind = "oauth" | "bearer";
export type GrantType = "authorization_code" | "client_credentials";

export type OAuthSettings = Readonly<{
	/** Default `authorization_code`. */
	grantType: GrantType;
	clientId?: string;
	/** Name of the environment variable holding the client secret (never the secret itself). */
	clientSecretEnv?: string;
	/** Exact issuer; required with a pre-registered `clientId` and for `client_credentials`. */
	issuer?: string;
	/** Loopback redirect URI; default: an ephemeral port on 127.0.0.1 with path `/callback`. */
	redirectUri?: string;
	/** HTTPS URL of this client's metadata document (CIMD): the `client_id` where the server supports it. */
	clientMetadataUrl?: string;
	scope?: string;
}>;

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
		/** Pin what the server shows the model until the user approves a change (#47; default true). */ pin?: boolean;
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

export const PROTOCOL_MODES: readonly ProtocolMode[] = ["auto", "legacy", "2026-07-28"];

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
const OAUTH_KEYS = ["grantType", "clientId", "clientSecretEnv", "issuer", "redirectUri", "clientMetadataUrl", "scope"];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const MAX_TIMEOUT_MS = 3_600_000; // One hour: the longest per-request timeout a file may set.

type Fields = Record<string, unknown>;

/** A plain object (not null, not an array). */
export function isObject(value: unknown): value is Fields {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

class ShapeError extends Error {}

function fail(message: string): never {
	throw new ShapeError(message);
}

function optionalString(raw: Fields, key: string, label = key): string | undefined {
	const value = raw[key];
	if (value === undefined) return undefined;
	if (typeof value !== "string" || value.length === 0) fail(`field "${label}" must be a non-empty string`);
	return value;
}

function stringArray(raw: Fields, key: string): readonly string[] {
	const value = raw[key];
	if (value === undefined) return [];
	if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) {
		fail(`field "${key}" must be an array of strings`);
	}
	return value;
}

function stringMap(raw: Fields, key: string): Readonly<Record<string, string>> {
	const value = raw[key];
	if (value === undefined) return {};
	if (!isObject(value)) fail(`field "${key}" must be an object of strings`);
	const bad = Object.entries(value).find(([, item]) => typeof item !== "string");
	if (bad) fail(`field "${key}.${bad[0]}" must be a string`);
	return value as Record<string, string>;
}

function envName(raw: Fields, key: string, label = key): string | undefined {
	const value = optionalString(raw, key, label);
	if (value !== undefined && !ENV_NAME.test(value)) {
		fail(`field "${label}" must name an environment variable (letters, digits, _), not hold a value`);
	}
	return value;
}

function checkKeys(raw: Fields, allowed: readonly string[], prefix = ""): void {
	const message = unknownKeys(raw, allowed, prefix);
	if (message !== undefined) fail(message);
}
/** A flag that is on unless set to false: `earlyStart`, `pin`. */
function onUnlessFalse(raw: Fields, key: "earlyStart" | "pin"): boolean {
	if (raw[key] !== undefined && typeof raw[key] !== "boolean") fail(`field "${key}" must be true or false`);
	return raw[key] !== false;
}

function enabledFlag(raw: Fields): boolean {
	const { enabled, disabled } = raw;
	if (enabled !== undefined && typeof enabled !== "boolean") fail('field "enabled" must be true or false');
	if (disabled !== undefined && typeof disabled !== "boolean") fail('field "disabled" must be true or false');
	if (enabled !== undefined && disabled !== undefined && enabled === disabled) {
		fail('fields "enabled" and "disabled" contradict each other');
	}
	return enabled ?? (disabled === undefined ? true : !disabled);
}

function requestTimeout(raw: Fields): number | undefined {
	const { timeout, requestTimeoutMs } = raw;
	if (timeout !== undefined && requestTimeoutMs !== undefined) {
		fail('set either "timeout" (seconds) or "requestTimeoutMs", not both');
	}
	if (timeout !== undefined) {
		if (typeof timeout !== "number" || !(timeout >= 0.001) || timeout * 1000 > MAX_TIMEOUT_MS) {
			fail('field "timeout" must be a number of seconds between 0.001 and 3600');
		}
		return Math.round(timeout * 1000);
	}
	if (requestTimeoutMs !== undefined) {
		if (typeof requestTimeoutMs !== "number" || !Number.isInteger(requestTimeoutMs) || requestTimeoutMs <= 0) {
			fail('field "requestTimeoutMs" must be a positive integer');
		}
		if (requestTimeoutMs > MAX_TIMEOUT_MS) fail('field "requestTimeoutMs" must be at most 3600000 (one hour)');
		return requestTimeoutMs;
	}
	return undefined;
}
/** Tool-name globs (`*`, `?`): `includeTools`, `excludeTools`, a `confirm` list. */
const isPatternList = (value: unknown): value is readonly string[] =>
	Array.isArray(value) && value.every((item) => typeof item === "string" && item !== "");

/** `includeTools` / `excludeTools` (`schema/tool-filter.ts`), present only when given. */
function toolFilter(raw: Fields): ToolFilter {
	const given = (["includeTools", "excludeTools"] as const).filter((key) => raw[key] !== undefined);
	const bad = given.find((key) => !isPatternList(raw[key]));
	if (bad) fail(`field "${bad}" must be an array of non-empty strings (tool names; * and ? match any characters)`);
	return Object.fromEntries(given.map((key) => [key, raw[key]]));
}

function protocolMode(raw: Fields): ProtocolMode {
	const value = raw.protocolVersion;
	if (value === undefined) return "auto";
	if (typeof value !== "string" || !PROTOCOL_MODES.includes(value as ProtocolMode)) {
		fail(`field "protocolVersion" must be one of ${PROTOCOL_MODES.map((mode) => `"${mode}"`).join(", ")}`);
	}
	return value as ProtocolMode;
}
/** `confirm` (`schema/confirm.ts` says what each value asks for; only its type is imported, start-up stays small). */
function confirmSetting(raw: Fields): ConfirmSetting {
	const value = raw.confirm ?? "none";
	if (value === "none" || value === "writes" || value === "destructive" || value === "all") return value;
	if (isPatternList(value)) return value;
	return fail(
		'field "confirm" must be "none", "writes", "destructive", "all" or a list of tool name patterns (non-empty strings)',
	);
}

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

function authKind(raw: Fields): AuthKind | undefined {
	const { auth } = raw;
	if (auth === undefined) {
		if (raw.bearerTokenEnv !== undefined && raw.oauth !== undefined) {
			fail('fields "bearerTokenEnv" and "oauth" exclude each other; set "auth" to "bearer" or "oauth"');
		}
		if (raw.bearerTokenEnv !== undefined) return "bearer";
		if (raw.oauth !== undefined) return "oauth";
		return undefined;
	}
	if (isObject(auth)) fail('field "auth" must be "oauth" or "bearer" (Pi\'s auth.provider form is not supported)');
	if (auth !== "oauth" && auth !== "bearer") fail('field "auth" must be "oauth" or "bearer"');
	if (auth === "bearer" && raw.oauth !== undefined) fail('field "oauth" does not apply to auth "bearer"');
	if (auth === "oauth" && raw.bearerTokenEnv !== undefined) fail('field "bearerTokenEnv" does not apply to auth "oauth"');
	return auth;
}

function oauthSettings(raw: Fields): OAuthSettings {
	const value = raw.oauth ?? {};
	if (!isObject(value)) fail('field "oauth" must be an object');
	checkKeys(value, OAUTH_KEYS, "oauth.");
	const grant = value.grantType ?? "authorization_code";
	if (grant !== "authorization_code" && grant !== "client_credentials") {
		fail('field "oauth.grantType" must be "authorization_code" or "client_credentials"');
	}
	const settings: OAuthSettings = {
		grantType: grant,
		clientId: optionalString(value, "clientId", "oauth.clientId"),
		clientSecretEnv: envName(value, "clientSecretEnv", "oauth.clientSecretEnv"),
		issuer: optionalString(value, "issuer", "oauth.issuer"),
		redirectUri: optionalString(value, "redirectUri", "oauth.redirectUri"),
		clientMetadataUrl: optionalString(value, "clientMetadataUrl", "oauth.clientMetadataUrl"),
		scope: optionalString(value, "scope", "oauth.scope"),
	};
	if (grant === "client_credentials") {
		const missing = (["clientId", "clientSecretEnv", "issuer"] as const).find((key) => settings[key] === undefined);
		if (missing) fail(`field "oauth.${missing}" is required for grantType "client_credentials"`);
		if (settings.redirectUri !== undefined) fail('field "oauth.redirectUri" does not apply to "client_credentials"');
		if (settings.clientMetadataUrl !== undefined) fail('field "oauth.clientMetadataUrl" does not apply to "client_credentials"');
	}
	if (settings.clientId !== undefined && settings.clientMetadataUrl !== undefined) {
		fail('fields "oauth.clientId" and "oauth.clientMetadataUrl" exclude each other (the document\'s URL is the client ID)');
	}
	if (grant === "authorization_code" && settings.clientId !== undefined && settings.issuer === undefined) {
		fail('field "oauth.issuer" is required with a pre-registered "oauth.clientId"');
	}
	return settings;
}

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
