/**
 * Turns one tool of a server off or on in the file that defines the entry: off adds its name to
 * `excludeTools`, on removes it (and, where `includeTools` leaves it out, adds it there). The same
 * editor as enable and disable (`edit.ts`'s `editEntry`: in turn, under the file's lock, re-read there,
 * written through an exclusive temporary file): only that field's text changes, and the result must load.
 */

import { globMatch, hiddenBy } from "../schema/tool-filter.ts";
import type { ConfigSnapshot } from "../schema.ts";
import { EditError, type EditOptions, editEntry, type FileText, modified, type Place, type Scope, validate } from "./edit.ts";

export type ToolChange = Readonly<{
	path: string;
	scope: Scope;
	name: string;
	tool: string;
	action: "hidden" | "shown" | "unchanged";
	/** The entry's `includeTools` / `excludeTools` after the edit. */
	after: Readonly<{ includeTools?: readonly string[]; excludeTools?: readonly string[] }>;
	warnings: readonly string[];
}>;

const patterns = (value: unknown): readonly string[] | undefined =>
	Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : undefined;

export function setToolHidden(
	place: Place,
	name: string,
	tool: string,
	hidden: boolean,
	scope?: Scope,
	snapshot?: ConfigSnapshot,
	options: EditOptions = {},
): Promise<ToolChange> {
	if (tool === "") return Promise.reject(new EditError("give the tool's name", "invalid-entry"));
	return editEntry(place, name, scope, snapshot, options, (file) => toolEdit(place, file, name, tool, hidden));
}

/** The file's new text (none when the tool is already as asked) and the change to report. */
async function toolEdit(
	place: Place,
	file: FileText,
	name: string,
	tool: string,
	hidden: boolean,
): Promise<Readonly<{ text?: string; result: ToolChange }>> {
	const entry = file.servers[name];
	const raw = typeof entry === "object" && entry !== null ? (entry as Record<string, unknown>) : {};
	const includeTools = patterns(raw.includeTools);
	const excludeTools = patterns(raw.excludeTools);
	const filter = { includeTools, excludeTools };
	const base = { path: file.path, scope: file.scope, name, tool };
	const now = hiddenBy(filter, tool);
	if (hidden === (now !== undefined)) return { result: { ...base, action: "unchanged", after: filter, warnings: [] } };
	const next = hidden
		? { includeTools, excludeTools: [...(excludeTools ?? []), tool] }
		: {
				includeTools:
					includeTools && !includeTools.some((pattern) => globMatch(pattern, tool)) ? [...includeTools, tool] : includeTools,
				excludeTools: excludeTools?.filter((pattern) => pattern !== tool),
			};
	const blocking = next.excludeTools?.find((pattern) => globMatch(pattern, tool));
	if (!hidden && blocking !== undefined) {
		throw new EditError(
			`tool "${tool}" of server "${name}" is hidden by the pattern "${blocking}" in "excludeTools" (${file.path}); edit the pattern there`,
			"invalid-entry",
		);
	}
	const cleared = next.excludeTools !== undefined && next.excludeTools.length === 0 ? undefined : next.excludeTools;
	const withExclude = await modified(file, [name, "excludeTools"], cleared);
	const text =
		next.includeTools === includeTools
			? withExclude
			: await modified({ ...file, text: withExclude }, [name, "includeTools"], next.includeTools);
	const warnings = await validate(place, file, text, name);
	const after = { includeTools: next.includeTools, excludeTools: cleared };
	return { text, result: { ...base, action: hidden ? "hidden" : "shown", after, warnings } };
}
