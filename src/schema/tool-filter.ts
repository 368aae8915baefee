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

/** The pattern as an anchored expression (only syntax characters are escaped: `\-` is an error with `u`). */
function expression(pattern: string): RegExp {
	const source = [...pattern]
		.map((char) => (char === "*" ? "[\\s\\S]*" : char === "?" ? "[\\s\\S]" : char.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
		.join("");
	return new RegExp(`^${source}$`, "u");
}

export function globMatch(pattern: string, name: string): boolean {
	return expression(pattern).test(name);
}

/**
 * The filter as a test of one name: the field that hides it, or undefined when the tool exists for the
 * model. The patterns are compiled here, once: a listing tests every tool with the same test (no cache
 * outlives it).
 */
export function filterTest(filter: ToolFilter): (name: string) => FilterField | undefined {
	const include = filter.includeTools?.map(expression);
	const exclude = filter.excludeTools?.map(expression) ?? [];
	return (name) => {
		if (include && !include.some((pattern) => pattern.test(name))) return "includeTools";
		if (exclude.some((pattern) => pattern.test(name))) return "excludeTools";
		return undefined;
	};
}

/** The field that hides `name`, or undefined when the tool exists for the model. */
export function hiddenBy(filter: ToolFilter, name: string): FilterField | undefined {
	return filterTest(filter)(name);
}

/** Whether the filter can hide anything. */
export const filters = (filter: ToolFilter): boolean =>
	filter.includeTools !== undefined || (filter.excludeTools?.length ?? 0) > 0;
