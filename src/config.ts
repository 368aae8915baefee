/**
 * Where server entries come from and what they resolve to: the user file, the project file (only
 * when Pi trusts the project), and servers other extensions register. Reads files and the given
 * environment only; it never starts anything.
 */
import { existsSync, readFileSync, type Stats, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { type Duplicate, linesText, MAX_DEPTH, scanJson, type TooDeep } from "./config/scan.ts";
import { configuredSecrets } from "./config/secrets.ts";
import {
	checkSecretRefs,
	checkUrl,
	expander,
	fieldPath,
	jsonErrorMessage,
	ResolveError,
	refuseNul,
	refuseNulNames,
	refuseShell,
	resolveOAuth,
	topLevelProblems,
} from "./config/values.ts";
import { escapeName } from "./output/text.ts";
import {
	type ConfigSnapshot,
	type FileReport,
	isObject,
	parseEntry,
	parseJson,
	type RawServer,
	SERVER_NAME,
	type ServerConfig,
	type ServerEntry,
	type ServerSource,
} from "./schema.ts";

export const MAX_SERVERS = 64;
export const MAX_FILE_BYTES = 1024 * 1024;
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

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

/** An invalid entry's error (naming the server and file) and its problem alone (what tells two apart). */
function entryError(name: string, source: ServerSource, message: string): Readonly<{ error: string; problem: string }> {
	// Escaped as a whole: the name and the keys quoted in the message are as written in the file, and
	// may hold controls, bidi or invisible characters (our own text holds none).
	return { error: escapeName(`server "${name}" (${describeSource(source)}): ${message}`), problem: escapeName(message) };
}

/** A file system call's result, or the error it threw. */
function attempt<T>(read: () => T): T | NodeJS.ErrnoException {
	try {
		return read();
	} catch (error) {
		return error as NodeJS.ErrnoException;
	}
}

/** What a path is when it is not a regular file (also in edits' refusals, `safe-file.ts`). */
export function notAFile(info: Stats): string {
	if (info.isDirectory()) return "is a directory, not a file";
	if (info.isFIFO()) return "is a FIFO (named pipe), not a file";
	if (info.isSocket()) return "is a socket, not a file";
	return "is not a regular file";
}

/**
 * Why a server of a file is not used, from the keys the file gives twice and the values it nests
 * too deep: a repeated name wins over depth, depth over a repeated field.
 */
function scanErrors(duplicates: readonly Duplicate[], tooDeep: readonly TooDeep[]): ReadonlyMap<string, string> {
	const inFile = duplicates.filter(({ path }) => path[0] === "mcpServers");
	const names = inFile
		.filter(({ path }) => path.length === 1)
		.map(({ key, lines }): [string, string] => [
			key,
			`the name "${escapeName(key)}" is defined ${lines.length} times in this file (${linesText(lines)}); none of its definitions is used`,
		]);
	const fields = inFile
		.filter(({ path }) => path.length > 1)
		.map(({ path, key, lines }): [string, string] => [
			path[1] ?? "",
			`field "${fieldPath([...path.slice(2), key])}" is given ${lines.length} times (${linesText(lines)}); the entry is not used`,
		]);
	const deep = tooDeep.flatMap(({ entry, field }): [string, string][] => {
		if (entry === undefined) return [];
		const what = field === undefined ? "the entry" : `field "${field.length > 64 ? `${field.slice(0, 63)}…` : field}"`;
		return [[entry, `${what} nests deeper than ${MAX_DEPTH} levels; the entry is not used`]];
	});
	// Later pairs overwrite earlier ones in a Map: the first field of an entry, then depth, then any repeated name.
	return new Map([...fields.reverse(), ...deep.reverse(), ...names]);
}

/**
 * Reads one config file. Synchronously on purpose: the files are small (1 MiB at most) and read once
 * per session start, inside Pi's awaited `session_start` handlers, where each asynchronous step would
 * wait its turn behind Pi's own start-up work (measured: 3–22 ms for the 3–4 steps, ~0.2 ms in sync).
 */
async function readFileReport(path: string, scope: "user" | "project"): Promise<FileRead> {
	const failed = (problem: string): FileRead => ({
		report: { scope, path, state: "error", error: escapeName(`${path}: ${problem}`) },
		candidates: [],
	});
	const info: Stats | NodeJS.ErrnoException = attempt(() => statSync(path));
	if (info instanceof Error) {
		if (info.code === "ENOENT" || info.code === "ENOTDIR") return { report: { scope, path, state: "missing" }, candidates: [] };
		return failed(`cannot read (${info.code ?? info.message})`);
	}
	if (!info.isFile()) return failed(notAFile(info));
	if (info.size > MAX_FILE_BYTES) return failed(`file is ${info.size} bytes; the limit is ${MAX_FILE_BYTES} (1 MiB)`);
	const read = attempt(() => readFileSync(path, "utf8"));
	if (read instanceof Error) return failed(`cannot read (${read.code ?? read.message})`);
	// Windows editors may start a file with a BOM; Pi's own reader removes it too.
	// One linear pass first: it blanks out values nested too deep, which JSON.parse is slow on.
	const scan = scanJson(read.startsWith("\uFEFF") ? read.slice(1) : read);
	const root = parseJson(scan.text);
	if (root === undefined) return failed(await jsonErrorMessage(scan.text));
	if (!isObject(root)) return failed("the top level must be an object");
	const top = topLevelProblems(root);
	if (top.fatal) return failed(`no "mcpServers": ${top.messages.join("; ")}`);
	const notes = top.messages.length > 0 ? { warnings: top.messages.map((message) => escapeName(message)) } : {};
	const servers = root.mcpServers;
	if (servers === undefined) return { report: { scope, path, state: "loaded", ...notes }, candidates: [] };
	if (!isObject(servers)) return failed(`"mcpServers" must be an object`);
	const duplicates = scan.duplicates;
	const twice = duplicates.find((duplicate) => duplicate.path.length === 0 && duplicate.key === "mcpServers");
	if (twice) return failed(`"mcpServers" is given ${twice.lines.length} times (${linesText(twice.lines)}); the file is not used`);
	const count = Object.keys(servers).length;
	if (count > MAX_SERVERS) return failed(`${count} servers are defined; a file may define at most ${MAX_SERVERS}`);
	const source: ServerSource = { kind: scope, path };
	const repeated = scanErrors(duplicates, scan.tooDeep);
	const candidates = Object.entries(servers).map(([name, raw]): Candidate => {
		if (!SERVER_NAME.test(name)) {
			return { kind: "invalid", name, source, error: "server names may use letters, digits, - and _ only (at most 64)" };
		}
		const duplicate = repeated.get(name);
		if (duplicate !== undefined) return { kind: "invalid", name, source, error: duplicate };
		const shape = parseEntry(raw, scope === "project");
		if (shape.kind === "invalid") return { kind: "invalid", name, source, error: shape.error };
		if (shape.kind === "override") return { kind: "override", name, source, ...shape.override };
		return { kind: "server", name, source, raw: shape.server };
	});
	return { report: { scope, path, state: "loaded", ...notes }, candidates };
}

function expandHome(value: string, home: string): string {
	return value === "~" ? home : value.startsWith("~/") ? join(home, value.slice(2)) : value;
}

function mapValues(values: Readonly<Record<string, string>>, fn: (value: string, key: string) => string): Record<string, string> {
	return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, fn(value, key)]));
}

/** Expands variables, resolves paths and checks URLs; throws `ResolveError` naming the field. */
function resolveServer(name: string, source: ServerSource, raw: RawServer, options: LoadOptions): ServerConfig {
	const home = options.home ?? homedir();
	const vars = expander(options.env);
	/** A string field as given: no `!` command (where Pi would run one), no NUL byte, `${VAR}` expanded. */
	const value = (text: string, field: string, shell = true): string => {
		if (shell) refuseShell(text, field);
		refuseNul(text, field);
		checkSecretRefs(text, field, /^(?:env|headers)\./.test(field));
		return vars.expand(text, field);
	};
	refuseNulNames(raw.env, "env");
	refuseNulNames(raw.headers, "headers");
	const command = raw.command === undefined ? undefined : expandHome(value(raw.command, "command"), home);
	const args = raw.args.map((arg, index) => expandHome(value(arg, `args[${index}]`, false), home));
	const env = mapValues(raw.env, (text, key) => value(text, `env.${key}`));
	const cwd = raw.cwd === undefined ? undefined : resolve(options.cwd, expandHome(value(raw.cwd, "cwd"), home));
	const headers = mapValues(raw.headers, (text, key) => value(text, `headers.${key}`));
	const expandedUrl = raw.url === undefined ? undefined : value(raw.url, "url", false);
	// Every unset variable is named at once, before a URL that holds one is judged.
	vars.checkSet();
	// A variable's value is not read as a reference: it would take a stored secret the file never named.
	const injected = vars.uses().find((use) => use.value.includes("${secret:"));
	if (injected)
		throw new ResolveError(`environment variable ${injected.variable} (used in "${injected.field}") holds "\${secret:"`);
	const url = expandedUrl === undefined ? undefined : checkUrl(expandedUrl, "url").href;
	const resolved = {
		name,
		source,
		args,
		env,
		cwd,
		headers,
		requestTimeoutMs: raw.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
		// One rule for what counts as a secret (`config/secrets.ts`).
		secretValues: configuredSecrets({ uses: vars.uses(), raw, env, args, url }),
	};
	if (raw.transport === "stdio" && command !== undefined) return { ...raw, ...resolved, command };
	if (raw.transport === "http" && url !== undefined) return { ...raw, ...resolved, url, oauth: resolveOAuth(raw.oauth) };
	throw new Error("unreachable: a shape-checked server has its command or URL");
}

function toEntry(candidate: Candidate, options: LoadOptions): ServerEntry {
	const { name, source } = candidate;
	if (candidate.kind === "invalid") {
		return { name, source, enabled: false, ...entryError(name, source, candidate.error), ignoredKeys: [] };
	}
	if (candidate.kind === "override") {
		return {
			name,
			source,
			enabled: false,
			...entryError(name, source, "only sets enabled/disabled, but no user entry of that name exists"),
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
			...entryError(name, source, error.message),
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

/** Registered servers; like a file, extensions together may add at most `MAX_SERVERS`. */
function extensionCandidates(servers: readonly ExtensionServer[]): Candidate[] {
	return servers.map((server, index): Candidate => {
		const source: ServerSource = { kind: "extension", path: server.extensionPath };
		if (index >= MAX_SERVERS) {
			const error = `more than ${MAX_SERVERS} servers are registered by extensions; this one is ignored`;
			return { kind: "invalid", name: server.name, source, error };
		}
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
	// File entries come first and win over extension entries. Each source is bounded on its own
	// (64 servers), so a crowded user file never pushes out the project's servers.
	const byName = new Map<string, Candidate>();
	for (const candidate of user.candidates) byName.set(candidate.name, candidate);
	for (const candidate of project.candidates) {
		byName.set(candidate.name, merge(byName.get(candidate.name) ?? extension.get(candidate.name), candidate));
	}
	for (const [name, candidate] of extension) if (!byName.has(name)) byName.set(name, candidate);

	const servers = [...byName.values()].map((candidate) => toEntry(candidate, options));
	return { servers, files: [user.report, project.report] };
}

/** `path: problem` for each file that exists but could not be used. */
export function fileProblems(snapshot: ConfigSnapshot): readonly string[] {
	return snapshot.files.flatMap((file) => (file.state === "error" && file.error ? [file.error] : []));
}

/**
 * The message for a server name no source defines, or undefined when one does. It says when a file
 * could not be read: the server may be in it.
 */
export function unknownServer(snapshot: ConfigSnapshot, name: string): string | undefined {
	if (snapshot.servers.some((entry) => entry.name === name)) return undefined;
	const names = snapshot.servers.map((entry) => escapeName(entry.name));
	const configured = names.length > 0 ? names.join(", ") : "none (add servers to mcp.json)";
	const problems = fileProblems(snapshot);
	const message = `unknown MCP server "${escapeName(name)}"; configured: ${configured}`;
	if (problems.length === 0) return message;
	const files =
		problems.length === 1 ? "A configuration file could not be read, so its" : "Configuration files could not be read, so their";
	return `${message}. ${files} servers are missing: ${problems.join("; ")}`;
}

/**
 * The resolved entry of a server that signs in with OAuth, or why it cannot (unknown, invalid, or
 * not an OAuth server): one rule for `pi-mcp login/logout`, `/mcp login/logout` and the manager.
 */
export function oauthConfig(snapshot: ConfigSnapshot, name: string): ServerConfig | string {
	const unknown = unknownServer(snapshot, name);
	if (unknown !== undefined) return unknown;
	const entry = snapshot.servers.find((server) => server.name === name);
	if (!entry?.config) return entry?.error ?? `server "${escapeName(name)}" has no usable configuration`;
	if (entry.config.auth !== "oauth") return `MCP server "${escapeName(name)}" does not use OAuth sign-in`;
	return entry.config;
}
