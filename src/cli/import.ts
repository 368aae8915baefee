/**
 * `pi-mcp import <client> [file] [name…]`: copies server entries from another client's
 * configuration into `mcp.json`, one `addServer` each (so each is checked as loading checks it).
 * Only the file the user names, or the client's documented default path, is read, and only when
 * asked: nothing discovers other clients' files on its own. It must be a regular file of at most
 * 1 MiB (checked on the opened file: a FIFO neither hangs nor is read). A project's own file
 * (Claude Code's `.mcp.json`, VS Code's `.vscode/mcp.json`) goes to the project file unless
 * `--scope user` says otherwise: in the user file its servers would run in every project.
 */
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { addServer, type Change, EditError, maskedEntry, runsText } from "../config/edit.ts";
import { FileRefused, readBounded } from "../config/safe-file.ts";
import { jsonErrorMessage } from "../config/values.ts";
import { MAX_FILE_BYTES } from "../config.ts";
import { escapeName, sanitize } from "../output/text.ts";
import { isObject } from "../schema.ts";
import { type Flags, type Scope, UsageError } from "./args.ts";
import { placeOf, RELOAD_NOTE, report, waitingOf, warnBeforeWriting } from "./edit.ts";
import { HELP } from "./help.ts";
import { type CliIo, EXIT } from "./io.ts";
import { jsonLine } from "./json.ts";

type Fields = Record<string, unknown>;
type Client = Readonly<{
	/** The documented default file. */
	path: (io: CliIo) => string;
	/** The servers of a parsed file, by name. */
	servers: (root: Fields) => unknown;
	/** Turns one of its values into ours (`${env:X}` → `${X}`); undefined when it cannot be imported. */
	value?: (text: string, file: string) => string | undefined;
	toml?: boolean;
	/** A project's own file: imported into the project file by default. */
	project?: boolean;
	/** Its names for our fields, and the fields it has beyond `SAME`. */
	fields?: (raw: Fields) => Fields;
	keep?: readonly string[];
}>;

const home = (io: CliIo) => io.env.HOME ?? homedir();

function claudeDesktopPath(io: CliIo): string {
	if (process.platform === "darwin")
		return join(home(io), "Library", "Application Support", "Claude", "claude_desktop_config.json");
	if (process.platform === "win32") return join(io.env.APPDATA ?? home(io), "Claude", "claude_desktop_config.json");
	return join(io.env.XDG_CONFIG_HOME ?? join(home(io), ".config"), "Claude", "claude_desktop_config.json");
}

/** `${env:NAME}` (Cursor, VS Code) is our `${NAME}`; VS Code's `${workspaceFolder}` is the folder holding `.vscode`. */
const editorValue = (text: string, file: string): string | undefined => {
	const converted = text
		.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => `\${${name}}`)
		.replace(/\$\{workspaceFolder\}/g, dirname(dirname(file)));
	return /\$\{(?![A-Za-z_][A-Za-z0-9_]*\})/.test(converted) ? undefined : converted;
};

/** Claude Code's `${VAR:-default}` has no equivalent here. */
const plainValue = (text: string): string | undefined => (/\$\{(?![A-Za-z_][A-Za-z0-9_]*\})/.test(text) ? undefined : text);

export const CLIENTS: Readonly<Record<string, Client>> = {
	"claude-desktop": { path: claudeDesktopPath, servers: (root) => root.mcpServers, value: plainValue },
	"claude-code": {
		path: (io) => join(io.cwd, ".mcp.json"),
		servers: (root) => root.mcpServers,
		value: plainValue,
		project: true,
	},
	cursor: { path: (io) => join(home(io), ".cursor", "mcp.json"), servers: (root) => root.mcpServers, value: editorValue },
	vscode: {
		path: (io) => join(io.cwd, ".vscode", "mcp.json"),
		servers: (root) => root.servers,
		value: editorValue,
		project: true,
	},
	codex: {
		path: (io) => join(io.env.CODEX_HOME ?? join(home(io), ".codex"), "config.toml"),
		servers: (root) => root.mcp_servers,
		value: plainValue,
		toml: true,
		fields: (raw) => codexFields(raw),
		keep: ["auth", "bearerTokenEnv", "includeTools", "excludeTools"],
	},
	gemini: {
		path: (io) => join(home(io), ".gemini", "settings.json"),
		servers: (root) => root.mcpServers,
		value: plainValue,
		fields: (raw) => geminiFields(raw),
		keep: ["includeTools", "excludeTools", "requestTimeoutMs"],
	},
};

/** Keys that carry over as they are (after value conversion). */
const SAME = ["command", "args", "env", "cwd", "url", "headers", "description", "enabled", "disabled", "timeout"];

type Converted = Readonly<{ entry: Fields; dropped: readonly string[] }> | Readonly<{ skip: string }>;

/** Codex's names for our fields. */
function codexFields(raw: Fields): Fields {
	const headers = {
		...(isObject(raw.http_headers) ? raw.http_headers : {}),
		...(isObject(raw.env_http_headers)
			? Object.fromEntries(Object.entries(raw.env_http_headers).map(([header, variable]) => [header, `\${${String(variable)}}`]))
			: {}),
	};
	const { http_headers: _h, env_http_headers: _e, bearer_token_env_var: bearer, tool_timeout_sec: timeout, ...rest } = raw;
	const { enabled_tools: include, disabled_tools: exclude, ...others } = rest;
	return {
		...others,
		...(include !== undefined ? { includeTools: include } : {}),
		...(exclude !== undefined ? { excludeTools: exclude } : {}),
		...(Object.keys(headers).length > 0 ? { headers } : {}),
		...(typeof bearer === "string" ? { auth: "bearer", bearerTokenEnv: bearer } : {}),
		...(typeof timeout === "number" ? { timeout } : {}),
	};
}

/** Gemini CLI's names: `httpUrl` is Streamable HTTP (its `url` is SSE), `timeout` is in milliseconds. */
function geminiFields(raw: Fields): Fields {
	const { httpUrl, timeout, ...rest } = raw;
	const sse = httpUrl === undefined && rest.url !== undefined && rest.type === undefined ? { type: "sse" } : {};
	return {
		...rest,
		...sse,
		...(httpUrl !== undefined ? { url: httpUrl, type: "http" } : {}),
		...(timeout !== undefined ? { requestTimeoutMs: timeout } : {}),
	};
}

/** One entry of another client in our shape, or why it is skipped. */
export function convert(client: Client, rawEntry: unknown, file: string): Converted {
	if (!isObject(rawEntry)) return { skip: "the entry is not an object" };
	const raw = client.fields ? client.fields(rawEntry) : rawEntry;
	const type = raw.type;
	if (type === "sse") return { skip: 'it uses the legacy SSE transport ("type": "sse"), which pi-mcp does not support' };
	const keep = [...SAME, ...(client.keep ?? [])];
	const dropped = Object.keys(raw).filter((key) => !keep.includes(key) && key !== "type");
	// A value is never quoted (it may be a secret): the message names its field.
	const fix = (value: unknown, field: string): unknown => {
		if (typeof value === "string") {
			const converted = client.value ? client.value(value, file) : value;
			if (converted === undefined)
				throw new EditError(`field "${escapeName(field)}" uses a variable form pi-mcp cannot read`, "invalid-entry");
			return converted;
		}
		if (Array.isArray(value)) return value.map((item, index) => fix(item, `${field}[${index}]`));
		if (isObject(value))
			return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fix(item, `${field}.${key}`)]));
		return value;
	};
	try {
		const entry = Object.fromEntries(
			Object.entries(raw)
				.filter(([key]) => keep.includes(key))
				.map(([key, value]) => [key, fix(value, key)]),
		);
		const typed = type === "http" || type === "streamable-http" ? { ...entry, type: "http" } : entry;
		return { entry: typed, dropped };
	} catch (error) {
		return { skip: (error as Error).message };
	}
}

async function parseFile(client: Client, file: string, clientName: string): Promise<Fields> {
	const text = await readBounded(file, MAX_FILE_BYTES).catch((error: unknown) => {
		throw new EditError(error instanceof FileRefused ? error.message : `cannot read ${file}`, "invalid-file");
	});
	if (text === undefined)
		throw new EditError(`no file at ${file}; name the file: pi-mcp import ${clientName} <file>`, "invalid-file");
	const body = text.replace(/^\uFEFF/, "");
	// A parser's message may quote the file's text (a value, a secret): only the position and the reason are shown.
	const parsed = await (client.toml
		? import("smol-toml").then((toml) => toml.parse(body))
		: Promise.resolve(body).then(JSON.parse)
	).then(
		(root: unknown) => ({ root }),
		async (error: { message?: string; line?: number; column?: number }) => {
			if (!client.toml) return { problem: await jsonErrorMessage(body) };
			const reason = (error.message ?? "").split("\n")[0]?.replace(/^Invalid TOML document: /, "") ?? "";
			return { problem: `invalid TOML${error.line ? ` at line ${error.line}, column ${error.column}` : ""}: ${reason}` };
		},
	);
	if ("problem" in parsed) throw new EditError(`${file}: ${parsed.problem}`, "invalid-file");
	if (!isObject(parsed.root)) throw new EditError(`${file}: the top level is not an object`, "invalid-file");
	return parsed.root;
}

type Outcome = Readonly<{ name: string; runs?: string; change?: Change; hints?: readonly string[]; skipped?: string }>;

/** Adds each wanted entry in turn (Ctrl+C stops between and within them); a refused one is skipped. */
async function importEntries(
	io: CliIo,
	flags: Flags,
	signal: AbortSignal,
	source: Readonly<{ client: Client; file: string; scope: Scope; wanted: readonly string[] }>,
	servers: Readonly<Record<string, unknown>>,
): Promise<readonly Outcome[]> {
	const outcomes: Outcome[] = [];
	for (const [name, raw] of Object.entries(servers)) {
		if (source.wanted.length > 0 && !source.wanted.includes(name)) continue;
		signal.throwIfAborted();
		const converted = convert(source.client, raw, source.file);
		if ("skip" in converted) {
			outcomes.push({ name, skipped: converted.skip });
			continue;
		}
		const runs = runsText(converted.entry);
		if (!flags.json) io.err(`pi-mcp: "${escapeName(name)}" runs: ${escapeName(runs)}\n`);
		const hints = warnBeforeWriting(io, flags, converted.entry, source.scope);
		try {
			const change = await addServer(placeOf(io), source.scope, name, converted.entry, {
				force: flags.force,
				...waitingOf(io, signal),
			});
			const dropped =
				converted.dropped.length > 0
					? [`not imported: ${converted.dropped.map((key) => `"${escapeName(key)}"`).join(", ")} (no equivalent here)`]
					: [];
			outcomes.push({ name, runs, hints, change: { ...change, warnings: [...dropped, ...change.warnings] } });
		} catch (error) {
			if (!(error instanceof EditError)) throw error;
			outcomes.push({ name, runs, skipped: error.message });
		}
	}
	return outcomes;
}

export async function runImport(io: CliIo, flags: Flags, args: readonly string[], signal: AbortSignal): Promise<number> {
	const [clientName, ...rest] = args;
	const client = clientName === undefined ? undefined : CLIENTS[clientName];
	if (!client) {
		const known = Object.keys(CLIENTS).join(", ");
		throw new UsageError(
			`pi-mcp import: name a client: ${known}${clientName ? ` (not "${escapeName(clientName)}")` : ""}`,
			"import",
			HELP.import,
		);
	}
	const [first, ...others] = rest;
	const named = first !== undefined && (/[/\\]/.test(first) || /\.(json|toml)$/i.test(first));
	const file = named ? (isAbsolute(first) ? first : resolve(io.cwd, first)) : client.path(io);
	const wanted = named ? others : rest;
	const servers = client.servers(await parseFile(client, file, clientName ?? ""));
	if (!isObject(servers))
		throw new EditError(
			`${file} defines no servers (no ${client.toml ? "[mcp_servers.<name>]" : "server object"})`,
			"invalid-file",
		);
	const missing = wanted.filter((name) => !(name in servers));
	if (missing.length > 0)
		throw new EditError(
			`${file} has no server ${missing.map((name) => `"${escapeName(name)}"`).join(", ")}; it has: ${Object.keys(servers).map(escapeName).join(", ")}`,
			"unknown",
		);
	const scope = flags.scope ?? (client.project ? "project" : "user");
	const outcomes = await importEntries(io, flags, signal, { client, file, scope, wanted }, servers);
	const done = outcomes.filter((outcome) => outcome.change !== undefined);
	const skipped = outcomes.flatMap(({ name, runs, skipped }) => (skipped === undefined ? [] : [{ name, runs, skipped }]));
	if (flags.json) {
		const imported = done.map(({ name, runs, change, hints }) => ({
			name,
			action: change?.action,
			scope: change?.scope,
			path: change?.path,
			runs,
			entry: maskedEntry(change?.after),
			warnings: [...(hints ?? []), ...(change?.warnings ?? [])],
		}));
		io.out(jsonLine({ from: file, scope, imported, skipped }, 2));
	} else {
		for (const { change } of done) if (change) report(io, { ...flags, json: false }, change);
		for (const outcome of skipped) io.err(`pi-mcp: skipped "${escapeName(outcome.name)}": ${escapeName(outcome.skipped)}\n`);
		io.out(`Imported ${done.length} of ${outcomes.length} server${outcomes.length === 1 ? "" : "s"} from ${file}.\n`);
	}
	if (done.length > 0 && flags.json) io.err(`${RELOAD_NOTE}\n`);
	const moved = flags.moveSecrets ? await moveImported(io, flags, done, signal) : true;
	// 2 means nothing was written; some written and some skipped (or secrets not moved) is a partial failure.
	if (skipped.length === 0) return moved ? EXIT.ok : EXIT.failed;
	return done.length === 0 ? EXIT.usage : EXIT.failed;
}

/** `--move-secrets`: each imported entry's literal secrets into the keyring; a failure is said, the entry stays as imported. */
async function moveImported(io: CliIo, flags: Flags, done: readonly Outcome[], signal: AbortSignal): Promise<boolean> {
	const { moveSecrets, movedText } = await import("./secret.ts");
	const failed: string[] = [];
	for (const { name, change } of done) {
		try {
			const moved = await moveSecrets(io, { ...flags, scope: change?.scope }, name, signal);
			if (moved.length > 0) io.err(`pi-mcp: ${movedText(name, moved)}\n`);
		} catch (error) {
			failed.push(name);
			io.err(
				`pi-mcp: the secrets of "${escapeName(name)}" were not moved (its entry keeps them as imported): ${sanitize((error as Error).message)}\n`,
			);
		}
	}
	return failed.length === 0;
}
