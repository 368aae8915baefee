/**
 * Weak matches (issues #20, #42). Words alone cannot rank a query that shares no word with the tool it
 * wants (`who is in my squad` for `get_team_members`); the model reading the result can, if it sees
 * more names. So when the best matches are genuinely weak, the result adds further tool names: those
 * most related to the query (ranked lower, or sharing a word's beginning), 20 to 40 of them, never a
 * server's every name. A confident match lists its ranked tools only. Lexical and local.
 *
 * Weak: none of the first three tools names the query's main thing (one of its nouns, as written,
 * by a synonym or a typo repair), or, for a query of verbs alone, its action. A word that only names a
 * server (`hubspot`) or cues an intent (`show`) is not the main thing.
 */
import type { SearchIndex, SearchTool } from "./build.ts";
import { fit, isVerb, readIntent, toolClasses } from "./intent.ts";
import { concepts, type Hit, mainConcepts } from "./rank.ts";
import { stem, words } from "./text.ts";

/**
 * Characters a search result with a weak match may fill in all (header, described tools, names): about
 * 1,100 o200k tokens, since descriptions run ~4 characters a token and tool names ~5.5.
 */
export const WEAK_RESULT_CHARS = 5400;

/** Names a weak result adds: at most this many, and at least `MIN_NAMES` while the servers have them. */
export const MAX_NAMES = 30;
export const MIN_NAMES = 20;

const headOf = (tool: SearchTool): Set<string> =>
	new Set(words(`${tool.name} ${tool.title ?? tool.annotations?.title ?? ""}`.slice(0, 512)).map(stem));

/** The share of the query's ideas found in the best tool's name or title (0 without a hit). */
export function strength<T extends SearchTool>(index: SearchIndex<T>, query: string, hits: readonly Hit<T>[]): number {
	const best = hits[0];
	if (!best) return 0;
	const ideas = concepts(index, query);
	if (ideas.length === 0) return 0;
	const head = headOf(best.tool);
	const named = ideas.filter((idea) => idea.variants.some((variant) => variant.terms.every((term) => head.has(term))));
	return named.length / ideas.length;
}

/** Whether the best matches are weak (see the file's comment). */
export function isWeak<T extends SearchTool>(index: SearchIndex<T>, query: string, hits: readonly Hit<T>[]): boolean {
	const top = hits.slice(0, 3);
	if (top.length === 0) return true;
	const intent = readIntent(index, query);
	const ideas = mainConcepts(index, query, intent);
	const nouns = ideas.filter(
		(idea) => !idea.variants.some((variant) => variant.terms.length === 1 && isVerb(variant.terms[0] ?? "")),
	);
	if (nouns.length > 0)
		return !top.some((hit) => {
			const head = headOf(hit.tool);
			return nouns.some((idea) => idea.variants.some((variant) => variant.terms.every((term) => head.has(term))));
		});
	return !top.some((hit) => fit(intent, toolClasses(hit.tool, headOf(hit.tool))) > 1);
}

export type NameGroup = Readonly<{ server: string; names: readonly string[]; more: number }>;

/**
 * The names a weak result adds, grouped by server in the order of their first name: the tools ranked
 * below those shown (they share a word, stem, synonym or typo repair with the query, in the name or the
 * description), then tools with a word that begins like a query word (`vulnerable` → `vulnerability`),
 * up to `MAX_NAMES`; under `MIN_NAMES`, the other names of the best hits' servers fill in, as listed.
 * Within `budget` characters (each name as `written` writes it, plus a space, and each server's
 * `server: `). `more`: names of that server left out.
 */
export function relatedNames<T extends SearchTool>(
	index: SearchIndex<T>,
	query: string,
	hits: readonly Hit<T>[],
	shown: ReadonlySet<T>,
	written: (name: string) => string,
	budget: number,
): NameGroup[] {
	const picked = new Map<number, true>();
	const take = (doc: number) => {
		const tool = index.docs[doc]?.tool;
		if (tool && !shown.has(tool) && picked.size < MAX_NAMES) picked.set(doc, true);
	};
	for (const hit of hits) take(hit.doc);
	for (const doc of partialMatches(index, query)) take(doc);
	// Without a hit, every server's names may fill in, in the index's order.
	const servers = [...new Set((hits.length > 0 ? hits : index.docs).map((hit) => hit.server))];
	for (const server of servers)
		index.docs.forEach((doc, i) => {
			if (picked.size < MIN_NAMES && doc.server === server) take(i);
		});
	const groups = new Map<string, string[]>();
	for (const doc of picked.keys()) {
		const entry = index.docs[doc];
		if (entry) groups.set(entry.server, [...(groups.get(entry.server) ?? []), written(entry.tool.name)]);
	}
	return fitted([...groups], budget);
}

/**
 * The names that fit in `chars`, group by group: a server costs its name and 2, each name its
 * length and 1; a group stops at its first name that does not fit, and a group left empty is dropped.
 */
function fitted(groups: readonly (readonly [string, readonly string[]])[], chars: number): NameGroup[] {
	const [first, ...rest] = groups;
	if (first === undefined) return [];
	const [server, names] = first;
	const room = chars - server.length - 2;
	const spent: number[] = [];
	for (const name of names) spent.push((spent.at(-1) ?? 0) + name.length + 1);
	const fit = spent.findIndex((sum) => sum > room);
	const kept = names.slice(0, fit === -1 ? names.length : fit);
	const group = kept.length > 0 ? [{ server, names: kept, more: names.length - kept.length }] : [];
	return [...group, ...fitted(rest, room - (spent[kept.length - 1] ?? 0))];
}

/** Tools with a word beginning like a query word of 5 letters or more (its first 5 letters), names first. */
function partialMatches<T extends SearchTool>(index: SearchIndex<T>, query: string): number[] {
	const out: number[] = [];
	for (const word of words(query.slice(0, 256)).slice(0, 16)) {
		if (word.length < 5) continue;
		const prefix = word.slice(0, 5);
		for (const tier of [0, 1])
			for (const known of index.prefixBuckets.get(`${tier}${word.slice(0, 3)}`) ?? []) {
				if (!known.startsWith(prefix)) continue;
				const term = index.surface.get(known);
				const docs = term === undefined ? [] : (index.postings.get(term)?.docs ?? []);
				out.push(...docs.slice(0, MAX_NAMES));
			}
	}
	return out;
}
