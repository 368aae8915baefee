/**
 * What a server's tools/list becomes: the tools the model may see, by name, and those kept from it
 * with the reason. Pure.
 */
import type { Tool } from "@modelcontextprotocol/client";

export type ToolIndex = Readonly<{
	tools: readonly Tool[];
	byName: ReadonlyMap<string, Tool>;
	/** Tools kept from the model, with the reason. */
	hidden: ReadonlyMap<string, string>;
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

function buildIndex(tools: readonly Tool[]): ToolIndex {
	const hidden = new Map(
		tools.flatMap((tool) => {
			const reason = hiddenReason(tool);
			return reason ? [[tool.name, reason] as const] : [];
		}),
	);
	const visible = tools.filter((tool) => !hidden.has(tool.name));
	return { tools: visible, byName: new Map(visible.map((tool) => [tool.name, tool])), hidden, listed: tools };
}

/**
 * The index for a new tools/list result: the previous one when the list did not change, so
 * `tools` stays the same array and what is cached on it (the search index) is kept. A legacy
 * server's list is refetched every time (no TTL), so equal content counts as unchanged.
 */
export function nextIndex(previous: ToolIndex | undefined, tools: readonly Tool[]): ToolIndex {
	if (previous && (previous.listed === tools || JSON.stringify(previous.listed) === JSON.stringify(tools))) return previous;
	return buildIndex(tools);
}
