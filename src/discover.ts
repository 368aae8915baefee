/**
 * The `tools` action: one server's tools listed, or ranked by a query (`search.ts`), or a query
 * searched across every enabled server. Listings go through the output rules (`presentListing`:
 * escapes stripped, 50 KiB / 2,000 lines inline), never through the 2,000-character error sanitiser,
 * so a page of 50 tools shows 50 lines and its paging line.
 */
import type { Tool } from "@modelcontextprotocol/client";
import type { Session } from "./contracts.ts";
import { listingResult, page, type Result, shortText, toolEntry } from "./listing.ts";
import { indexOf, search } from "./search.ts";
import { escapeName } from "./text.ts";
import type { Params } from "./tool.ts";

/** Results of a search shown when `limit` is not given (a listing shows 50). */
export const SEARCH_LIMIT = 10;

const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? "" : "s"}`;
const matchText = (n: number, query: string): string =>
	`${count(n, "tool")} ${n === 1 ? "matches" : "match"} "${shortText(query, 60)}"`;

/** Runs `tools` for one server (`server` given) or, with a query and no server, for every enabled server. */
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
	const tools = await session.runtime.tools(server, signal);
	if (query === undefined) {
		const { shown, more } = page(tools, params);
		const lines = shown.map((tool) => toolEntry(escapeName(tool.name), tool.description));
		return listingResult(session, params, `${escapeName(server)}: ${count(tools.length, "tool")}`, lines, more);
	}
	const hits = search(indexOf([{ server, tools }]), query, tools.length);
	const { shown, more } = page(hits, { ...params, limit: params.limit ?? SEARCH_LIMIT });
	const lines = shown.map((hit) => toolEntry(escapeName(hit.tool.name), hit.tool.description));
	const header =
		hits.length > 0
			? `${escapeName(server)}: ${matchText(hits.length, query)}, best first`
			: `${escapeName(server)}: no tool matches "${shortText(query, 60)}" (${count(tools.length, "tool")}; list them without "query")`;
	return listingResult(session, params, header, lines, more);
}

type Searched = Readonly<{ server: string; tools: readonly Tool[] }> | Readonly<{ server: string; error: Error }>;

/**
 * A query over every enabled server. Servers not connected yet are connected now, in parallel, each
 * bounded by its own setup and request timeouts; one that fails adds a line naming it and its
 * error, and the others still answer.
 */
async function searchAll(session: Session, params: Params, query: string, signal: AbortSignal | undefined): Promise<Result> {
	const names = session.runtime
		.status()
		.filter((status) => status.state !== "disabled" && status.state !== "invalid")
		.map((status) => status.name);
	if (names.length === 0) throw new Error('mcp tools: no MCP server is enabled; action "status" shows the configuration');
	const searched = await Promise.all(
		names.map((server) =>
			session.runtime.tools(server, signal).then(
				(tools): Searched => ({ server, tools }),
				(error: Error): Searched => ({ server, error }),
			),
		),
	);
	if (signal?.aborted) throw new Error("mcp tools: the search was cancelled");
	const sources = searched.flatMap((entry) => ("tools" in entry ? [entry] : []));
	const failed = searched.flatMap((entry) => ("error" in entry ? [entry] : []));
	const total = sources.reduce((sum, source) => sum + source.tools.length, 0);
	const hits = search(indexOf(sources), query, total);
	const { shown, more } = page(hits, { ...params, limit: params.limit ?? SEARCH_LIMIT });
	const lines = [
		...shown.map((hit) => toolEntry(`${escapeName(hit.server)}/${escapeName(hit.tool.name)}`, hit.tool.description)),
		...failed.map((entry) => `${escapeName(entry.server)}: not searched — ${shortText(entry.error.message.split("\n")[0], 300)}`),
	];
	const across = `across ${count(sources.length, "server")}`;
	const header =
		hits.length > 0
			? `${matchText(hits.length, query)} ${across}, best first`
			: `No tool matches "${shortText(query, 60)}" ${across}`;
	return listingResult(session, params, header, lines, more);
}
