/**
 * Turns one tool of a server off or on in the file that defines the entry: off adds its name to
 * `excludeTools`, on removes it (and, where `includeTools` leaves it out, adds it there). The same
 * editor as enable and disable (`edit.ts`): only that field's text changes, and the result must load.
 */

import { globMatch, hiddenBy } from "../schema/tool-filter.ts";
import type { ConfigSnapshot } from "../schema.ts";
import { EditError, findDefiningFile, modified, type Place, type Scope, validate, write } from "./edit.ts";

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

export async function setToolHidden(
	place: Place,
	name: string,
	tool: string,
	hidden: boolean,
	scope?: Scope,
	snapshot?: ConfigSnapshot,
): Promise<ToolChange> {
	if (tool === "") throw new EditError("give the tool's name", "invalid-entry");
	const file = await findDefiningFile(place, name, scope, snapshot);
	const entry = file.servers[name];
	const raw = typeof entry === "object" && entry !== null ? (entry as Record<string, unknown>) : {};
	const includeTools = patterns(raw.includeTools);
	const excludeTools = patterns(raw.excludeTools);
	const filter = { includeTools, excludeTools };
	const base = { path: file.path, scope: file.scope, name, tool };
	const now = hiddenBy(filter, tool);
	if (hidden === (now !== undefined)) return { ...base, action: "unchanged", after: filter, warnings: [] };
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
	await write(file.path, text);
	return {
		...base,
		action: hidden ? "hidden" : "shown",
		after: { includeTools: next.includeTools, excludeTools: cleared },
		warnings,
	};
}
