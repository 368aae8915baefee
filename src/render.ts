/**
 * Compact TUI rendering of `mcp` calls and results. Pure functions of their inputs; schemas and
 * long lists stay in the agent content and only their size shows here.
 */
import type { Theme } from "@earendil-works/pi-coding-agent";
import { type Component, Text, truncateToWidth } from "@earendil-works/pi-tui";
import { stripTerminal } from "./output.ts";

export type McpArgs = Readonly<{
	action?: string;
	server?: string;
	tool?: string;
	args?: unknown;
	query?: string;
	limit?: number;
}>;

export type McpDetails = Readonly<{
	action: string;
	server?: string;
	tool?: string;
	/** Characters of text the model received. */
	textChars?: number;
	images?: number;
	error?: string;
}>;

/** One line that never wraps: cut to the width at render time. */
class OneLine implements Component {
	readonly #line: string;
	constructor(line: string) {
		this.#line = line;
	}
	render(width: number): string[] {
		return [truncateToWidth(this.#line, Math.max(1, width))];
	}
	invalidate(): void {}
}

function argsPreview(args: unknown): string {
	if (args === undefined) return "";
	const text = typeof args === "string" ? args : JSON.stringify(args);
	return stripTerminal(text ?? "").replace(/\s+/g, " ");
}

function callParts(args: McpArgs): { action: string; target: string; extra: string } {
	const action = args.action ?? "…";
	const target = args.server ? stripTerminal(args.tool ? `${args.server}/${args.tool}` : args.server) : "";
	const extra =
		action === "call" ? argsPreview(args.args) : action === "tools" && args.query ? `"${stripTerminal(args.query)}"` : "";
	return { action, target, extra };
}

/** The call line as plain text, e.g. `mcp call jira/search_issues {"q":"…"}`. */
export function callLine(args: McpArgs): string {
	const { action, target, extra } = callParts(args);
	return [`mcp ${action}`, target, extra].filter(Boolean).join(" ");
}

export function renderCall(args: McpArgs, theme: Theme): Component {
	const { action, target, extra } = callParts(args);
	const line = [
		theme.fg("toolTitle", theme.bold(`mcp ${action}`)),
		target ? theme.fg("accent", target) : "",
		extra ? theme.fg("muted", extra) : "",
	]
		.filter(Boolean)
		.join(" ");
	return new OneLine(line);
}

function sizeLabel(chars: number): string {
	return chars < 1024 ? `${chars} chars` : `${(chars / 1024).toFixed(1)}K chars`;
}

/** Collapsed: one line of size and images (or the error); expanded: the text the model saw. */
export function resultSummary(details: McpDetails | undefined, text: string, isError: boolean): string {
	if (isError) return (details?.error ?? text).split("\n")[0] ?? "error";
	const parts = [sizeLabel(details?.textChars ?? text.length)];
	if (details?.images) parts.push(`${details.images} image${details.images === 1 ? "" : "s"}`);
	return parts.join(" · ");
}

export function renderResult(
	result: Readonly<{ content: readonly { type: string; text?: string }[]; details?: McpDetails }>,
	options: Readonly<{ expanded: boolean; isPartial: boolean }>,
	theme: Theme,
	isError: boolean,
): Component {
	if (options.isPartial) {
		const progress = result.content.find((block) => block.type === "text")?.text;
		return new OneLine(theme.fg("warning", progress ? stripTerminal(progress) : "Working…"));
	}
	const text = result.content
		.filter((block) => block.type === "text")
		.map((block) => block.text ?? "")
		.join("\n");
	const summary = resultSummary(result.details, text, isError);
	const colour = isError ? "error" : "muted";
	if (!options.expanded) return new OneLine(theme.fg(colour, stripTerminal(summary)));
	return new Text(theme.fg(isError ? "error" : "toolOutput", stripTerminal(text)), 0, 0);
}
