/**
 * Tab after a space in `/mcp …`: Pi's editor asks for file paths there (a forced completion skips the
 * command's own), so this wraps the editor's provider to answer a forced `/mcp ` completion with the
 * command's argument completions, as typing does, and nothing else.
 */
import type { AutocompleteProvider } from "@earendil-works/pi-tui";

export function mcpTab(current: AutocompleteProvider): AutocompleteProvider {
	const ours = (lines: readonly string[], line: number, col: number) => /^\s*\/mcp\s/.test((lines[line] ?? "").slice(0, col));
	return {
		...(current.triggerCharacters ? { triggerCharacters: current.triggerCharacters } : {}),
		getSuggestions: (lines, line, col, options) =>
			current.getSuggestions(lines, line, col, ours(lines, line, col) ? { ...options, force: false } : options),
		applyCompletion: (lines, line, col, item, prefix) => current.applyCompletion(lines, line, col, item, prefix),
		shouldTriggerFileCompletion: (lines, line, col) =>
			ours(lines, line, col) || (current.shouldTriggerFileCompletion?.(lines, line, col) ?? true),
	};
}
