/**
 * What every action's listing shares: the session the actions run in, their result shape, one-line
 * texts, paging, and results built from presented blocks. Imported by `actions.ts` and `discover.ts`.
 */
import type { AgentToolResult } from "@earendil-works/pi-coding-agent";
import { type PiBlock, presentListing } from "./content.ts";
import type { Runtime, Session } from "./contracts.ts";
import type { OverflowStore } from "./output.ts";
import type { McpDetails } from "./render.ts";
import type { ConfigSnapshot } from "./schema.ts";
import { oneLine } from "./text.ts";
import { MAX_LIMIT, type Params } from "./tool.ts";

export type Result = AgentToolResult<McpDetails>;

const DEFAULT_LIMIT = 50;
const DESCRIPTION_CHARS = 120;

/** Text on one line, escapes stripped, cut at a word boundary near `max` characters with `…`. */
export function shortText(text: string | undefined, max = DESCRIPTION_CHARS): string {
	const line = oneLine(text, Number.POSITIVE_INFINITY);
	if (line.length <= max) return line;
	const head = line.slice(0, max - 1);
	const space = head.lastIndexOf(" ");
	// A word boundary unless the only one is far back (one very long word): then cut inside it.
	const cut = space >= max * 0.6 ? head.slice(0, space) : head;
	return `${cut.replace(/[\s,;:.–—-]+$/u, "")}…`;
}

/** `name — one-line description`. */
export function toolEntry(name: string, description: string | undefined): string {
	const text = shortText(description);
	return text ? `${name} — ${text}` : name;
}

/** A page of a list: `limit` items from the numeric `cursor` on, and how to get the next page. */
export function page<T>(items: readonly T[], params: Params): { shown: readonly T[]; more: string } {
	const offset = params.cursor === undefined ? 0 : Number.parseInt(params.cursor, 10);
	if (!Number.isInteger(offset) || offset < 0)
		throw new Error(`mcp ${params.action}: "cursor" must be a cursor from a previous page`);
	const limit = params.limit ?? DEFAULT_LIMIT;
	if (limit > MAX_LIMIT) throw new Error(`mcp ${params.action}: "limit" is at most ${MAX_LIMIT}`);
	const shown = items.slice(offset, offset + limit);
	const rest = items.length - offset - shown.length;
	return { shown, more: rest > 0 ? `\n… ${rest} more: cursor ${offset + shown.length}` : "" };
}

export function blocksResult(details: McpDetails, content: PiBlock[], info: McpDetails["output"], isError = false): Result {
	const text = content.find((block) => block.type === "text");
	return {
		content: [...content],
		details: { ...details, textChars: text?.type === "text" ? text.text.length : 0, images: info?.images, output: info },
		...(isError ? { isError: true } : {}),
	};
}

/** A page of a listing as a result: header, lines and the next-page hint through `presentListing`. */
export async function listingResult(session: Session, params: Params, header: string, lines: readonly string[], more: string) {
	const server = params.server ?? "";
	const presented = await presentListing([header, ...lines, ...(more ? [more.trim()] : [])], session.overflow, server);
	return blocksResult({ action: params.action, server }, presented.content, presented.info);
}
