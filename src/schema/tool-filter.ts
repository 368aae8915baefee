/**
 * `includeTools` / `excludeTools`: which of a server's tools exist for the model. Patterns are globs
 * (`*` any run of characters, `?` one character) matched against the whole tool name as the server
 * sends it, case-sensitively. With `includeTools`, only matching tools exist; `excludeTools` then
 * removes matches (the fields' shape is checked in `schema.ts`, which loads at start; this file only
 * when a server's tools are listed). Pure.
 */

export const FILTER_FIELDS = ["includeTools", "excludeTools"] as const;
export type FilterField = (typeof FILTER_FIELDS)[number];

export type ToolFilter = Readonly<{ includeTools?: readonly string[]; excludeTools?: readonly string[] }>;

const compiled = new Map<string, RegExp>();

/** The pattern as an anchored expression; bounded cache (configurations hold few patterns). */
function expression(pattern: string): RegExp {
	const held = compiled.get(pattern);
	if (held) return held;
	const source = [...pattern]
		.map((char) => (char === "*" ? "[\\s\\S]*" : char === "?" ? "[\\s\\S]" : char.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")))
		.join("");
	const made = new RegExp(`^${source}$`, "u");
	if (compiled.size >= 512) compiled.clear();
	compiled.set(pattern, made);
	return made;
}

export function globMatch(pattern: string, name: string): boolean {
	return expression(pattern).test(name);
}

/** The field that hides `name`, or undefined when the tool exists for the model. */
export function hiddenBy(filter: ToolFilter, name: string): FilterField | undefined {
	const { includeTools, excludeTools } = filter;
	if (includeTools && !includeTools.some((pattern) => globMatch(pattern, name))) return "includeTools";
	if (excludeTools?.some((pattern) => globMatch(pattern, name))) return "excludeTools";
	return undefined;
}

/** Whether the filter can hide anything. */
export const filters = (filter: ToolFilter): boolean =>
	filter.includeTools !== undefined || (filter.excludeTools?.length ?? 0) > 0;
