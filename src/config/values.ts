/**
 * Checks on configuration text and values: where a file is not JSON (keys given twice and nesting
 * are `scan.ts`'s), and the value rules applied when an entry is resolved (`${VAR}`, `!` commands, NUL bytes, URLs).
 * Pure: no file system, no environment except the one passed in.
 */
import { closeMatches, type OAuthSettings } from "../schema.ts";

/** A value rule broken while resolving an entry; the message names the field. */
export class ResolveError extends Error {}

/** 1-based line of a character offset. */
export function lineOf(text: string, offset: number): number {
	return text.slice(0, Math.max(0, offset)).split("\n").length;
}

/** Line and column (1-based) of a character offset. */
function position(text: string, offset: number): string {
	const before = text.slice(0, Math.max(0, offset));
	return `line ${lineOf(text, offset)}, column ${offset - before.lastIndexOf("\n")}`;
}

/**
 * Where and why a file is not valid JSON. V8's messages only sometimes carry a position, so the
 * file is parsed again by jsonc-parser (strict: no comments, no trailing commas), loaded only here.
 * Comments are refused because Pi's own `mcp.json` reader (`JSON.parse` after removing a BOM)
 * refuses them: a file pi-mcp accepts must also work with Pi's built-in MCP.
 */
export async function jsonErrorMessage(text: string): Promise<string> {
	const { parse, printParseErrorCode } = await import("jsonc-parser");
	const errors: import("jsonc-parser").ParseError[] = [];
	try {
		parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
	} catch {
		// jsonc-parser recurses per level; `scanJson` already blanked what nests too deep, so this is a last resort.
		return "invalid JSON";
	}
	const first = errors[0];
	if (!first) return "invalid JSON";
	const reason =
		printParseErrorCode(first.error) === "InvalidCommentToken"
			? "comments are not allowed (mcp.json is strict JSON, as for Pi's own reader)"
			: printParseErrorCode(first.error)
					.replace(/([a-z])([A-Z])/g, "$1 $2")
					.toLowerCase();
	return `invalid JSON at ${position(text, first.offset)}: ${reason}`;
}

/** `env.K`, `args[1]`: a path inside an entry as the field names in messages. */
export function fieldPath(path: readonly string[]): string {
	return path.reduce((joined, part) => (part.startsWith("[") || joined === "" ? `${joined}${part}` : `${joined}.${part}`), "");
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** One `${VAR}` expanded: its name, its value and the field that used it. */
export type VariableUse = Readonly<{ variable: string; value: string; field: string }>;

export type Expander = Readonly<{
	expand(value: string, field: string): string;
	uses: () => readonly VariableUse[];
	/** Throws naming every unset variable met so far (each with the field using it). */
	checkSet: () => void;
}>;

/** `${VAR}` expansion that fails closed on a missing variable, naming every one that is missing. */
export function expander(env: Readonly<Record<string, string | undefined>>): Expander {
	const used: VariableUse[] = [];
	const missing: { variable: string; field: string }[] = [];
	return {
		expand(value, field) {
			return value.replace(VARIABLE, (match, variable: string) => {
				const found = env[variable];
				if (found === undefined) {
					missing.push({ variable, field });
					return match;
				}
				used.push({ variable, value: found, field });
				return found;
			});
		},
		uses: () => used,
		checkSet() {
			const [first] = missing;
			if (first === undefined) return;
			if (missing.length === 1) {
				throw new ResolveError(`environment variable ${first.variable} is not set (used in "${first.field}")`);
			}
			const each = missing.map(({ variable, field }) => `${variable} (used in "${field}")`);
			throw new ResolveError(`environment variables ${each.join(", ")} are not set`);
		},
	};
}

/** Top-level keys Pi's mcp.json knows. */
const TOP_KEYS = ["mcpServers", "autoEnableCodemode", "$schema"];

/** Top-level keys of other clients' formats, and what to do. */
const FOREIGN_TOP: Readonly<Record<string, string>> = {
	servers: 'VS Code\'s format ("servers"); pi-mcp reads "mcpServers" (pi-mcp import vscode <file> converts it)',
	mcp_servers: 'Codex\'s key ("mcp_servers"); pi-mcp reads "mcpServers" (pi-mcp import codex converts ~/.codex/config.toml)',
	mcp: 'OpenCode\'s format ("mcp"); pi-mcp reads "mcpServers"',
	context_servers: 'Zed\'s format ("context_servers"); pi-mcp reads "mcpServers"',
};

/**
 * Top-level keys that are not Pi's: each named, with a hint for another client's format or a
 * close spelling of "mcpServers". `fatal` when the file has no "mcpServers" but such a key: its
 * servers would otherwise be silently missing.
 */
export function topLevelProblems(
	root: Readonly<Record<string, unknown>>,
): Readonly<{ messages: readonly string[]; fatal: boolean }> {
	const unknown = Object.keys(root).filter((key) => !TOP_KEYS.includes(key));
	const messages = unknown.map((key) => {
		const foreign = FOREIGN_TOP[key];
		if (foreign) return `top-level key "${key}" is ${foreign}`;
		const close = closeMatches(key, TOP_KEYS);
		return `top-level key "${key}" is not used${close.length > 0 ? ` (did you mean "${close[0]}"?)` : ""}`;
	});
	const fatal =
		root.mcpServers === undefined && messages.some((message) => /did you mean "mcpServers"|pi-mcp reads/.test(message));
	return { messages, fatal };
}

/** Pi's built-in MCP runs a `!command` to obtain a value; pi-mcp never runs one, and refuses the value. */
export function refuseShell(value: string, field: string): void {
	if (value.startsWith("!")) {
		throw new ResolveError(
			`field "${field}" starts with "!" (a shell command): pi-mcp never runs commands to obtain values; use \${VAR} with a variable set in the environment instead`,
		);
	}
}

/** A NUL byte cannot reach a process argument, a path or a header; say so at session start. */
export function refuseNul(value: string, field: string): void {
	if (value.includes("\u0000")) throw new ResolveError(`field "${field}" contains a NUL byte`);
}

/** Checks the names of an object of strings (`env`, `headers`) for NUL bytes. */
export function refuseNulNames(values: Readonly<Record<string, string>>, field: string): void {
	if (Object.keys(values).some((key) => key.includes("\u0000"))) {
		throw new ResolveError(`field "${field}" has a name containing a NUL byte`);
	}
}

export function isLoopbackHost(hostname: string): boolean {
	return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** `https:` anywhere, `http:` only to loopback; never credentials in the URL. */
export function checkUrl(value: string, field: string): URL {
	const url = URL.canParse(value) ? new URL(value) : undefined;
	if (!url) throw new ResolveError(`field "${field}" is not a valid URL`);
	if (url.username !== "" || url.password !== "") {
		throw new ResolveError(`field "${field}" must not contain credentials (user:password@); use headers or auth instead`);
	}
	if (url.protocol === "https:") return url;
	if (url.protocol === "http:") {
		if (isLoopbackHost(url.hostname)) return url;
		throw new ResolveError(
			`field "${field}" uses http: to a non-loopback host; use https: (http: is allowed only for 127.0.0.1, [::1] and localhost)`,
		);
	}
	throw new ResolveError(`field "${field}" must be an https: URL (or http: to loopback)`);
}

export function resolveOAuth(oauth: OAuthSettings | undefined): OAuthSettings | undefined {
	if (!oauth) return undefined;
	if (oauth.issuer !== undefined) checkUrl(oauth.issuer, "oauth.issuer");
	if (oauth.clientMetadataUrl !== undefined) {
		const url = checkUrl(oauth.clientMetadataUrl, "oauth.clientMetadataUrl");
		if (url.protocol !== "https:" || url.pathname === "/") {
			throw new ResolveError('field "oauth.clientMetadataUrl" must be an https: URL with a path (a client ID metadata document)');
		}
	}
	if (oauth.redirectUri !== undefined) {
		const url = checkUrl(oauth.redirectUri, "oauth.redirectUri");
		if (url.protocol !== "http:" || !isLoopbackHost(url.hostname)) {
			throw new ResolveError('field "oauth.redirectUri" must be an http: loopback URL (e.g. http://127.0.0.1:8976/callback)');
		}
	}
	return oauth;
}

// ---------------------------------------------------------------------------------------------
// `${secret:NAME}`: a value kept in the OS keyring for one server (`auth/stored.ts`), written in an
// entry's `env` or `headers` values, whole or in part (`"Bearer ${secret:API_KEY}"`). The reference
// stays in the resolved entry as written; the value is put in its place only when the server
// connects, and never elsewhere (a command, an argument or a URL would show it in `ps` or a log).

const REFERENCE = /\$\{secret:([^}]*)\}/g;

/** A secret's name: like an environment variable's. */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Refuses a reference where none may be (`allowed` false), and a malformed one anywhere. */
export function checkSecretRefs(text: string, field: string, allowed: boolean): void {
	if (!text.includes("${secret:")) return;
	if (!allowed) {
		throw new ResolveError(
			`field "${field}" uses \${secret:…}: stored secrets are given only in "env" and "headers" values (where no command line or log shows them)`,
		);
	}
	for (const [, name] of text.matchAll(REFERENCE)) {
		if (!SECRET_NAME.test(name ?? "")) {
			throw new ResolveError(
				`field "${field}" has \${secret:${(name ?? "").slice(0, 40)}}: a secret's name uses letters, digits and _ (not starting with a digit)`,
			);
		}
	}
}

/** The secret names a resolved entry's `env` and `headers` reference, each once, in order. */
export function secretNames(
	config: Readonly<{ env?: Readonly<Record<string, string>>; headers?: Readonly<Record<string, string>> }>,
): readonly string[] {
	const values = [...Object.values(config.env ?? {}), ...Object.values(config.headers ?? {})];
	const names = values.flatMap((value) =>
		value.includes("${secret:") ? [...value.matchAll(REFERENCE)].map((m) => m[1] ?? "") : [],
	);
	return [...new Set(names)];
}

/** `text` with each reference replaced by its value (every name must be in `values`). */
export function fillSecretRefs(text: string, values: ReadonlyMap<string, string>): string {
	return text.includes("${secret:") ? text.replace(REFERENCE, (match, name: string) => values.get(name) ?? match) : text;
}

/** Whether a value is made only of references (`${VAR}`, `${secret:NAME}`) and an auth scheme word. */
export function isReference(value: string): boolean {
	const literal = value.replace(/\$\{(?:secret:)?[A-Za-z_][A-Za-z0-9_]*\}/g, "").trim();
	return value.includes("${") && (literal === "" || /^(bearer|basic|token)$/i.test(literal));
}
