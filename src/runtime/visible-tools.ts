/**
 * What a server's tools/list becomes: the tools the model may see, by name, and those kept from it
 * with the reason. Pure.
 */
import type { Tool } from "@modelcontextprotocol/client";
import type { ServerStatus } from "../contracts.ts";
import { escapeName } from "../output/text.ts";
import { FILTER_FIELDS, type FilterField, filterTest, hiddenBy, type ToolFilter } from "../schema/tool-filter.ts";
import type { ServerEntry } from "../schema.ts";

/** A server's `includeTools` / `excludeTools` and the file they are written in (named in refusals). */
export type FilterOf = ToolFilter & Readonly<{ path: string }>;

export type ToolIndex = Readonly<{
	tools: readonly Tool[];
	byName: ReadonlyMap<string, Tool>;
	/** Tools kept from the model, with the reason. */
	hidden: ReadonlyMap<string, string>;
	/** Tools the user's `includeTools` / `excludeTools` hide, with the field (also in `hidden`). */
	filtered: ReadonlyMap<string, FilterField>;
	/** The filter this index applied, to recognise a changed one. */
	filter?: FilterOf;
	/** The listed tools as the SDK returned them, to recognise an unchanged list. */
	listed: readonly Tool[];
}>;

/**
 * Why a tool is kept from the model, if it is: tools whose `_meta.ui.visibility` lacks "model" are
 * for MCP Apps only; tools that require task augmentation cannot run without the tasks extension,
 * which pi-mcp does not advertise.
 */
function hiddenReason(tool: Tool): string | undefined {
	const ui = (tool._meta as { ui?: { visibility?: unknown } } | undefined)?.ui;
	const visibility = ui?.visibility;
	if (Array.isArray(visibility) && !visibility.includes("model")) return "is for MCP Apps only and cannot be called by the model";
	if ((tool as { execution?: { taskSupport?: unknown } }).execution?.taskSupport === "required") {
		return "requires MCP tasks, which pi-mcp does not support";
	}
	return undefined;
}

/** An entry's `includeTools` / `excludeTools` and its file; undefined when it sets neither. */
export function filterFor(entry: ServerEntry | undefined): FilterOf | undefined {
	const config = entry?.config;
	if (!entry || !config || (config.includeTools === undefined && config.excludeTools === undefined)) return undefined;
	return { includeTools: config.includeTools, excludeTools: config.excludeTools, path: entry.source.path };
}

/** Why the filter hides `name`, from the configuration alone (before any listing), if it does. */
export function filteredRefusal(filter: FilterOf | undefined, name: string): string | undefined {
	const field = filter ? hiddenBy(filter, name) : undefined;
	return filter && field ? filteredReason(field, filter.path) : undefined;
}

/** For status: per field set, the listed tools it hides and how many (only once listed). */
export function hiddenSummary(filter: FilterOf | undefined, index: ToolIndex | undefined): ServerStatus["hiddenTools"] {
	if (!filter) return undefined;
	return FILTER_FIELDS.flatMap((field) => {
		if (filter[field] === undefined) return [];
		if (!index) return [{ field }];
		const names = [...index.filtered].flatMap(([name, by]) => (by === field ? [name] : []));
		return [{ field, count: names.length, names }];
	});
}

/** The refusal for a tool the user hid: it names the field and the file. */
export function filteredReason(field: FilterField, path: string): string {
	const how = field === "includeTools" ? 'is not matched by "includeTools"' : 'is hidden by "excludeTools"';
	return `${how} in ${path}; the user chose to keep it from the model`;
}

function buildIndex(tools: readonly Tool[], filter: FilterOf | undefined): ToolIndex {
	const hides = filter && filterTest(filter);
	const filtered = new Map(
		tools.flatMap((tool) => {
			const field = hides?.(tool.name);
			return field ? [[tool.name, field] as const] : [];
		}),
	);
	const hidden = new Map(
		tools.flatMap((tool) => {
			const field = filtered.get(tool.name);
			const reason = field && filter ? filteredReason(field, filter.path) : hiddenReason(tool);
			return reason ? [[tool.name, reason] as const] : [];
		}),
	);
	const visible = tools.filter((tool) => !hidden.has(tool.name));
	return { tools: visible, byName: new Map(visible.map((tool) => [tool.name, tool])), hidden, filtered, filter, listed: tools };
}

/** Why `name` (as sent, or in its escaped form as listings show it) is kept from the model, if it is. */
export function hiddenFor(index: ToolIndex, name: string): string | undefined {
	const exact = index.hidden.get(name);
	if (exact !== undefined || !name.includes("\\")) return exact;
	const escaped = [...index.hidden].filter(([each]) => escapeName(each) === name);
	return escaped.length === 1 ? escaped[0]?.[1] : undefined;
}

/**
 * The index for a new tools/list result: the previous one when the list did not change, so
 * `tools` stays the same array and what is cached on it (the search index) is kept. A legacy
 * server's list is refetched every time (no TTL), so equal content counts as unchanged.
 */
export function nextIndex(previous: ToolIndex | undefined, tools: readonly Tool[], filter?: FilterOf): ToolIndex {
	const sameFilter = JSON.stringify(previous?.filter) === JSON.stringify(filter);
	if (previous && sameFilter && (previous.listed === tools || JSON.stringify(previous.listed) === JSON.stringify(tools)))
		return previous;
	return buildIndex(tools, filter);
}
