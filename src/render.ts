/**
 * Compact TUI rendering of `mcp` calls and results. Pure functions of their inputs; schemas and
 * long lists stay in the agent content and only their size shows here.
 */
import type { Theme } from "@earendil-works/pi-coding-agent";
import { type Component, Text, truncateToWidth } from "@earendil-works/pi-tui";
import { escapeName, formatBytes, stripTerminal } from "./output/text.ts";
import type { OutputInfo } from "./output.ts";

export type McpArgs = Readonly<{
	action?: string;
	server?: string;
	tool?: string;
	args?: unknown;
	query?: string;
	limit?: number;
	uri?: string;
	prompt?: string;
	argument?: string;
	value?: string;
}>;

export type McpDetails = Readonly<{
	action: string;
	server?: string;
	tool?: string;
	/** Characters of text the model received. */
	textChars?: number;
	images?: number;
	error?: string;
	/** The user declined the call (`tool/confirm.ts`): it was not run. */
	declined?: boolean;
	/** Sizes, truncation and overflow files of the result the model received. */
	output?: OutputInfo;
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

/** Escapes stripped and every run of whitespace (newlines included) made one space. */
function flat(text: string): string {
	return stripTerminal(text).replace(/\s+/g, " ").trim();
}

function argsPreview(args: unknown): string {
	if (args === undefined) return "";
	const text = typeof args === "string" ? args : JSON.stringify(args);
	return flat(text ?? "");
}

function callParts(args: McpArgs): { action: string; target: string; extra: string } {
	const action = args.action === undefined ? "…" : flat(String(args.action));
	// Names shown escaped, never flattened: a newline or a bidi control in a name stays visible as such.
	const name = args.tool ?? args.prompt ?? args.uri;
	const server = args.server ? escapeName(String(args.server)) : "";
	const target = server && name ? `${server}/${escapeName(String(name))}` : server;
	const extra =
		action === "call" || action === "prompt"
			? argsPreview(args.args)
			: action === "tools" && args.query
				? `"${flat(args.query)}"`
				: action === "complete" && args.argument
					? `${flat(args.argument)}=${flat(args.value ?? "")}`
					: "";
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

/** Collapsed: one line of size, images, truncation and overflow path (or the error). */
export function resultSummary(details: McpDetails | undefined, text: string, isError: boolean): string {
	if (isError) return flat(stripTerminal(details?.error ?? text).split("\n")[0] ?? "") || "error";
	const output = details?.output;
	const parts = [formatBytes(output?.textBytes ?? Buffer.byteLength(text))];
	const images = output?.images ?? details?.images ?? 0;
	if (images > 0) parts.push(`${images} image${images === 1 ? "" : "s"}`);
	if (output?.truncated) parts.push(`truncated to ${formatBytes(output.truncated.shownBytes)}`);
	if (output?.overflowPath) parts.push(`full: ${output.overflowPath}`);
	const others = (output?.saved ?? []).filter((path) => path !== output?.overflowPath).length;
	if (others > 0) parts.push(`${others} file${others === 1 ? "" : "s"} saved`);
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
		return new OneLine(theme.fg("warning", progress ? flat(progress) : "Working…"));
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
