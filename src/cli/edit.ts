/**
 * The commands that edit `mcp.json`: add, add-json, remove, enable, disable, and get (which reads).
 * The editing itself is `config/edit.ts` (shared with the `/mcp` manager); here the command line
 * becomes an entry, and the change is shown with env and header values masked.
 */

import {
	addServer,
	type Change,
	EditError,
	findDefiningFile,
	maskedEntry,
	type Place,
	readEntries,
	removeServer,
	secretHints,
	setEnabled,
} from "../config/edit.ts";
import { loadConfig } from "../config.ts";
import { escapeName } from "../output/text.ts";
import { isObject } from "../schema.ts";
import { type Flags, UsageError } from "./args.ts";
import { agentDirOf, type CliIo, EXIT } from "./context.ts";
import { HELP } from "./help.ts";
import { jsonLine } from "./json.ts";

export type EditCommand = (
	io: CliIo,
	flags: Flags,
	args: readonly string[],
	rest: readonly string[] | undefined,
) => Promise<number>;

export const RELOAD_NOTE = "A running Pi uses the change from its next session, or after /reload.";

export function placeOf(io: CliIo): Place {
	return { agentDir: agentDirOf(io.env), cwd: io.cwd, env: io.env };
}

const fileName = (change: Pick<Change, "scope" | "path">) => `the ${change.scope} file ${change.path}`;

/** Prints what an edit did (entry masked), its warnings and hints on stderr, and the reload note. */
export function report(io: CliIo, flags: Flags, change: Change): void {
	const hints = change.action === "added" || change.action === "replaced" ? secretHints(change.after) : [];
	if (flags.json) {
		io.out(
			jsonLine(
				{
					action: change.action,
					name: change.name,
					scope: change.scope,
					path: change.path,
					entry: maskedEntry(change.after ?? change.before),
					warnings: [...change.warnings, ...hints],
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
		const entry = JSON.stringify({ [change.name]: maskedEntry(change.after ?? change.before) }, null, 2);
		io.out(`${escapeName(verb[change.action])}\n${escapeName(entry)}\n`);
	}
	for (const warning of [...change.warnings, ...hints]) io.err(`pi-mcp: warning: ${escapeName(warning)}\n`);
	if (change.action !== "unchanged") io.err(`${RELOAD_NOTE}\n`);
}

/** `KEY=VALUE` words into an object. */
function pairs(words: readonly string[], separator: string, option: string): Record<string, string> {
	return Object.fromEntries(
		words.map((word) => {
			const at = word.indexOf(separator);
			const key = word.slice(0, at).trim();
			if (at <= 0 || key === "")
				throw new UsageError(`option ${option} takes ${option === "-e" ? "KEY=VALUE" : "'Name: value'"}, not "${word}"`, "add");
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
		throw new UsageError(`pi-mcp add: give the server's command after -- (or --url <url>)\n\n${HELP.add}`, "add");
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
			`pi-mcp ${command}: ${count === 1 ? "give one server name" : "give a name and one JSON entry"}\n\n${HELP[command]}`,
			command,
		);
	}
	return name;
}

const add: EditCommand = async (io, flags, args, rest) => {
	const name = nameOf(args, "add");
	const change = await addServer(placeOf(io), flags.scope ?? "user", name, entryFromFlags(flags, rest), { force: flags.force });
	report(io, flags, change);
	return EXIT.ok;
};

const addJson: EditCommand = async (io, flags, args) => {
	const name = nameOf(args, "add-json", 2);
	const entry = (() => {
		try {
			return JSON.parse(args[1] ?? "") as unknown;
		} catch (error) {
			throw new UsageError(`pi-mcp add-json: the entry is not valid JSON (${(error as Error).message})`, "add-json");
		}
	})();
	if (!isObject(entry)) throw new UsageError("pi-mcp add-json: the entry must be one JSON object", "add-json");
	report(io, flags, await addServer(placeOf(io), flags.scope ?? "user", name, entry, { force: flags.force }));
	return EXIT.ok;
};

const remove: EditCommand = async (io, flags, args) => {
	report(io, flags, await removeServer(placeOf(io), nameOf(args, "remove"), flags.scope));
	return EXIT.ok;
};

const toggle =
	(enabled: boolean): EditCommand =>
	async (io, flags, args) => {
		// `<server> <tool>`: one tool off or on for the model (`excludeTools`).
		if (args.length === 2 && args[0] !== undefined && args[1] !== undefined) {
			const { toggleTool } = await import("./tool-toggle.ts");
			return toggleTool(io, flags, placeOf(io), RELOAD_NOTE, [args[0], args[1]], enabled);
		}
		report(io, flags, await setEnabled(placeOf(io), nameOf(args, enabled ? "enable" : "disable"), enabled, flags.scope));
		return EXIT.ok;
	};

/** The entry as written in each file that defines it, masked, and what loading makes of it. */
const get: EditCommand = async (io, flags, args) => {
	const name = nameOf(args, "get");
	const place = placeOf(io);
	const found = await readEntries(place, name);
	if (found.length === 0) await findDefiningFile(place, name); // throws "unknown", with close matches
	// Reading shows; it runs nothing, so both files are read whatever the project's trust.
	const snapshot = await loadConfig({ ...place, trusted: true });
	const used = snapshot.servers.find((entry) => entry.name === name);
	const state = !used ? "unknown" : used.error ? "invalid" : used.enabled ? "enabled" : "disabled";
	const definitions = found.map((each) => ({
		scope: each.scope,
		path: each.path,
		entry: maskedEntry(each.entry),
		...(used && used.source.path === each.path ? { used: true } : {}),
	}));
	// An enabled server's instructions need a connection: asked for after the entry is shown.
	const instructions = async () =>
		state === "enabled" ? (await import("./instructions.ts")).instructionsFor(io, flags, name) : undefined;
	if (flags.json) {
		io.out(
			jsonLine(
				{ name, state, ...(used?.error ? { error: used.error } : {}), definitions, instructions: await instructions() },
				2,
			),
		);
		return EXIT.ok;
	}
	const lines = definitions.map(
		(each) =>
			`${escapeName(name)} (${each.scope} file ${each.path}${found.length > 1 && each.used ? "; used where Pi trusts the project" : ""}):\n${escapeName(JSON.stringify(each.entry, null, 2))}`,
	);
	io.out(`${lines.join("\n")}\nstate: ${state}${used?.error ? ` — ${used.error}` : ""}\n`);
	const told = await instructions();
	if (told) io.out(`instructions:\n${told.replace(/^/gm, "  ")}\n`);
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
