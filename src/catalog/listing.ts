/**
 * Tool listings and the paging every listing shares. The `tools` action: one server's tools
 * listed, or ranked by a query (`search/rank.ts`, loaded on the first query), or a query searched across
 * every enabled server; the same listing for `pi-mcp tools` and `/mcp tools`, and the matching tool
 * definitions for the `/mcp` manager. Listings go through the output rules (`presentListing`:
 * escapes stripped, 50 KiB / 2,000 lines inline), never through the 2,000-character error sanitiser,
 * so a page of 50 tools shows 50 lines and its paging line.
 */
import type { AgentToolResult } from "@earendil-works/pi-coding-agent";
import type { Tool } from "@modelcontextprotocol/client";
import { once, settledWithin } from "../async.ts";
import type { Session } from "../contracts.ts";
import { type PiBlock, presentListing, toolEntry } from "../output/content.ts";
import { escapeName, shortText } from "../output/text.ts";
import type { McpDetails } from "../render.ts";
import type { Hit, SearchIndex, SearchTool, Source } from "../search/rank.ts";
import { instructionLines, pendingLines, withHints } from "./hints.ts";
import { MAX_LIMIT, type Params } from "./requests.ts";

/**
 * The search's modules, imported once for all callers: under Pi's loader (jiti) a second `import()` of a
 * module still loading can get it half made (a re-exported name reads as undefined), and searches overlap.
 */
export const loadSearch = once(() => import("../search/rank.ts"));
const loadWeak = once(() => import("../search/weak.ts"));

export type Result = AgentToolResult<McpDetails>;

const DEFAULT_LIMIT = 50;
/** Results of a search shown when `limit` is not given (a listing shows 50). */
export const SEARCH_LIMIT = 10;

/** A page of a list: `limit` items from the numeric `cursor` on, how many are left and where they begin. */
export function page<T>(
	items: readonly T[],
	params: Params,
): Readonly<{ shown: readonly T[]; rest: number; next: number; more: string }> {
	const offset = params.cursor === undefined ? 0 : Number.parseInt(params.cursor, 10);
	if (!Number.isInteger(offset) || offset < 0)
		throw new Error(`mcp ${params.action}: "cursor" must be a cursor from a previous page`);
	const limit = params.limit ?? DEFAULT_LIMIT;
	if (limit > MAX_LIMIT) throw new Error(`mcp ${params.action}: "limit" is at most ${MAX_LIMIT}`);
	const shown = items.slice(offset, offset + limit);
	const rest = items.length - offset - shown.length;
	const next = offset + shown.length;
	return { shown, rest, next, more: rest > 0 ? `\n… ${rest} more: cursor ${next}` : "" };
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

const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? "" : "s"}`;
const matchText = (n: number, query: string): string =>
	`${count(n, "tool")} ${n === 1 ? "matches" : "match"} "${shortText(query, 60)}"`;

/** One page of a `tools` listing as records: its header, one line per tool, and the rest after it. */
type Listing = Readonly<{ header: string; lines: readonly string[]; rest: number; next: number; more: string }>;

/**
 * Runs `tools` for one server (`server` given) or, with a query and no server, for every enabled server.
 * The server lists its tools anew (a call the early start listed for gets that listing).
 */
export async function toolsAction(
	session: Session,
	params: Params,
	server: string | undefined,
	signal: AbortSignal | undefined,
): Promise<Result> {
	const query = params.query?.trim() ? params.query : undefined;
	if (server === undefined) {
		if (query === undefined)
			throw new Error(
				'mcp tools: give "server" to list its tools, or "query" to search every server; action "status" lists servers',
			);
		return searchAll(session, params, query, signal);
	}
	const listing = await serverListing(session, params, server, query, signal);
	const told = instructionLines(escapeName(server), session.runtime.instructionsOnce(server));
	const withheld = pendingLines(session.runtime.status(), [server]);
	return listingResult(session, params, listing.header, [...listing.lines, ...told, ...withheld], listing.more);
}

/** One server's tools, or those matching `query` best first, one page of them. */
async function serverListing(
	session: Session,
	params: Params,
	server: string,
	query: string | undefined,
	signal: AbortSignal | undefined,
): Promise<Listing> {
	const tools = await session.runtime.tools(server, signal);
	if (query === undefined) {
		const paged = page(tools, params);
		const lines = paged.shown.map((tool) => toolEntry(withHints(escapeName(tool.name), tool), tool.description));
		return { ...paged, header: `${escapeName(server)}: ${count(tools.length, "tool")}`, lines };
	}
	return rankedListing([{ server, tools }], query, params, true);
}

/**
 * A search's result, one page: its header, a line per tool shown (`server/tool` across servers), the
 * weak-match lines and the next-page hint. `single`: one server's search. Pure; bench figure 7
 * measures the same text.
 */
export async function rankedListing<T extends SearchTool>(
	sources: readonly Source<T>[],
	query: string,
	params: Params,
	single: boolean,
): Promise<Listing> {
	const { indexOf, search } = await loadSearch();
	const index = await indexOf(sources);
	const total = sources.reduce((sum, source) => sum + source.tools.length, 0);
	const hits = search(index, query, total);
	const paged = page(hits, { ...params, limit: params.limit ?? SEARCH_LIMIT });
	const named = (hit: Hit<T>) => (single ? escapeName(hit.tool.name) : `${escapeName(hit.server)}/${escapeName(hit.tool.name)}`);
	const lines = paged.shown.map((hit) => toolEntry(withHints(named(hit), hit.tool), hit.tool.description));
	const server = escapeName(sources[0]?.server ?? "");
	const across = `across ${count(sources.length, "server")}`;
	const header = single
		? hits.length > 0
			? `${server}: ${matchText(hits.length, query)}, best first`
			: `${server}: no tool matches "${shortText(query, 60)}" (${count(total, "tool")}; list them without "query")`
		: hits.length > 0
			? `${matchText(hits.length, query)} ${across}, best first`
			: `No tool matches "${shortText(query, 60)}" ${across}`;
	const used = [header, ...lines].reduce((sum, line) => sum + line.length + 1, 0);
	const weak = await weakLines({ index, query, hits, shown: paged.shown, sources, params, single, used });
	return { ...paged, header, lines: [...lines, ...weak] };
}

type Found<T extends SearchTool> = Readonly<{
	index: SearchIndex<T>;
	query: string;
	hits: readonly Hit<T>[];
	shown: readonly Hit<T>[];
	sources: readonly Source<T>[];
	params: Params;
	single: boolean;
	/** Characters the result's header and lines take already. */
	used: number;
}>;

/**
 * The weak-match lines of a search result's first page (`search/weak.ts` says when a match is weak):
 * one line saying so, then further tool names, one line per server (across servers, `server: `
 * first), the whole result within `WEAK_RESULT_CHARS`. None for a strong match, or on a later page.
 */
async function weakLines<T extends SearchTool>(found: Found<T>): Promise<string[]> {
	const { index, query, hits, shown, sources, params, single, used } = found;
	const { isWeak, relatedNames, WEAK_RESULT_CHARS } = await loadWeak();
	if (params.cursor !== undefined || !isWeak(index, query, hits)) return [];
	const lead =
		hits.length > 0
			? "Weak match: no tool above names what the query asks for. Related tools by name, to judge by meaning:"
			: "Tools by name, to judge by meaning:";
	const budget = WEAK_RESULT_CHARS - used - lead.length - 40; // 40: the tail and the paging line
	const groups = relatedNames(index, query, hits, new Set(shown.map((hit) => hit.tool)), escapeName, budget);
	if (groups.length === 0) return [];
	const rest = sources.reduce((sum, source) => sum + source.tools.length, 0) - shown.length;
	const listed = groups.reduce((sum, group) => sum + group.names.length, 0);
	const tail = listed < rest ? ` … (${rest - listed} more${single ? `; list them without "query"` : ""})` : "";
	const lines = groups.map((group) => `${single ? "" : `${escapeName(group.server)}: `}${group.names.join(" ")}`);
	return [lead, ...lines.slice(0, -1), `${lines.at(-1) ?? ""}${tail}`];
}

type Searched =
	| Readonly<{ server: string; tools: readonly Tool[] }>
	| Readonly<{ server: string; error: Error }>
	| Readonly<{ server: string; late: true }>;

/**
 * How long a search across servers waits for servers still starting or listing, from when the call
 * begins executing. Those that take longer are named in the answer and keep starting: a later search
 * (or a call naming the server) includes them. One slow server never holds back the others' results.
 */
export const SEARCH_WAIT_MS = 1800;
/** When no server has listed within `SEARCH_WAIT_MS`, the search waits for the first one, up to this long in all. */
export const SEARCH_FIRST_MS = 10_000;
/**
 * Once a server that was starting has listed, the search waits this long after each answer for the next
 * one, and answers without the servers still starting when none came: servers started together finish
 * together, so the wait ends at most this long after the last healthy server listed.
 */
export const SEARCH_QUIET_MS = 200;

/**
 * When a search across servers stops waiting: all have answered, or a quiet gap of `SEARCH_QUIET_MS`
 * followed the last answer (armed by the first listing of a server that was starting; a fast failure
 * does not arm it), or the budget ran out. It owns the gap's timer and whether any server has listed.
 */
class SearchWait {
	readonly quiet: Promise<void>;
	#end: () => void = () => undefined;
	#timer?: NodeJS.Timeout;
	#listed = false;

	constructor() {
		this.quiet = new Promise<void>((resolve) => {
			this.#end = resolve;
		});
	}

	/** A server answered: `listed` (its tools, not a failure), `starting` (it was not ready when the search began). */
	answered(listed: boolean, starting: boolean): void {
		this.#listed ||= listed;
		if (this.#timer === undefined && !(listed && starting)) return;
		clearTimeout(this.#timer);
		this.#timer = setTimeout(this.#end, SEARCH_QUIET_MS);
		this.#timer.unref();
	}

	get listed(): boolean {
		return this.#listed;
	}

	stop(): void {
		clearTimeout(this.#timer);
	}
}

/** Each server's tools, or its failure, or `late` for one still starting when the wait ended (`SearchWait`). */
async function listAll(
	session: Session,
	names: readonly string[],
	signal: AbortSignal | undefined,
): Promise<readonly Searched[]> {
	const ready = new Set(session.runtime.status().flatMap((status) => (status.state === "ready" ? [status.name] : [])));
	const wait = new SearchWait();
	const listings = names.map((server) =>
		session.runtime.tools(server, signal).then(
			(tools): Searched => {
				wait.answered(true, !ready.has(server));
				return { server, tools };
			},
			(error: Error): Searched => {
				wait.answered(false, !ready.has(server));
				return { server, error };
			},
		),
	);
	// The budget ends the wait too. When no server has listed by then (a loaded machine), an answer with
	// nothing in it would cost the model another call: the first server to list (or every one failing) and a
	// quiet gap after it end it instead, up to `SEARCH_FIRST_MS` from the start.
	const all = Promise.all(listings);
	const first = Promise.any(listings.map((listing) => listing.then((entry) => ("tools" in entry ? entry : Promise.reject()))));
	const budget = settledWithin(all, SEARCH_WAIT_MS).then(() =>
		wait.listed
			? undefined
			: settledWithin(
					first.then(() => wait.quiet),
					SEARCH_FIRST_MS - SEARCH_WAIT_MS,
				),
	);
	const late = Promise.race([all, wait.quiet, budget]).then(() => wait.stop());
	return Promise.all(
		listings.map((listing, i) => Promise.race([listing, late.then((): Searched => ({ server: names[i] ?? "", late: true }))])),
	);
}

/**
 * A query over every enabled server. Servers not connected yet are connected now (the early start began
 * them while the model wrote the call), in parallel, each bounded by its own timeouts; the answer comes from
 * those that listed before the wait ended (`SearchWait`: a quiet gap after the last answer, the budget, or
 * when none had listed, the first to list within `SEARCH_FIRST_MS`), with a line naming each server still
 * starting and each that failed (its error's first line).
 */
async function searchAll(session: Session, params: Params, query: string, signal: AbortSignal | undefined): Promise<Result> {
	const names = session.runtime
		.status()
		.filter((status) => status.state !== "disabled" && status.state !== "invalid")
		.map((status) => status.name);
	if (names.length === 0) throw new Error('mcp tools: no MCP server is enabled; action "status" shows the configuration');
	const searched = await listAll(session, names, signal);
	if (signal?.aborted) throw new Error("mcp tools: the search was cancelled");
	const sources = searched.flatMap((entry) => ("tools" in entry ? [entry] : []));
	const failed = searched.flatMap((entry) => ("error" in entry ? [entry] : []));
	const waiting = searched.flatMap((entry) => ("late" in entry ? [entry.server] : []));
	const ranked =
		sources.length === 0 && waiting.length > 0
			? { header: `No server has listed its tools within ${SEARCH_FIRST_MS / 1000} s`, lines: [], more: "" }
			: await rankedListing(sources, query, params, false);
	const lines = [
		...ranked.lines,
		...pendingLines(session.runtime.status(), names),
		...failedLines(failed),
		...(waiting.length > 0
			? [
					`still starting, not searched: ${waiting.map(escapeName).join(", ")} (search again in a moment, or name the server, to include ${waiting.length === 1 ? "it" : "them"})`,
				]
			: []),
	];
	return listingResult(session, params, ranked.header, lines, ranked.more);
}

const failedLines = (failed: readonly Readonly<{ server: string; error: Error }>[]): string[] =>
	failed.map((entry) => `${escapeName(entry.server)}: not searched — ${shortText(entry.error.message.split("\n")[0], 300)}`);

/**
 * The `tools` action's listing for a query, every page of it (its header and one line per tool): the
 * action's search decides what matches. For `pi-mcp tools`; the caller has checked the server.
 */
export async function toolListing(
	session: Session,
	server: string,
	query: string | undefined,
	signal?: AbortSignal,
): Promise<Readonly<{ header: string; lines: readonly string[] }>> {
	const pages = async (cursor: string | undefined, found: readonly string[]): Promise<Listing> => {
		const params: Params = { action: "tools", server, query, limit: MAX_LIMIT, cursor };
		const listing = await serverListing(session, params, server, query?.trim() ? query : undefined, signal);
		const lines = [...found, ...listing.lines];
		return listing.rest > 0 ? pages(String(listing.next), lines) : { ...listing, lines };
	};
	const { header, lines } = await pages(undefined, []);
	return { header, lines };
}

/** The definitions of the tools in `toolListing`, in its order: the same search, on the same cached index. */
export async function matchingTools(
	session: Session,
	server: string,
	query: string | undefined,
	signal?: AbortSignal,
): Promise<readonly Tool[]> {
	const tools = await session.runtime.tools(server, signal);
	if (!query?.trim()) return tools;
	const { indexOf, search } = await loadSearch();
	return search(await indexOf([{ server, tools }]), query, tools.length).map((hit) => hit.tool);
}

/** `/mcp tools <server>`: the same lines as the model's listing, through the same output rules. */
export async function userToolList(session: Session, server: string, tools: readonly Tool[]): Promise<string> {
	const body =
		tools.length > 0
			? tools.map((tool) => `  ${toolEntry(withHints(escapeName(tool.name), tool), tool.description)}`)
			: ["  (no tools)"];
	const header = `${escapeName(server)}: ${count(tools.length, "tool")}`;
	return (await presentListing([header, ...body], session.overflow, `${server}-tools`)).text;
}
