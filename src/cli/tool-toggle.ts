/**
 * `pi-mcp disable <server> <tool>` / `enable <server> <tool>`: turns one tool off or on for the model
 * (`excludeTools`, through `config/tool-edit.ts`), and says what the entry's filter became. Before
 * hiding a tool, the server is started (under the same trust as `pi-mcp tools`: the project file only
 * with --approve; a disabled server too) and its list checked: a name it does not list is a usage error
 * with the close ones, and nothing is written. `--force` hides a name without checking (a server that
 * cannot start now, a tool it lists later).
 */
import type { EditOptions, Place } from "../config/edit.ts";
import { setToolHidden } from "../config/tool-edit.ts";
import { escapeName } from "../output/text.ts";
import { hiddenBy } from "../schema/tool-filter.ts";
import { closeMatches } from "../schema.ts";
import { type Flags, UsageError } from "./args.ts";
import { openShellRun } from "./context.ts";
import { type CliIo, EXIT } from "./io.ts";
import { jsonLine } from "./json.ts";
import { entryOf, serverWords, toolNames, unknownOf } from "./names.ts";
import { slow } from "./slow.ts";

/** Refuses a tool the server does not list; a tool the entry already hides needs no check (the edit says so). */
async function checkListed(io: CliIo, flags: Flags, server: string, tool: string, signal: AbortSignal): Promise<void> {
	const cli = await openShellRun(io, flags, signal, { start: [server] });
	try {
		const entry = entryOf(cli, server, "disable");
		if (entry.config && hiddenBy(entry.config, tool) !== undefined) return;
		const listing = toolNames(cli.runtime, server, signal).catch((error: unknown) => {
			io.err(
				`pi-mcp: the tools of "${escapeName(server)}" could not be listed; --force hides "${escapeName(tool)}" without checking\n`,
			);
			throw error;
		});
		const { visible, filtered } = await slow(cli, `listing the tools of ${server}`, listing);
		const names = [...visible, ...filtered];
		if (!names.includes(tool)) throw unknownOf(serverWords(server), "tool", tool, names);
	} finally {
		await cli.close();
	}
}

/** The place, the reload note and how the edit waits come from the edit commands (`edit.ts`), which load this file. */
export async function toggleTool(
	io: CliIo,
	flags: Flags,
	{ place, reloadNote, signal, ...options }: Readonly<{ place: Place; reloadNote: string; signal: AbortSignal }> & EditOptions,
	[server, tool]: readonly [string, string],
	enabled: boolean,
): Promise<number> {
	if (!enabled && !flags.force) await checkListed(io, flags, server, tool, signal);
	const change = await setToolHidden(place, server, tool, !enabled, flags.scope, undefined, { ...options, signal });
	const hiddenLike = closeMatches(tool, change.after.excludeTools ?? []);
	if (enabled && change.action === "unchanged" && hiddenLike.length > 0) {
		const names = hiddenLike.map((name) => `"${escapeName(name)}"`).join(" or ");
		throw UsageError.said(`tool "${escapeName(tool)}" of "${escapeName(server)}" is not hidden; did you mean ${names}?`);
	}
	if (flags.json) {
		io.out(jsonLine({ ...change, warnings: change.warnings }, 2));
	} else {
		const where = `"${server}" in the ${change.scope} file ${change.path}`;
		// The filter left, as JSON lines (`jsonLine` escapes what it must and keeps the line breaks); none once the last goes.
		const left = change.action !== "unchanged" && Object.values(change.after).some((value) => value !== undefined);
		const said =
			change.action === "unchanged"
				? `Tool "${tool}" of ${where} is already ${enabled ? "shown to" : "hidden from"} the model; nothing was changed.`
				: `${enabled ? "Showed" : "Hid"} tool "${tool}" of ${where}${enabled ? " to" : " from"} the model${left ? ":" : "; it has no tool filter left."}`;
		const filter = left ? jsonLine(change.after, 2) : "";
		io.out(`${escapeName(said)}\n${filter}`);
	}
	for (const warning of change.warnings) io.err(`pi-mcp: warning: ${escapeName(warning)}\n`);
	if (change.action !== "unchanged") io.err(`${reloadNote}\n`);
	return EXIT.ok;
}
