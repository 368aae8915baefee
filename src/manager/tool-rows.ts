/**
 * The tools screen's rows: each tool with its hints (read-only, destructive…) and description, those the
 * user hid (`includeTools` / `excludeTools`) greyed in their place, saying which field hides them.
 */
import type { Tool } from "@modelcontextprotocol/client";
import { hintWords } from "../catalog/hints.ts";
import type { ServerStatus } from "../contracts.ts";
import { escapeName, oneLine } from "../output/text.ts";
import type { Row } from "./list.ts";
import { cell } from "./parts.ts";

type Fg = (color: "accent" | "dim" | "muted" | "warning", text: string) => string;

/** The tools a field of the entry hides, by name, with the field. */
function hiddenBy(status: ServerStatus | undefined): ReadonlyMap<string, string> {
	return new Map((status?.hiddenTools ?? []).flatMap(({ field, names }) => (names ?? []).map((name) => [name, field] as const)));
}

/**
 * The rows for `visible` (the model's tools matching `query`, best first) and the hidden tools of `listed` whose
 * name or description holds it. Without a query every tool keeps the server's order, hidden ones included.
 */
export function toolRows(
	fg: Fg,
	visible: readonly Tool[],
	listed: readonly Tool[],
	status: ServerStatus | undefined,
	query: string,
): Readonly<{ rows: Row[]; hidden: ReadonlySet<string> }> {
	const by = hiddenBy(status);
	const shown = new Set(visible.map((tool) => tool.name));
	const needle = query.toLowerCase();
	const hidden = listed.filter(
		(tool) =>
			by.has(tool.name) && !shown.has(tool.name) && `${tool.name}\n${tool.description ?? ""}`.toLowerCase().includes(needle),
	);
	const hiddenNames = new Set(hidden.map((tool) => tool.name));
	const tools = needle
		? [...visible, ...hidden]
		: [
				...listed.filter((tool) => shown.has(tool.name) || hiddenNames.has(tool.name)),
				...visible.filter((tool) => !listed.includes(tool)),
			];
	const labels = tools.map((tool) => escapeName(tool.name));
	const column = Math.min(28, Math.max(0, ...labels.map((label) => label.length)) + 2);
	const rows = tools.map((tool, at): Row => {
		const label = labels[at] ?? "";
		const field = hiddenNames.has(tool.name) ? by.get(tool.name) : undefined;
		const hints = hintWords(tool);
		const about = [hints.length > 0 ? `[${hints.join(", ")}]` : "", oneLine(tool.description, 200)].filter(Boolean).join(" ");
		return {
			value: tool.name,
			text: (width, selected) => {
				if (field !== undefined) {
					return fg(selected ? "accent" : "dim", `${cell(label, column)}(hidden by ${field}) ${about}`);
				}
				const name = selected ? fg("accent", label) : label;
				return width < column + 10 ? name : `${cell(name, column)}${fg("muted", about)}`;
			},
		};
	});
	return { rows, hidden: hiddenNames };
}
