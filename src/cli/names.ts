/**
 * Names the user typed, looked up: a server, a tool, a prompt, a prompt's argument. An unknown one
 * is a usage error (exit 2) that offers the close ones ("did you mean"), else lists what there is.
 */
import { unknownServer } from "../config.ts";
import type { PendingChange, Runtime } from "../contracts.ts";
import { escapeName } from "../output/text.ts";
import { hiddenBy } from "../schema/tool-filter.ts";
import { type ConfigSnapshot, closeMatches, type ServerEntry } from "../schema.ts";
import { type Flags, UsageError } from "./args.ts";
import { HELP } from "./help.ts";
import type { CliIo } from "./io.ts";

/** What a lookup reads of a command's context (declared here: this file never imports the context). */
export type Lookup = Readonly<{
	io: Pick<CliIo, "err">;
	flags: Pick<Flags, "approve">;
	config: ConfigSnapshot;
	/** Project entries that replace a user entry of the same name. */
	shadowed: readonly string[];
}>;

const quoted = (names: readonly string[]) => names.map((each) => `"${escapeName(each)}"`).join(" or ");

/** `; did you mean "x"?` for the close candidates, else `; it has: a, b, …` (or nothing with `list` false). */
export function suggestion(name: string, candidates: readonly string[], list = true): string {
	const close = closeMatches(name, candidates);
	if (close.length > 0) return `; did you mean ${quoted(close)}?`;
	if (!list) return "";
	const shown = candidates.slice(0, 12).map(escapeName).join(", ");
	return `; it has: ${shown || "none"}${candidates.length > 12 ? ", …" : ""}`;
}

/** The entry of a named server, or a usage error naming the configured ones and close matches. */
export function entryOf(cli: Lookup, name: string | undefined, command: string): ServerEntry {
	if (!name) throw new UsageError(`pi-mcp ${command}: name a server`, command, HELP[command]);
	const entry = cli.config.servers.find((server) => server.name === name);
	if (!entry) {
		// The extension's message (it also names config files that could not be read), plus the CLI's hints.
		const names = cli.config.servers.map((server) => server.name);
		const guess = suggestion(name, names, false);
		const hint = cli.flags.approve ? "" : " (the project file is read only with --approve)";
		throw UsageError.said(`${unknownServer(cli.config, name) ?? `unknown MCP server "${escapeName(name)}"`}${guess}${hint}`);
	}
	if (!entry.config) throw UsageError.said(entry.error ?? `server "${name}" has no usable configuration`);
	if (cli.shadowed.includes(name)) {
		cli.io.err(
			`pi-mcp: server "${name}" comes from the project file ${entry.source.path}, which replaces the user file's entry of that name\n`,
		);
	}
	return entry;
}

/** A usage error for a name `owner` (`MCP server "x"`, already escaped) does not have: `what` is "tool", "prompt", … */
export function unknownOf(owner: string, what: string, name: string, candidates: readonly string[]): UsageError {
	return UsageError.said(`${owner} has no ${what} "${escapeName(name)}"${suggestion(name, candidates)}`);
}

/** `MCP server "name"`, escaped. */
export const serverWords = (server: string) => `MCP server "${escapeName(server)}"`;

/** A server's tools by name: those the model sees, and those the entry's `includeTools` / `excludeTools` hide. */
export async function toolNames(
	runtime: Pick<Runtime, "tools" | "status">,
	server: string,
	signal: AbortSignal,
): Promise<Readonly<{ visible: readonly string[]; filtered: readonly string[] }>> {
	const visible = (await runtime.tools(server, signal)).map((tool) => tool.name);
	const status = runtime.status().find((each) => each.name === server);
	return { visible, filtered: status?.hiddenTools?.flatMap((field) => field.names ?? []) ?? [] };
}

/** Why a tool the server lists is withheld until the user approves it (#47), in the shell's words. */
const WITHHELD: Readonly<Record<PendingChange["reason"], string>> = {
	changed: "its definition changed since you approved it",
	new: "it is new since you approved the server's definitions",
	external: "its schema has an external $ref, which cannot be pinned",
	unreadable: "the pins file cannot be read",
};

/** A usage error for a tool withheld until `pi-mcp trust` approves it (only looked for when something is withheld). */
async function withheldTool(
	runtime: Pick<Runtime, "status" | "changes">,
	server: string,
	tool: string,
	signal: AbortSignal,
): Promise<UsageError | undefined> {
	const status = runtime.status().find((each) => each.name === server);
	if (!status?.pins?.pending) return undefined;
	const review = await runtime.changes(server, signal);
	const change = review.pending.find((each) => each.kind === "tools" && (each.name === tool || escapeName(each.name) === tool));
	if (!change) return undefined;
	const fix = change.reason === "unreadable" ? `pi-mcp trust --reset ${server}` : `pi-mcp trust ${server}`;
	return UsageError.said(
		`tool "${escapeName(change.name)}" on ${serverWords(server)} is withheld until you approve it: ${WITHHELD[change.reason]}; review it with ${fix}`,
	);
}

/**
 * Refuses a tool name the server does not list (a usage error naming the close ones), or one it lists
 * but that is withheld until approved (naming `pi-mcp trust`). A tool the entry hides is left to the
 * runtime, whose refusal names the field and the file; its escaped form (as listings show a hostile
 * name) is accepted too.
 */
export async function checkTool(
	runtime: Pick<Runtime, "tools" | "status" | "changes">,
	entry: ServerEntry,
	tool: string,
	signal: AbortSignal,
): Promise<void> {
	if (entry.config && hiddenBy(entry.config, tool) !== undefined) return;
	const { visible, filtered } = await toolNames(runtime, entry.name, signal);
	if (visible.includes(tool) || filtered.includes(tool) || visible.some((name) => escapeName(name) === tool)) return;
	throw (await withheldTool(runtime, entry.name, tool, signal)) ?? unknownOf(serverWords(entry.name), "tool", tool, visible);
}
