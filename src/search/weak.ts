/**
 * Weak matches (issue #20, item 3). Words alone cannot rank a query that shares no word with the tool
 * it wants (`bookmark a repository` for `star_repository`); the model reading the result can, if it
 * sees the names. So when the best match is weak, the result adds further tool names, compactly and
 * within a character budget: the searched server's, or across servers those of the best-matching
 * servers first. Lexical and local: no network, no model.
 *
 * The measure: a query's ideas (its words, a typed phrase counting as one, stop words aside) each
 * matched in the best tool's name or title, as written, by a synonym or a typo repair. The match is
 * weak when at most half of them are (so `bookmark a repository` → `create_repository` is weak,
 * `create pull request` → `create_pull_request` is not), or when nothing matched at all.
 */
import type { SearchIndex, SearchTool, Source } from "./build.ts";
import { concepts, type Hit } from "./rank.ts";
import { stem, words } from "./text.ts";

/**
 * Characters a search result with a weak match may fill in all (header, described tools, names): about
 * 1,100 o200k tokens, since descriptions run ~4 characters a token and tool names ~5.5. The names get
 * what the described tools leave: ~3,800 characters after 10 of them, all of it without a match.
 */
export const WEAK_RESULT_CHARS = 5400;

/** The share of the query's ideas found in the best tool's name or title (0 without a hit). */
export function strength<T extends SearchTool>(index: SearchIndex<T>, query: string, hits: readonly Hit<T>[]): number {
	const best = hits[0];
	if (!best) return 0;
	const ideas = concepts(index, query);
	if (ideas.length === 0) return 0;
	const head = new Set(
		words(`${best.tool.name} ${best.tool.title ?? best.tool.annotations?.title ?? ""}`.slice(0, 512)).map(stem),
	);
	const named = ideas.filter((idea) => idea.variants.some((variant) => variant.terms.every((term) => head.has(term))));
	return named.length / ideas.length;
}

/** Whether the best match is weak (see the file's comment). */
export const isWeak = <T extends SearchTool>(index: SearchIndex<T>, query: string, hits: readonly Hit<T>[]): boolean =>
	strength(index, query, hits) <= 0.5;

export type NameGroup = Readonly<{ server: string; names: readonly string[]; more: number }>;

/**
 * Tool names not shown yet, grouped by server, within `budget` characters (each name as `written`
 * writes it, plus a space, and each server's `server: `): servers in the order of their best hit, then
 * those without one; in a server, its matching tools by score, then the rest as listed. The budget is
 * shared fairly (a server needing less than an equal share leaves the rest to the others), so one
 * large server never hides the others. `more`: the server's names left out.
 */
export function moreNames<T extends SearchTool>(
	sources: readonly Source<T>[],
	hits: readonly Hit<T>[],
	shown: ReadonlySet<T>,
	written: (name: string) => string,
	budget: number,
): NameGroup[] {
	const order = [...new Set([...hits.map((hit) => hit.server), ...sources.map((source) => source.server)])];
	const wanted = order.flatMap((server) => {
		const tools = sources.find((source) => source.server === server)?.tools ?? [];
		const ranked = [...new Set([...hits.filter((hit) => hit.server === server).map((hit) => hit.tool), ...tools])];
		const names = ranked.filter((tool) => !shown.has(tool)).map((tool) => written(tool.name));
		const chars = names.reduce((sum, name) => sum + name.length + 1, server.length + 2);
		return names.length > 0 ? [{ server, names, chars }] : [];
	});
	// Water-filling: servers that need less than an equal share of what is left take what they need.
	const sorted = [...wanted].sort((a, b) => a.chars - b.chars);
	const shares = new Map<string, number>();
	sorted.reduce(
		(left, group, i) => {
			const share = Math.min(group.chars, Math.floor(left / (sorted.length - i)));
			shares.set(group.server, share);
			return left - share;
		},
		Math.max(0, budget),
	);
	return wanted.flatMap((group) => {
		const left = { chars: (shares.get(group.server) ?? 0) - group.server.length - 2 };
		const names: string[] = [];
		for (const name of group.names) {
			if (name.length + 1 > left.chars) break;
			names.push(name);
			left.chars -= name.length + 1;
		}
		return names.length > 0 ? [{ server: group.server, names, more: group.names.length - names.length }] : [];
	});
}
