/**
 * The `confirm` field of a server entry: which of its tool calls wait for the user's yes. "none" (the
 * default: Pi itself never asks), "writes" (every tool the server does not mark read-only), "destructive"
 * (Pi's documented narrower rule for MCP annotations, the one Codex uses), "all" (every tool call), or a
 * list of tool-name patterns (globs, matched as `schema/tool-filter.ts` does).
 */

export type ConfirmSetting = "none" | "writes" | "destructive" | "all" | readonly string[];

/** MCP tool annotations as far as the rules read them. */
export type Hints = Readonly<{ readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean }>;

/** "writes": every tool the server does not mark read-only (no hints: not read-only, the MCP default). */
export function writes(hints: Hints | undefined): boolean {
	return hints?.readOnlyHint !== true;
}

/**
 * "destructive", Pi's documented rule (`docs/extensions.md`, "Tool Exposure"): ask when the tool says it is
 * destructive, or when it does not say it is read-only and says (or leaves unsaid) that it is destructive or
 * reaches an open world. Missing hints take the MCP defaults.
 */
export function destructive(hints: Hints | undefined): boolean {
	return (
		hints?.destructiveHint === true ||
		(hints?.readOnlyHint !== true && ((hints?.destructiveHint ?? true) || (hints?.openWorldHint ?? true)))
	);
}
