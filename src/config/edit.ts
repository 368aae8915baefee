/**
 * Edits `mcp.json` in place: add, replace, remove, enable and disable one entry. One text edit
 * changes only the entry's own text (`members.ts`), so the other entries, the order of keys and the
 * indentation stay byte for byte as the user wrote them; the result must stay strict JSON (Pi reads the file
 * with `JSON.parse`) and pass the same checks as loading (`loadConfig`), or nothing is written.
 * Shared by `pi-mcp add/remove/enable/disable/import` and the `/mcp` manager (a tool's `excludeTools`
 * edit, `tool-edit.ts`, runs through `editEntry`). Each edit runs alone
 * on its file (across processes too), re-reads it under the lock, and writes it through an exclusive
 * temporary file (`safe-file.ts`).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { configPaths, type LoadOptions, loadConfig, MAX_FILE_BYTES } from "../config.ts";
import { escapeName } from "../output/text.ts";
import { type ConfigSnapshot, closeMatches, isObject, parseJson, SERVER_NAME } from "../schema.ts";
import { setAt } from "./members.ts";
import { editTarget, exclusiveEdit, FileRefused, inTurn, type LockWait, readBounded, writeExclusive } from "./safe-file.ts";
import { MAX_DEPTH, scanJson } from "./scan.ts";
import { jsonErrorMessage } from "./values.ts";

export { MASK, maskedEntry, runsText, secretHints } from "./mask.ts";

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

/** A file as read for an edit: `path` as configured, `target` the file written (a symlink's target). */
export type FileText = Readonly<{
	path: string;
	target: string;
	scope: Scope;
	text?: string;
	servers: Readonly<Record<string, unknown>>;
}>;

/** How an edit waits: Ctrl+C (`signal`) stops it before anything is written; `onWait` hears of a held lock. */
export type EditOptions = LockWait;

/** A refusal of the file system layer as an edit error. */
async function refusing<T>(work: Promise<T>): Promise<T> {
	return work.catch((error: unknown) => {
		if (error instanceof FileRefused)
			throw new EditError(`${error.message.replace(/; nothing was changed$/, "")}; nothing was changed`, "invalid-file");
		throw error;
	});
}

export function pathOf(place: Place, scope: Scope): string {
	return configPaths(place)[scope];
}

/** Reads a file for editing: missing is fine (created on write); anything Pi could not read is refused. */
export async function readForEdit(place: Place, scope: Scope): Promise<FileText> {
	const path = pathOf(place, scope);
	const target = await refusing(editTarget(path));
	const text = await refusing(readBounded(target, MAX_FILE_BYTES));
	if (text === undefined) return { path, target, scope, servers: {} };
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
	const parsed = parseJson(body);
	if (parsed === undefined) return refuse(await jsonErrorMessage(body));
	if (!isObject(parsed)) return refuse("the top level must be an object");
	const servers = parsed.mcpServers ?? {};
	if (!isObject(servers)) return refuse('"mcpServers" must be an object');
	return { path, target, scope, text, servers };
}

/** The file's text with `mcpServers[name]` (or one of its fields) set, or removed when `value` is undefined. */
export async function modified(file: FileText, path: readonly string[], value: unknown): Promise<string> {
	const bom = file.text?.startsWith("\uFEFF") ? "\uFEFF" : "";
	const base = file.text === undefined ? "{}\n" : file.text.slice(bom.length);
	return `${bom}${await setAt(base, ["mcpServers", ...path], value)}`;
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
		const userText = file.scope === "project" ? await refusing(readBounded(user, MAX_FILE_BYTES)) : undefined;
		if (userText !== undefined) await writeFile(fake.user, userText);
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

/** Writes the file's target (see `safe-file.ts`), unless the edit was interrupted. */
async function commit(file: FileText, text: string, options: EditOptions): Promise<void> {
	options.signal?.throwIfAborted();
	await writeExclusive(file.target, text);
}

/**
 * Runs `work` alone on the file of `scope` (see `exclusiveEdit`); `work` reads the file itself, under
 * the lock. A project file that really lies outside the project is not edited (see `editTarget`).
 */
async function alone<T>(place: Place, scope: Scope, options: EditOptions, work: () => Promise<T>): Promise<T> {
	const target = await refusing(editTarget(pathOf(place, scope), scope === "project" ? place.cwd : undefined));
	return refusing(exclusiveEdit(target, work, options));
}

function checkName(name: string): void {
	if (!SERVER_NAME.test(name)) {
		throw new EditError(
			`server name "${escapeName(name)}" is not allowed: use letters, digits, - and _ (at most 64)`,
			"invalid-name",
		);
	}
}

/** Names in the files searched, for "did you mean". */
async function knownNames(place: Place, scopes: readonly Scope[]): Promise<readonly string[]> {
	const read = await Promise.all(scopes.map((scope) => readForEdit(place, scope).catch(() => undefined)));
	return [...new Set(read.flatMap((file) => Object.keys(file?.servers ?? {})))];
}

/**
 * For a project entry, a note when the user file defines the same name (the project's replaces it).
 * A user entry gets none: that would parse a project file Pi may not trust (the README promises an
 * untrusted one is not even parsed).
 */
async function shadowNote(place: Place, scope: Scope, name: string): Promise<readonly string[]> {
	if (scope !== "project") return [];
	const user = await readForEdit(place, "user").catch(() => undefined);
	if (!user || !(name in user.servers)) return [];
	return [`this entry replaces the user file's "${name}" (${user.path}) wherever Pi trusts this project`];
}

/** Adds an entry (or replaces one with `force`); refused when the name exists, or the result would not load. */
export function addServer(
	place: Place,
	scope: Scope,
	name: string,
	entry: Readonly<Record<string, unknown>>,
	options: Readonly<{ force?: boolean }> & EditOptions = {},
): Promise<Change> {
	return inTurn(() => add(place, scope, name, entry, options));
}

async function add(
	place: Place,
	scope: Scope,
	name: string,
	entry: Readonly<Record<string, unknown>>,
	options: Readonly<{ force?: boolean }> & EditOptions,
): Promise<Change> {
	checkName(name);
	return alone(place, scope, options, async () => {
		const file = await readForEdit(place, scope);
		const before = file.servers[name];
		if (before !== undefined && !options.force) {
			throw new EditError(`server "${name}" already exists in ${file.path}; pass --force to replace it`, "exists");
		}
		const text = await modified(file, [name], entry);
		const warnings = [...(await validate(place, file, text, name)), ...(await shadowNote(place, scope, name))];
		await commit(file, text, options);
		const action = before === undefined ? "added" : "replaced";
		return { path: file.path, scope, name, action, before, after: entry, createdFile: file.text === undefined, warnings };
	});
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
	const close = closeMatches(name, await knownNames(place, scopes));
	const hint = close.length > 0 ? `; did you mean ${close.map((each) => `"${escapeName(each)}"`).join(" or ")}?` : "";
	throw new EditError(`no server "${escapeName(name)}" in ${where}${hint}`, "unknown");
}

/** Removes the entry from the file that defines it. */
export function removeServer(
	place: Place,
	name: string,
	scope?: Scope,
	snapshot?: ConfigSnapshot,
	options: EditOptions = {},
): Promise<Change> {
	return inTurn(() => remove(place, name, scope, snapshot, options));
}

async function remove(
	place: Place,
	name: string,
	scope: Scope | undefined,
	snapshot: ConfigSnapshot | undefined,
	options: EditOptions,
): Promise<Change> {
	const chosen = (await findDefiningFile(place, name, scope, snapshot)).scope;
	return alone(place, chosen, options, async () => {
		const file = await findDefiningFile(place, name, chosen, snapshot);
		const text = await modified(file, [name], undefined);
		const warnings = await validate(place, file, text, undefined);
		await commit(file, text, options);
		return {
			path: file.path,
			scope: file.scope,
			name,
			action: "removed",
			before: file.servers[name],
			createdFile: false,
			warnings,
		};
	});
}

/**
 * Enables or disables an entry in the file that defines it: disabling writes `"enabled": false`,
 * enabling removes it (a `"disabled"` key, which would contradict it, goes either way). With `scope` "project" and only a user entry, the project
 * file gets an override entry (`{"enabled": false}`), which switches the user's entry in that project only.
 */
export function setEnabled(
	place: Place,
	name: string,
	enabled: boolean,
	scope?: Scope,
	snapshot?: ConfigSnapshot,
	options: EditOptions = {},
): Promise<Change> {
	return inTurn(() => toggle(place, name, enabled, scope, snapshot, options));
}

async function toggle(
	place: Place,
	name: string,
	enabled: boolean,
	scope: Scope | undefined,
	snapshot: ConfigSnapshot | undefined,
	options: EditOptions,
): Promise<Change> {
	const project = scope === "project" ? await readForEdit(place, "project") : undefined;
	const user = project && !(name in project.servers) ? await readForEdit(place, "user") : undefined;
	const override = project !== undefined && user !== undefined && name in user.servers;
	const chosen = override ? "project" : (await findDefiningFile(place, name, scope, snapshot)).scope;
	// Under the lock the file is read again: what another edit changed meanwhile is kept.
	return alone(place, chosen, options, async () => {
		const read = await readForEdit(place, chosen);
		const file = override || name in read.servers ? read : await findDefiningFile(place, name, chosen, snapshot);
		return toggled(place, file, name, enabled, options);
	});
}

async function toggled(place: Place, file: FileText, name: string, enabled: boolean, options: EditOptions): Promise<Change> {
	const before = file.servers[name];
	const current = isObject(before) ? before : {};
	const isOn = current.enabled === undefined ? current.disabled !== true : current.enabled === true;
	const action = enabled ? "enabled" : "disabled";
	const unchanged = before !== undefined && isOn === enabled && current.disabled === undefined;
	const common = { path: file.path, scope: file.scope, name, before, createdFile: file.text === undefined && !unchanged };
	if (unchanged) return { ...common, action: "unchanged", after: before, warnings: [] };
	const withoutDisabled = "disabled" in current ? await modified(file, [name, "disabled"], undefined) : undefined;
	const base = withoutDisabled === undefined ? file : { ...file, text: withoutDisabled };
	// A server entry is on unless it says otherwise: enabling removes `"enabled": false` rather than
	// writing `true`. An override entry (the project file switching a user entry) keeps `"enabled": true`.
	const server = "command" in current || "url" in current;
	const text =
		enabled && server
			? "enabled" in current
				? await modified(base, [name, "enabled"], undefined)
				: (base.text ?? "")
			: await modified(base, before === undefined ? [name] : [name, "enabled"], before === undefined ? { enabled } : enabled);
	const warnings = await validate(place, file, text, name);
	await commit(file, text, options);
	const after = JSON.parse(text.replace(/^\uFEFF/, "")).mcpServers[name] as unknown;
	return { ...common, action, after, warnings };
}

/**
 * Runs `work` on the file that defines `name` with the same guarantees as every edit here: in this
 * process's turn, alone on the file across processes, the file read again under the lock; `work`
 * returns the checked text to write (none: nothing changes) and what to report.
 */
export function editEntry<T>(
	place: Place,
	name: string,
	scope: Scope | undefined,
	snapshot: ConfigSnapshot | undefined,
	options: EditOptions,
	work: (file: FileText) => Promise<Readonly<{ text?: string; result: T }>>,
): Promise<T> {
	return inTurn(async () => {
		const chosen = (await findDefiningFile(place, name, scope, snapshot)).scope;
		return alone(place, chosen, options, async () => {
			const file = await findDefiningFile(place, name, chosen, snapshot);
			const { text, result } = await work(file);
			if (text !== undefined) await commit(file, text, options);
			return result;
		});
	});
}

/** The entries named `name` as written, in the files of `scopes` that define them (user first). */
export async function readEntries(
	place: Place,
	name: string,
	scopes: readonly Scope[] = ["user", "project"],
): Promise<readonly Readonly<{ path: string; scope: Scope; entry: unknown }>[]> {
	const files = await Promise.all(scopes.map((scope) => readForEdit(place, scope)));
	return files
		.filter((file) => name in file.servers)
		.map((file) => ({ path: file.path, scope: file.scope, entry: file.servers[name] }));
}
