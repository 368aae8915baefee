/**
 * Where server entries come from and what they resolve to: the user file, the project file (only
 * when Pi trusts the project), and servers other extensions register. Reads files and the given
 * environment only; it never starts anything.
 */
import { existsSync, readFileSync, type Stats, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { escapeName } from "./output.ts";
import { type OAuthSettings, parseEntry, type RawServer, SERVER_NAME } from "./schema.ts";

export const MAX_SERVERS = 64;
export const MAX_FILE_BYTES = 1024 * 1024;
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

export type SourceKind = "user" | "project" | "extension";
export type ServerSource = Readonly<{ kind: SourceKind; path: string }>;

/** A fully resolved server: variables expanded, paths absolute, URLs checked. */
export type ServerConfig = Readonly<
	Omit<RawServer, "requestTimeoutMs"> & {
		name: string;
		source: ServerSource;
		requestTimeoutMs: number;
		/** Values that came from environment variables; redacted from every message. */
		secretValues: readonly string[];
	}
>;

/** One named entry: usable (`config`) or not (`error`, which names the file, server and field). */
export type ServerEntry = Readonly<{
	name: string;
	source: ServerSource;
	enabled: boolean;
	config?: ServerConfig;
	error?: string;
	ignoredKeys: readonly string[];
}>;

export type FileReport = Readonly<{
	scope: "user" | "project";
	path: string;
	state: "loaded" | "missing" | "untrusted" | "error";
	error?: string;
}>;

export type ConfigSnapshot = Readonly<{ servers: readonly ServerEntry[]; files: readonly FileReport[] }>;

export type ExtensionServer = Readonly<{ name: string; config: unknown; extensionPath: string }>;

export type LoadOptions = Readonly<{
	agentDir: string;
	cwd: string;
	/** `ctx.isProjectTrusted()`: the project file is read only when true. */
	trusted: boolean;
	env: Readonly<Record<string, string | undefined>>;
	/** Defaults to the OS home directory; used for `~/`. */
	home?: string;
	/** Servers registered with `pi.registerMcpServer()`; a file entry of the same name wins. */
	extensionServers?: readonly ExtensionServer[];
	/** Pi's config directory name inside a project (`CONFIG_DIR_NAME`). */
	configDirName?: string;
}>;

type Candidate =
	| Readonly<{ kind: "server"; name: string; source: ServerSource; raw: RawServer }>
	| Readonly<{ kind: "override"; name: string; source: ServerSource; enabled: boolean; ignoredKeys: readonly string[] }>
	| Readonly<{ kind: "invalid"; name: string; source: ServerSource; error: string }>;

type FileRead = Readonly<{ report: FileReport; candidates: readonly Candidate[] }>;

function describeSource(source: ServerSource): string {
	return source.kind === "extension" ? `registered by extension ${source.path}` : source.path;
}

function entryError(name: string, source: ServerSource, message: string): string {
	// The name as written in the file, escaped: an invalid one may hold controls, bidi or invisible characters.
	return `server "${escapeName(name)}" (${describeSource(source)}): ${message}`;
}

/** Line and column (1-based) of a character offset. */
function position(text: string, offset: number): string {
	const before = text.slice(0, Math.max(0, offset));
	const line = before.split("\n").length;
	const column = offset - before.lastIndexOf("\n");
	return `line ${line}, column ${column}`;
}

/**
 * Where and why a file is not valid JSON. V8's messages only sometimes carry a position, so the
 * file is parsed again by jsonc-parser (strict: no comments, no trailing commas), loaded only here.
 */
async function jsonErrorMessage(text: string): Promise<string> {
	const { parse, printParseErrorCode } = await import("jsonc-parser");
	const errors: import("jsonc-parser").ParseError[] = [];
	parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
	const first = errors[0];
	if (!first) return "invalid JSON";
	const reason = printParseErrorCode(first.error)
		.replace(/([a-z])([A-Z])/g, "$1 $2")
		.toLowerCase();
	return `invalid JSON at ${position(text, first.offset)}: ${reason}`;
}

/** A file system call's result, or the error it threw. */
function attempt<T>(read: () => T): T | NodeJS.ErrnoException {
	try {
		return read();
	} catch (error) {
		return error as NodeJS.ErrnoException;
	}
}

/**
 * Reads one config file. Synchronously on purpose: the files are small (1 MiB at most) and read once
 * per session start, inside Pi's awaited `session_start` handlers, where each asynchronous step would
 * wait its turn behind Pi's own start-up work (measured: 3–22 ms for the 3–4 steps, ~0.2 ms in sync).
 */
async function readFileReport(path: string, scope: "user" | "project"): Promise<FileRead> {
	const info: Stats | NodeJS.ErrnoException = attempt(() => statSync(path));
	if (info instanceof Error) {
		if (info.code === "ENOENT" || info.code === "ENOTDIR") return { report: { scope, path, state: "missing" }, candidates: [] };
		return {
			report: { scope, path, state: "error", error: `${path}: cannot read (${info.code ?? info.message})` },
			candidates: [],
		};
	}
	if (!info.isFile()) return { report: { scope, path, state: "error", error: `${path}: not a regular file` }, candidates: [] };
	if (info.size > MAX_FILE_BYTES) {
		return {
			report: {
				scope,
				path,
				state: "error",
				error: `${path}: file is ${info.size} bytes; the limit is ${MAX_FILE_BYTES} (1 MiB)`,
			},
			candidates: [],
		};
	}
	const text = attempt(() => readFileSync(path, "utf8"));
	if (text instanceof Error) {
		return {
			report: { scope, path, state: "error", error: `${path}: cannot read (${text.code ?? text.message})` },
			candidates: [],
		};
	}
	const parsed = parseJson(text);
	if (!parsed)
		return { report: { scope, path, state: "error", error: `${path}: ${await jsonErrorMessage(text)}` }, candidates: [] };
	const root = parsed.value;
	if (typeof root !== "object" || root === null || Array.isArray(root)) {
		return { report: { scope, path, state: "error", error: `${path}: the top level must be an object` }, candidates: [] };
	}
	const servers = (root as Record<string, unknown>).mcpServers;
	if (servers === undefined) return { report: { scope, path, state: "loaded" }, candidates: [] };
	if (typeof servers !== "object" || servers === null || Array.isArray(servers)) {
		return { report: { scope, path, state: "error", error: `${path}: "mcpServers" must be an object` }, candidates: [] };
	}
	const source: ServerSource = { kind: scope, path };
	const candidates = Object.entries(servers).map(([name, raw], index): Candidate => {
		if (!SERVER_NAME.test(name)) {
			return { kind: "invalid", name, source, error: "server names may use letters, digits, - and _ only (at most 64)" };
		}
		if (index >= MAX_SERVERS) return { kind: "invalid", name, source, error: `more than ${MAX_SERVERS} servers in this file` };
		const shape = parseEntry(raw, scope === "project");
		if (shape.kind === "invalid") return { kind: "invalid", name, source, error: shape.error };
		if (shape.kind === "override") return { kind: "override", name, source, ...shape.override };
		return { kind: "server", name, source, raw: shape.server };
	});
	return { report: { scope, path, state: "loaded" }, candidates };
}

function parseJson(text: string): { value: unknown } | undefined {
	try {
		return { value: JSON.parse(text) };
	} catch {
		return undefined;
	}
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

type Expander = Readonly<{ expand(value: string, field: string): string; secrets: () => readonly string[] }>;

class ResolveError extends Error {}

/** `${VAR}` expansion that fails closed on a missing variable and refuses shell-evaluated values. */
function expander(env: LoadOptions["env"]): Expander {
	const used: string[] = [];
	return {
		expand(value, field) {
			return value.replace(VARIABLE, (_match, variable: string) => {
				const found = env[variable];
				if (found === undefined) throw new ResolveError(`environment variable ${variable} is not set (used in "${field}")`);
				used.push(found);
				return found;
			});
		},
		secrets: () => used,
	};
}

function refuseShell(value: string, field: string): void {
	if (value.startsWith("!")) {
		throw new ResolveError(
			`field "${field}" starts with "!" (a shell command): pi-mcp never runs commands to obtain values; use \${VAR} with a variable set in the environment instead`,
		);
	}
}

function expandHome(value: string, home: string): string {
	return value === "~" ? home : value.startsWith("~/") ? join(home, value.slice(2)) : value;
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

function resolveOAuth(oauth: OAuthSettings | undefined): OAuthSettings | undefined {
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

function mapValues(values: Readonly<Record<string, string>>, fn: (value: string, key: string) => string): Record<string, string> {
	return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, fn(value, key)]));
}

/** Expands variables, resolves paths and checks URLs; throws `ResolveError` naming the field. */
function resolveServer(name: string, source: ServerSource, raw: RawServer, options: LoadOptions): ServerConfig {
	const home = options.home ?? homedir();
	const vars = expander(options.env);
	const env = mapValues(raw.env, (value, key) => {
		refuseShell(value, `env.${key}`);
		return vars.expand(value, `env.${key}`);
	});
	const headers = mapValues(raw.headers, (value, key) => {
		refuseShell(value, `headers.${key}`);
		return vars.expand(value, `headers.${key}`);
	});
	const args = raw.args.map((arg, index) => expandHome(vars.expand(arg, `args[${index}]`), home));
	const url = raw.url === undefined ? undefined : checkUrl(vars.expand(raw.url, "url"), "url").href;
	const cwd = raw.cwd === undefined ? undefined : resolve(options.cwd, expandHome(raw.cwd, home));
	const command = raw.command === undefined ? undefined : expandHome(raw.command, home);
	return {
		...raw,
		name,
		source,
		command,
		args,
		env,
		cwd,
		url,
		headers,
		oauth: resolveOAuth(raw.oauth),
		requestTimeoutMs: raw.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
		secretValues: vars.secrets(),
	};
}

function toEntry(candidate: Candidate, options: LoadOptions): ServerEntry {
	const { name, source } = candidate;
	if (candidate.kind === "invalid") {
		return { name, source, enabled: false, error: entryError(name, source, candidate.error), ignoredKeys: [] };
	}
	if (candidate.kind === "override") {
		return {
			name,
			source,
			enabled: false,
			error: entryError(name, source, "only sets enabled/disabled, but no user entry of that name exists"),
			ignoredKeys: candidate.ignoredKeys,
		};
	}
	try {
		const config = resolveServer(name, source, candidate.raw, options);
		return { name, source, enabled: config.enabled, config, ignoredKeys: config.ignoredKeys };
	} catch (error) {
		if (!(error instanceof ResolveError)) throw error;
		return {
			name,
			source,
			enabled: candidate.raw.enabled,
			error: entryError(name, source, error.message),
			ignoredKeys: candidate.raw.ignoredKeys,
		};
	}
}

/** Applies a project entry to the user entry of the same name. */
function merge(user: Candidate | undefined, project: Candidate): Candidate {
	if (project.kind !== "override" || user === undefined) return project;
	if (user.kind === "server") {
		return {
			...user,
			raw: { ...user.raw, enabled: project.enabled, ignoredKeys: [...user.raw.ignoredKeys, ...project.ignoredKeys] },
		};
	}
	return user;
}

function extensionCandidates(servers: readonly ExtensionServer[]): Candidate[] {
	return servers.map((server): Candidate => {
		const source: ServerSource = { kind: "extension", path: server.extensionPath };
		const shape = parseEntry(server.config, false);
		if (!SERVER_NAME.test(server.name)) {
			return { kind: "invalid", name: server.name, source, error: "server names may use letters, digits, - and _ only" };
		}
		if (shape.kind === "invalid") return { kind: "invalid", name: server.name, source, error: shape.error };
		if (shape.kind === "override") return { kind: "invalid", name: server.name, source, error: "entry has no command or url" };
		return { kind: "server", name: server.name, source, raw: shape.server };
	});
}

/** The user file path (`<agent dir>/mcp.json`) and the project file path (`<cwd>/.pi/mcp.json`). */
export function configPaths(options: Pick<LoadOptions, "agentDir" | "cwd" | "configDirName">): {
	user: string;
	project: string;
} {
	return {
		user: join(options.agentDir, "mcp.json"),
		project: join(options.cwd, options.configDirName ?? ".pi", "mcp.json"),
	};
}

/** Reads every source and resolves each entry; one bad entry never affects another. */
export async function loadConfig(options: LoadOptions): Promise<ConfigSnapshot> {
	if (!isAbsolute(options.cwd)) throw new Error(`cwd must be absolute: ${options.cwd}`);
	const paths = configPaths(options);
	const user = await readFileReport(paths.user, "user");
	const project: FileRead = options.trusted
		? await readFileReport(paths.project, "project")
		: {
				report: { scope: "project", path: paths.project, state: existsSync(paths.project) ? "untrusted" : "missing" },
				candidates: [],
			};

	const extension = new Map(extensionCandidates(options.extensionServers ?? []).map((candidate) => [candidate.name, candidate]));
	// File entries come first (they count first against the limit) and win over extension entries.
	const byName = new Map<string, Candidate>();
	for (const candidate of user.candidates) byName.set(candidate.name, candidate);
	for (const candidate of project.candidates) {
		byName.set(candidate.name, merge(byName.get(candidate.name) ?? extension.get(candidate.name), candidate));
	}
	for (const [name, candidate] of extension) if (!byName.has(name)) byName.set(name, candidate);

	const servers = [...byName.values()].map((candidate, index) =>
		index < MAX_SERVERS
			? toEntry(candidate, options)
			: {
					name: candidate.name,
					source: candidate.source,
					enabled: false,
					error: entryError(
						candidate.name,
						candidate.source,
						`more than ${MAX_SERVERS} servers are configured; this one is ignored`,
					),
					ignoredKeys: [],
				},
	);
	return { servers, files: [user.report, project.report] };
}
