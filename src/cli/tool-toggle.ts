/**
 * `pi-mcp disable <server> <tool>` / `enable <server> <tool>`: turns one tool off or on for the model
 * (`excludeTools`, through `config/tool-edit.ts`), and says what the entry's filter became.
 */
import type { EditOptions, Place } from "../config/edit.ts";
import { setToolHidden } from "../config/tool-edit.ts";
import { escapeName } from "../output/text.ts";
import type { Flags } from "./args.ts";
import type { CliIo } from "./context.ts";
import { EXIT } from "./context.ts";
import { jsonLine } from "./json.ts";

/** The place, the reload note and how the edit waits come from the edit commands (`edit.ts`), which load this file. */
export async function toggleTool(
	io: CliIo,
	flags: Flags,
	{ place, reloadNote, ...options }: Readonly<{ place: Place; reloadNote: string }> & EditOptions,
	[server, tool]: readonly [string, string],
	enabled: boolean,
): Promise<number> {
	const change = await setToolHidden(place, server, tool, !enabled, flags.scope, undefined, options);
	if (flags.json) {
		io.out(jsonLine({ ...change, warnings: change.warnings }, 2));
	} else {
		const where = `"${server}" in the ${change.scope} file ${change.path}`;
		const said =
			change.action === "unchanged"
				? `Tool "${tool}" of ${where} is already ${enabled ? "shown to" : "hidden from"} the model; nothing was changed.`
				: `${enabled ? "Showed" : "Hid"} tool "${tool}" of ${where}${enabled ? " to" : " from"} the model:`;
		const filter = change.action === "unchanged" ? "" : `\n${JSON.stringify(change.after, null, 2)}`;
		io.out(`${escapeName(said)}${escapeName(filter)}\n`);
	}
	for (const warning of change.warnings) io.err(`pi-mcp: warning: ${escapeName(warning)}\n`);
	if (change.action !== "unchanged") io.err(`${reloadNote}\n`);
	return EXIT.ok;
}
