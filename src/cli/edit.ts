/**
 * The commands that edit `mcp.json`: add, add-json, remove, enable, disable, and get (which reads).
 * The editing itself is `config/edit.ts` (shared with the `/mcp` manager); here the command line
 * becomes an entry, and the change is shown masked (`config/mask.ts`), with what looks like a literal
 * secret warned about before it is written. Ctrl+C or SIGTERM stops an edit before it writes.
 */

import { existsSync } from "node:fs";
import {
	addServer,
	type Change,
	EditError,
	type EditOptions,
	findDefiningFile,
	maskedEntry,
	type Place,
	pathOf,
	readEntries,
	removeServer,
	type Scope,
	secretHints,
	setEnabled,
} from "../config/edit.ts";
import { loadConfig } from "../config.ts";
import { escapeName } from "../output/text.ts";
import { isObject } from "../schema.ts";
import { acquireLock } from "../store.ts";
import { type Flags, UsageError } from "./args.ts";
import { HELP } from "./help.ts";
import { agentDirOf, type CliIo, EXIT } from "./io.ts";
import { jsonLine } from "./json.ts";

export type EditCommand = (
	io: CliIo,
	flags: Flags,
	args: readonly string[],
	rest: readonly string[] | undefined,
	signal: AbortSignal,
) => Promise<number>;

export const RELOAD_NOTE = "A running Pi uses the change from its next session, or after /reload.";

export function placeOf(io: CliIo): Place {
	return { agentDir: agentDirOf(io.env), cwd: io.cwd, env: io.env };
}

const fileName = (change: Pick<Change, "scope" | "path">) => `the ${change.scope} file ${change.path}`;

/** How the shell's edits wait: under the cross-process lock, stopped by Ctrl+C or SIGTERM, saying so when another edit holds the file. */
export function waitingOf(io: CliIo, signal: AbortSignal): EditOptions {
	return { lock: acquireLock, signal, onWait: (message) => io.err(`pi-mcp: ${escapeName(message)}\n`) };
}

/**
 * Warnings for literal secrets in an entry about to be written: on stderr now in text mode (before
 * the file is written), and returned for `--json`'s `warnings`.
 */
export function warnBeforeWriting(io: CliIo, flags: Flags, entry: unknown, scope: Scope): readonly string[] {
	const hints = secretHints(entry, scope);
	if (!flags.json) for (const hint of hints) io.err(`pi-mcp: warning: ${escapeName(hint)}\n`);
	return hints;
}

/** An entry as lines of JSON (hidden characters escaped), masked. */
export function entryLines(name: string, entry: unknown): string {
	return jsonLine({ [name]: maskedEntry(entry) }, 2);
}

/** Prints what an edit did (entry masked), its warnings on stderr, and the reload note; `hints` were shown already. */
export function report(io: CliIo, flags: Flags, change: Change, hints: readonly string[] = []): void {
	if (flags.json) {
		io.out(
			jsonLine(
				{
					action: change.action,
					name: change.name,
					scope: change.scope,
					path: change.path,
					entry: maskedEntry(change.after ?? change.before),
					warnings: [...hints, ...change.warnings],
				},
				2,
			),
		);
	} else {
		const verb: Readonly<Record<Change["action"], string>> = {
			added: `Added "${change.name}" to ${fileName(change)}${change.createdFile ? " (created)" : ""}:`,
			replaced: `Replaced "${change.name}" in ${fileName(change)}:`,
			removed: `Removed "${change.name}" from ${fileName(change)}; it was:`,
			enabled: `Enabled "${change.name}" in ${fileName(change)}:`,
			disabled: `Disabled "${change.name}" in ${fileName(change)}:`,
			unchanged: `"${change.name}" in ${fileName(change)} is already so; nothing was changed:`,
		};
		io.out(`${escapeName(verb[change.action])}\n${entryLines(change.name, change.after ?? change.before)}`);
	}
	for (const warning of change.warnings) io.err(`pi-mcp: warning: ${escapeName(warning)}\n`);
	if (change.action !== "unchanged") io.err(`${RELOAD_NOTE}\n`);
}

/** `KEY=VALUE` words into an object. */
function pairs(words: readonly string[], separator: string, option: string): Record<string, string> {
	return Object.fromEntries(
		words.map((word) => {
			const at = word.indexOf(separator);
			const key = word.slice(0, at).trim();
			if (at <= 0 || key === "")
				// The word is not quoted: it may be a secret that lost its key.
				throw new UsageError(`option ${option} takes ${option === "-e" ? "KEY=VALUE" : "'Name: value'"}`, "add");
			return [key, separator === ":" ? word.slice(at + 1).trim() : word.slice(at + 1)];
		}),
	);
}

/** The entry `add` writes, from its options and what follows `--`. */
export function entryFromFlags(flags: Flags, rest: readonly string[] | undefined): Record<string, unknown> {
	const [command, ...args] = rest ?? [];
	const description = flags.description !== undefined ? { description: flags.description } : {};
	if (flags.url !== undefined) {
		if (command !== undefined) throw new UsageError("pi-mcp add: give either --url or a command after --, not both", "add");
		if (flags.env.length > 0) throw new UsageError("pi-mcp add: -e applies to stdio servers (a command after --)", "add");
		const oauth = {
			...(flags.clientId !== undefined ? { clientId: flags.clientId } : {}),
			...(flags.issuer !== undefined ? { issuer: flags.issuer } : {}),
			...(flags.oauthScope !== undefined ? { scope: flags.oauthScope } : {}),
		};
		if (flags.auth !== undefined && flags.auth !== "oauth" && flags.auth !== "bearer")
			throw new UsageError(`pi-mcp add: --auth takes "oauth" or "bearer", not "${flags.auth}"`, "add");
		if (flags.auth === "bearer" && flags.bearerEnv === undefined)
			throw new UsageError("pi-mcp add: --auth bearer needs --bearer-env <VAR>, the variable holding the token", "add");
		return {
			url: flags.url,
			...(flags.header.length > 0 ? { headers: pairs(flags.header, ":", "--header") } : {}),
			...(flags.auth !== undefined ? { auth: flags.auth } : {}),
			...(flags.bearerEnv !== undefined ? { bearerTokenEnv: flags.bearerEnv } : {}),
			...(Object.keys(oauth).length > 0 ? { oauth } : {}),
			...description,
		};
	}
	if (command === undefined)
		throw new UsageError(`pi-mcp add: give the server's command after -- (or --url <url>)`, "add", HELP.add);
	const httpOnly = [flags.header.length > 0 && "--header", flags.auth && "--auth", flags.bearerEnv && "--bearer-env"].filter(
		Boolean,
	);
	if (httpOnly.length > 0) throw new UsageError(`pi-mcp add: ${httpOnly.join(", ")} apply to HTTP servers (--url)`, "add");
	return {
		command,
		...(args.length > 0 ? { args } : {}),
		...(flags.env.length > 0 ? { env: pairs(flags.env, "=", "-e") } : {}),
		...description,
	};
}

function nameOf(args: readonly string[], command: string, count = 1): string {
	const [name] = args;
	if (name === undefined || args.length !== count) {
		throw new UsageError(
			`pi-mcp ${command}: ${count === 1 ? "give one server name" : "give a name and one JSON entry"}`,
			command,
			HELP[command],
		);
	}
	return name;
}

/** Adds `entry` after warning about its literal secrets. */
async function addEntry(io: CliIo, flags: Flags, name: string, entry: Record<string, unknown>, signal: AbortSignal) {
	const scope = flags.scope ?? "user";
	const hints = warnBeforeWriting(io, flags, entry, scope);
	const change = await addServer(placeOf(io), scope, name, entry, { force: flags.force, ...waitingOf(io, signal) });
	report(io, flags, change, hints);
	return EXIT.ok;
}

const add: EditCommand = async (io, flags, args, rest, signal) =>
	addEntry(io, flags, nameOf(args, "add"), entryFromFlags(flags, rest), signal);

/** The entry `add-json` was given, or the usage error that refuses it. */
function jsonEntry(json: string): unknown {
	try {
		return JSON.parse(json) as unknown;
	} catch (error) {
		throw new UsageError(`pi-mcp add-json: the entry is not valid JSON (${(error as Error).message})`, "add-json");
	}
}

const addJson: EditCommand = async (io, flags, args, _rest, signal) => {
	const name = nameOf(args, "add-json", 2);
	const entry = jsonEntry(args[1] ?? "");
	if (!isObject(entry)) throw new UsageError("pi-mcp add-json: the entry must be one JSON object", "add-json");
	return addEntry(io, flags, name, entry, signal);
};

const remove: EditCommand = async (io, flags, args, _rest, signal) => {
	report(io, flags, await removeServer(placeOf(io), nameOf(args, "remove"), flags.scope, undefined, waitingOf(io, signal)));
	return EXIT.ok;
};

const toggle =
	(enabled: boolean): EditCommand =>
	async (io, flags, args, _rest, signal) => {
		// `<server> <tool>`: one tool off or on for the model (`excludeTools`).
		if (args.length === 2 && args[0] !== undefined && args[1] !== undefined) {
			const { toggleTool } = await import("./tool-toggle.ts");
			return toggleTool(
				io,
				flags,
				{ place: placeOf(io), reloadNote: RELOAD_NOTE, ...waitingOf(io, signal), signal },
				[args[0], args[1]],
				enabled,
			);
		}
		const name = nameOf(args, enabled ? "enable" : "disable");
		report(io, flags, await setEnabled(placeOf(io), name, enabled, flags.scope, undefined, waitingOf(io, signal)));
		return EXIT.ok;
	};

/**
 * The entry as written in each file that defines it, masked, and what loading makes of it. The
 * project file is read as the extension reads it: only when trusted, here with `--approve`.
 */
const get: EditCommand = async (io, flags, args) => {
	const name = nameOf(args, "get");
	const place = placeOf(io);
	const scopes: readonly Scope[] = flags.approve ? ["user", "project"] : ["user"];
	const found = await readEntries(place, name, scopes);
	const project = pathOf(place, "project");
	const unread = !flags.approve && existsSync(project) ? `the project file ${project} is read only with --approve` : undefined;
	if (found.length === 0) {
		await findDefiningFile(place, name, flags.approve ? undefined : "user").catch((error: unknown) => {
			if (error instanceof EditError && unread) throw new EditError(`${error.message} (${unread})`, error.code);
			throw error;
		}); // throws "unknown", with close matches
	}
	const snapshot = await loadConfig({ ...place, trusted: flags.approve });
	const used = snapshot.servers.find((entry) => entry.name === name);
	const state = !used ? "unknown" : used.error ? "invalid" : used.enabled ? "enabled" : "disabled";
	const definitions = found.map((each) => ({
		scope: each.scope,
		path: each.path,
		entry: maskedEntry(each.entry),
		...(used && used.source.path === each.path ? { used: true } : {}),
	}));
	// Nothing starts unless asked: an enabled server's instructions need a connection (`--connect`).
	const connects = flags.connect && state === "enabled";
	const instructions = async () => (connects ? (await import("./instructions.ts")).instructionsFor(io, flags, name) : undefined);
	if (flags.json) {
		const note = unread ? { note: unread } : {};
		const error = used?.error ? { error: used.error } : {};
		io.out(jsonLine({ name, state, ...error, definitions, ...note, instructions: await instructions() }, 2));
		return EXIT.ok;
	}
	const lines = found.map(
		(each) =>
			`${escapeName(name)} (${each.scope} file ${each.path}${found.length > 1 && used?.source.path === each.path ? "; used where Pi trusts the project" : ""}):\n${entryLines(name, each.entry)}`,
	);
	io.out(`${lines.join("")}state: ${state}${used?.error ? ` — ${used.error}` : ""}\n`);
	if (unread) io.err(`pi-mcp: note: ${escapeName(unread)}\n`);
	const told = await instructions();
	if (told !== undefined) io.out(told ? `instructions:\n${told.replace(/^/gm, "  ")}\n` : "instructions: none\n");
	return EXIT.ok;
};

export const EDIT_COMMANDS: Readonly<Record<string, EditCommand>> = {
	add,
	"add-json": addJson,
	remove,
	get,
	enable: toggle(true),
	disable: toggle(false),
};

export { EditError };
