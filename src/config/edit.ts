/**
 * Edits `mcp.json` in place: add, replace, remove, enable and disable one entry. jsonc-parser's
 * `modify` changes only the entry's own text, so the order of keys, the indentation and everything
 * else in the file stay as the user wrote them; the result must stay strict JSON (Pi reads the file
 * with `JSON.parse`) and pass the same checks as loading (`loadConfig`), or nothing is written.
 * Shared by `pi-mcp add/remove/enable/disable/import` and the `/mcp` manager.
 */
import { existsSync, statSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { configPaths, type LoadOptions, loadConfig, MAX_FILE_BYTES } from "../config.ts";
import { escapeName } from "../output/text.ts";
import { type ConfigSnapshot, closeMatches, isObject, SERVER_NAME } from "../schema.ts";
import { MAX_DEPTH, scanJson } from "./scan.ts";
import { jsonErrorMessage } from "./values.ts";

export type Scope = "user" | "project";

/** Where the files are and what loading would see: the same options as `loadConfig` (trust is implied). */
export type Place = Omit<LoadOptions, "trusted" | "extensionServers">;

/** Why an edit was refused; `code` is stable for scripts (`pi-mcp --json` prints it). */
export class EditError extends Error {
	constructor(
		message: string,
		readonly code: "exists" | "unknown" | "ambiguous" | "extension" | "invalid-file" | "invalid-entry" | "invalid-name",
	) {
		super(message);
	}
}

/** One edit made: the file, the entry before and after (undefined when absent), and what to tell the user. */
export type Change = Readonly<{
	path: string;
	scope: Scope;
	name: string;
	action: "added" | "replaced" | "removed" | "enabled" | "disabled" | "unchanged";
	before?: unknown;
	after?: unknown;
	createdFile: boolean;
	warnings: readonly string[];
}>;

export type FileText = Readonly<{ path: string; scope: Scope; text?: string; servers: Readonly<Record<string, unknown>> }>;

export function pathOf(place: Place, scope: Scope): string {
	return configPaths(place)[scope];
}

/** Reads a file for editing: missing is fine (created on write); anything Pi could not read is refused. */
export async function readForEdit(place: Place, scope: Scope): Promise<FileText> {
	const path = pathOf(place, scope);
	if (!existsSync(path)) return { path, scope, servers: {} };
	const info = statSync(path);
	if (!info.isFile()) throw new EditError(`${path} is not a regular file; nothing was changed`, "invalid-file");
	if (info.size > MAX_FILE_BYTES) throw new EditError(`${path} is larger than 1 MiB; nothing was changed`, "invalid-file");
	const text = await readFile(path, "utf8");
	const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
	const refuse = (problem: string): never => {
		throw new EditError(`${path}: ${problem}; fix the file first (nothing was changed)`, "invalid-file");
	};
	// Edits parse the whole file (jsonc-parser recurses): a value nested past the limit is refused first.
	const deep = scanJson(body).tooDeep[0];
	if (deep) {
		const where =
			deep.entry === undefined ? "a value" : `server "${escapeName(deep.entry)}"${deep.field ? ` field "${deep.field}"` : ""}`;
		return refuse(`${where} nests deeper than ${MAX_DEPTH} levels`);
	}
	const parsed = (() => {
		try {
			return { value: JSON.parse(body) as unknown };
		} catch {
			return undefined;
		}
	})();
	if (!parsed) return refuse(await jsonErrorMessage(body));
	if (!isObject(parsed.value)) return refuse("the top level must be an object");
	const servers = parsed.value.mcpServers ?? {};
	if (!isObject(servers)) return refuse('"mcpServers" must be an object');
	return { path, scope, text, servers };
}

/** The indentation and line ends the file already uses (2 spaces for a new file). */
function formatting(text: string): import("jsonc-parser").FormattingOptions {
	const eol = text.includes("\r\n") ? "\r\n" : "\n";
	const indent = /^([ \t]+)["{[]/m.exec(text)?.[1];
	if (indent?.startsWith("\t")) return { insertSpaces: false, tabSize: 4, eol };
	return { insertSpaces: true, tabSize: indent?.length ?? 2, eol };
}

/** The file's text with `mcpServers[name]` (or one of its fields) set, or removed when `value` is undefined. */
export async function modified(file: FileText, path: readonly (string | number)[], value: unknown): Promise<string> {
	const { modify, applyEdits } = await import("jsonc-parser");
	const bom = file.text?.startsWith("\uFEFF") ? "\uFEFF" : "";
	const base = file.text === undefined ? "{}\n" : file.text.slice(bom.length);
	const formattingOptions = formatting(base);
	const next = applyEdits(base, modify(base, ["mcpServers", ...path], value, { formattingOptions }));
	return `${bom}${next}`;
}

/** `${VAR}` names a value uses. */
function variablesIn(value: unknown): readonly string[] {
	const text = JSON.stringify(value) ?? "";
	return [...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((match) => match[1] ?? "");
}

/**
 * Loads the edited text exactly as a session would (in a private temporary directory, so nothing
 * is written before it passes) and returns the warnings; throws when the file or the entry would be
 * refused. An unset `${VAR}` is a warning: it is stored as written and resolved at each session.
 */
export async function validate(place: Place, file: FileText, text: string, name: string | undefined): Promise<readonly string[]> {
	const dir = await mkdtemp(join(tmpdir(), "pi-mcp-edit-"));
	try {
		const agentDir = join(dir, "agent");
		const cwd = join(dir, "cwd");
		const fake = configPaths({ ...place, agentDir, cwd });
		await mkdir(dirname(fake.project), { recursive: true });
		await mkdir(agentDir, { recursive: true });
		await writeFile(fake[file.scope], text);
		const user = pathOf(place, "user");
		// A project entry may only switch a user entry: the real user file gives it one to switch.
		if (file.scope === "project" && existsSync(user)) await writeFile(fake.user, await readFile(user));
		const snapshot = await loadConfig({ ...place, agentDir, cwd, trusted: true });
		const real = (message: string) => message.split(fake[file.scope]).join(file.path).split(fake.user).join(user);
		const report = snapshot.files.find((entry) => entry.scope === file.scope);
		if (report?.state === "error") throw new EditError(real(report.error ?? `${file.path} could not be read`), "invalid-file");
		if (name === undefined) return [];
		const entry = snapshot.servers.find((server) => server.name === name && server.source.kind === file.scope);
		const unset = [...new Set(variablesIn(JSON.parse(text).mcpServers?.[name]))].filter((v) => place.env[v] === undefined);
		const warnings = unset.map(
			(variable) =>
				`environment variable ${variable} is not set here; the entry keeps \${${variable}} and Pi reads it at each session`,
		);
		if (entry?.error && !(unset.length > 0 && /not set/.test(entry.error))) {
			throw new EditError(`${real(entry.error)}; nothing was changed`, "invalid-entry");
		}
		return warnings;
	} finally {
		await rm(dir, { recursive: true, force: true });
	}
}

/** Writes through a temporary file and a rename, so a reader never sees half a file; a new file is 0600. */
export async function write(path: string, text: string): Promise<void> {
	await mkdir(dirname(path), { recursive: true });
	const temporary = `${path}.pi-mcp-${process.pid}.tmp`;
	const mode = existsSync(path) ? statSync(path).mode & 0o777 : 0o600;
	try {
		await writeFile(temporary, text, { mode });
		await chmod(temporary, mode);
		await rename(temporary, path);
	} catch (error) {
		await rm(temporary, { force: true });
		throw error;
	}
}

function checkName(name: string): void {
	if (!SERVER_NAME.test(name)) {
		throw new EditError(
			`server name "${escapeName(name)}" is not allowed: use letters, digits, - and _ (at most 64)`,
			"invalid-name",
		);
	}
}

/** Names in both files, for "did you mean". */
async function knownNames(place: Place): Promise<readonly string[]> {
	const read = await Promise.all((["user", "project"] as const).map((scope) => readForEdit(place, scope).catch(() => undefined)));
	return [...new Set(read.flatMap((file) => Object.keys(file?.servers ?? {})))];
}

/** A note when the same name is defined in the other file (a project entry replaces the user's). */
async function shadowNote(place: Place, scope: Scope, name: string): Promise<readonly string[]> {
	const other = await readForEdit(place, scope === "user" ? "project" : "user").catch(() => undefined);
	if (!other || !(name in other.servers)) return [];
	return scope === "user"
		? [`the project file ${other.path} also defines "${name}"; where Pi trusts that project, its entry is used instead`]
		: [`this entry replaces the user file's "${name}" (${other.path}) wherever Pi trusts this project`];
}

/** Adds an entry (or replaces one with `force`); refused when the name exists, or the result would not load. */
export async function addServer(
	place: Place,
	scope: Scope,
	name: string,
	entry: Readonly<Record<string, unknown>>,
	options: Readonly<{ force?: boolean }> = {},
): Promise<Change> {
	checkName(name);
	const file = await readForEdit(place, scope);
	const before = file.servers[name];
	if (before !== undefined && !options.force) {
		throw new EditError(`server "${name}" already exists in ${file.path}; pass --force to replace it`, "exists");
	}
	const text = await modified(file, [name], entry);
	const warnings = [...(await validate(place, file, text, name)), ...(await shadowNote(place, scope, name))];
	await write(file.path, text);
	const action = before === undefined ? "added" : "replaced";
	return { path: file.path, scope, name, action, before, after: entry, createdFile: file.text === undefined, warnings };
}

/**
 * The file that defines `name`: the one `scope` names, else the only one that does. Refused when
 * neither does (with close matches), when both do and no scope is given, and for a server that only
 * an extension registers (`snapshot`, from a running Pi: such servers live in that extension's code).
 */
export async function findDefiningFile(place: Place, name: string, scope?: Scope, snapshot?: ConfigSnapshot): Promise<FileText> {
	const scopes: readonly Scope[] = scope ? [scope] : ["user", "project"];
	const files = await Promise.all(scopes.map((each) => readForEdit(place, each)));
	const defining = files.filter((file) => name in file.servers);
	const [only, second] = defining;
	if (only && !second) return only;
	if (only && second) {
		throw new EditError(
			`server "${name}" is defined in both ${only.path} and ${second.path}; choose one with --scope user or --scope project`,
			"ambiguous",
		);
	}
	const registered = snapshot?.servers.find((entry) => entry.name === name && entry.source.kind === "extension");
	if (registered) {
		throw new EditError(
			`server "${name}" is registered by the extension ${registered.source.path}, not by a file: it cannot be edited here`,
			"extension",
		);
	}
	const where = scope ? `the ${scope} file ${pathOf(place, scope)}` : `${pathOf(place, "user")} or ${pathOf(place, "project")}`;
	const close = closeMatches(name, await knownNames(place));
	const hint = close.length > 0 ? `; did you mean ${close.map((each) => `"${each}"`).join(" or ")}?` : "";
	throw new EditError(`no server "${escapeName(name)}" in ${where}${hint}`, "unknown");
}

/** Removes the entry from the file that defines it. */
export async function removeServer(place: Place, name: string, scope?: Scope, snapshot?: ConfigSnapshot): Promise<Change> {
	const file = await findDefiningFile(place, name, scope, snapshot);
	const text = await modified(file, [name], undefined);
	const warnings = await validate(place, file, text, undefined);
	await write(file.path, text);
	return {
		path: file.path,
		scope: file.scope,
		name,
		action: "removed",
		before: file.servers[name],
		createdFile: false,
		warnings,
	};
}

/**
 * Enables or disables an entry in the file that defines it, as `"enabled": true|false` (a `"disabled"`
 * key, which would contradict it, goes). With `scope` "project" and only a user entry, the project
 * file gets an override entry (`{"enabled": false}`), which switches the user's entry in that project only.
 */
export async function setEnabled(
	place: Place,
	name: string,
	enabled: boolean,
	scope?: Scope,
	snapshot?: ConfigSnapshot,
): Promise<Change> {
	const project = scope === "project" ? await readForEdit(place, "project") : undefined;
	const user = project && !(name in project.servers) ? await readForEdit(place, "user") : undefined;
	const file = project && user && name in user.servers ? project : await findDefiningFile(place, name, scope, snapshot);
	const before = file.servers[name];
	const current = isObject(before) ? before : {};
	const isOn = current.enabled === undefined ? current.disabled !== true : current.enabled === true;
	const action = enabled ? "enabled" : "disabled";
	if (before !== undefined && isOn === enabled && current.disabled === undefined) {
		return {
			path: file.path,
			scope: file.scope,
			name,
			action: "unchanged",
			before,
			after: before,
			createdFile: false,
			warnings: [],
		};
	}
	const withoutDisabled = "disabled" in current ? await modified(file, [name, "disabled"], undefined) : undefined;
	const base = withoutDisabled === undefined ? file : { ...file, text: withoutDisabled };
	const text = await modified(
		base,
		before === undefined ? [name] : [name, "enabled"],
		before === undefined ? { enabled } : enabled,
	);
	const warnings = await validate(place, file, text, name);
	await write(file.path, text);
	const after = JSON.parse(text.replace(/^\uFEFF/, "")).mcpServers[name] as unknown;
	return { path: file.path, scope: file.scope, name, action, before, after, createdFile: file.text === undefined, warnings };
}

/** The entries named `name` as written, in the files that define them (user first). */
export async function readEntries(
	place: Place,
	name: string,
): Promise<readonly Readonly<{ path: string; scope: Scope; entry: unknown }>[]> {
	const files = await Promise.all((["user", "project"] as const).map((scope) => readForEdit(place, scope)));
	return files
		.filter((file) => name in file.servers)
		.map((file) => ({ path: file.path, scope: file.scope, entry: file.servers[name] }));
}

const SECRET_PART =
	/^(token|secret|password|passwd|pass|pwd|key|apikey|auth|authorization|credential|credentials|cookie|session)$/i;

/** A value shown in place of one that may hold a secret. */
export const MASK = "********";

/** A value is shown as written only when it is made of `${VAR}` references (and an auth scheme word). */
function isReference(value: string): boolean {
	const literal = value.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*\}/g, "").trim();
	return value.includes("${") && (literal === "" || /^(bearer|basic|token)$/i.test(literal));
}

/** The entry with every `env` and `headers` value masked unless it is a `${VAR}` reference, and URL query values masked. */
export function maskedEntry(entry: unknown): unknown {
	if (!isObject(entry)) return entry;
	const mask = (values: unknown) =>
		isObject(values)
			? Object.fromEntries(
					Object.entries(values).map(([key, value]) => [key, typeof value === "string" && isReference(value) ? value : MASK]),
				)
			: values;
	const url = typeof entry.url === "string" && URL.canParse(entry.url) ? new URL(entry.url) : undefined;
	for (const key of url ? [...url.searchParams.keys()] : []) url?.searchParams.set(key, MASK);
	return {
		...entry,
		...(entry.env !== undefined ? { env: mask(entry.env) } : {}),
		...(entry.headers !== undefined ? { headers: mask(entry.headers) } : {}),
		...(url && url.search !== "" ? { url: url.href.replaceAll(encodeURIComponent(MASK), MASK) } : {}),
	};
}

/**
 * Hints for literal values that look like secrets: an `env` or `headers` name with a part (split on
 * `-`, `_`) such as token, secret or key, or an `Authorization` header, holding text rather than `${VAR}`.
 */
export function secretHints(entry: unknown): readonly string[] {
	if (!isObject(entry)) return [];
	return (["env", "headers"] as const).flatMap((field) => {
		const values = entry[field];
		if (!isObject(values)) return [];
		return Object.entries(values).flatMap(([key, value]) => {
			if (typeof value !== "string" || value.length === 0 || isReference(value)) return [];
			const secretName = key.split(/[-_]/).some((part) => SECRET_PART.test(part));
			if (!secretName) return [];
			const variable = key.toUpperCase().replace(/[^A-Z0-9_]/g, "_");
			return [
				`${field}.${key} holds a literal value that looks like a secret: store "\${${variable}}" instead and set ${variable} in the environment Pi runs in`,
			];
		});
	});
}
