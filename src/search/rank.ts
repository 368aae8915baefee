/**
 * Ranked tool search for `mcp({ action: "tools", query })`: BM25F over each tool's name words, title,
 * description and parameters (the index of `build.ts`), with light stemming, the synonyms of
 * `synonyms.ts`, typo tolerance, exact names first, and each score scaled by the query's intent
 * (`intent.ts`: the action asked, many or one, a server named). Hand-written rather than MiniSearch: on the
 * same queries (bench figure 7) it finds more right tools in the top 3, because per-field length
 * normalisation, synonyms as alternatives of one query word and typo correction only for unknown
 * words are not MiniSearch options (see docs/architecture.md, "Tool search"). Pure and synchronous;
 * no SDK import. A query's work is bounded whatever it says: its words are capped (`text.ts`), and an
 * unknown word's typo scan compares it with at most `LIMITS.typoScan` known words of its buckets.
 */

import { once } from "../async.ts";
import type { SearchIndex, SearchTool } from "./build.ts";
import { asks, CUES, classBits, correctGeneral, fitOf, type Intent, readIntent } from "./intent.ts";
import { SYNONYM_GROUPS } from "./synonyms.ts";
import { between, editDistance, LIMITS, queryWords, squash, stem, words } from "./text.ts";

export { buildIndex, buildIndexAsync, indexOf, type SearchIndex, type SearchTool, type Source } from "./build.ts";
export { editDistance, LIMITS, queryWords, stem, words } from "./text.ts";

export type Hit<T extends SearchTool> = Readonly<{ server: string; tool: T; score: number; doc: number }>;

/** Saturation: higher than the usual 1.2, so a strong name match keeps counting more than a mention. */
const K1 = 3;

const LIST = stem("list");
/** The lift of a listing tool for a one-idea query (see `search`). */
const BROWSE = 1.15;

/** The lift of a tool of a server the query names (`redis get`): a hint, not a match. */
const HINT = 1.3;

/** How much an alternative of a query word counts, relative to the word itself. */
const WEIGHT = { synonym: 0.7, typo1: 0.8, typo2: 0.6, compound: 0.9, prefix: 0.5 } as const;

const STOP_WORDS = new Set(
	(
		"a an the to of in on for with and or is are be it its this that these those my me i we you your our at by from as into " +
		"about can could would should will do does please some any all how what which who where when want need am using use " +
		"have has had there them they"
	).split(" "),
);

type Variant = Readonly<{ terms: readonly string[]; weight: number }>;
/** One idea of the query (a word or a typed phrase) and the ways it may appear in a tool. */
type Concept = Readonly<{ size: number; variants: readonly Variant[] }>;

/**
 * Stemmed phrase → the stemmed phrases of every group it belongs to (itself excluded). A memo of
 * constant data, built on the first query and never changed after: bounded by `SYNONYM_GROUPS`.
 */
const synonyms = once((): ReadonlyMap<string, readonly (readonly string[])[]> => {
	const map = new Map<string, (readonly string[])[]>();
	for (const group of SYNONYM_GROUPS) {
		const phrases = group.map((phrase) => words(phrase).map(stem));
		for (const phrase of phrases) {
			const key = phrase.join(" ");
			const others = phrases.filter((other) => other.join(" ") !== key);
			map.set(key, [...(map.get(key) ?? []), ...others]);
		}
	}
	return map;
});

/**
 * The known words an unknown word's typo scan compares it with: those of its buckets (same first
 * letter, or its first two swapped; a length within `max`), names and titles first, at most
 * `LIMITS.typoScan`. Typos rarely touch the first letter, so the rest of the vocabulary is never walked.
 */
export function typoCandidates<T extends SearchTool>(index: SearchIndex<T>, word: string, max: number): string[] {
	const out: string[] = [];
	const firsts = [...new Set([word[0], word[1]])];
	// The word's own length first, then one shorter and one longer, and so on out to `max`.
	const lengths = [0, 1, 2].slice(0, max + 1).flatMap((d) => (d === 0 ? [word.length] : [word.length - d, word.length + d]));
	for (const tier of [0, 1])
		for (const length of lengths)
			for (const first of firsts) {
				const swapped = first !== word[0];
				for (const known of index.typoBuckets.get(`${tier}${first}${length}`) ?? []) {
					if (out.length >= LIMITS.typoScan) return out;
					if (!swapped || known[1] === word[0]) out.push(known);
				}
			}
	return out;
}

/** Ways an unknown word may have been meant: typos (1 edit for 4–5 letters, 2 from 6), compounds, prefixes. */
function repairs<T extends SearchTool>(index: SearchIndex<T>, word: string): Variant[] {
	if (word.length < 3 || !/^[a-z]+$/.test(word)) return [];
	const max = word.length >= 6 ? 2 : word.length >= 4 ? 1 : 0;
	const typos = new Map<string, number>();
	if (max > 0) {
		for (const known of typoCandidates(index, word, max)) {
			const distance = editDistance(word, known, max);
			const stemmed = index.surface.get(known);
			if (distance <= max && stemmed !== undefined)
				typos.set(stemmed, Math.max(typos.get(stemmed) ?? 0, distance === 1 ? WEIGHT.typo1 : WEIGHT.typo2));
		}
	}
	const found: Variant[] = [...typos].map(([term, weight]) => ({ terms: [term], weight }));
	// Words are at most `LIMITS.wordLetters` long, so this split is bounded too.
	for (const at of between(3, word.length - 2)) {
		const [head, tail] = [stem(word.slice(0, at)), stem(word.slice(at))];
		if (index.postings.has(head) && index.postings.has(tail)) found.push({ terms: [head, tail], weight: WEIGHT.compound });
	}
	if (found.length > 0) return found;
	const prefixed = [0, 1]
		.flatMap((tier) => index.prefixBuckets.get(`${tier}${word.slice(0, 3)}`) ?? [])
		.filter((known) => known.length > word.length && known.startsWith(word))
		.slice(0, 8);
	return prefixed.flatMap((known) => {
		const stemmed = index.surface.get(known);
		return stemmed === undefined ? [] : [{ terms: [stemmed], weight: WEIGHT.prefix }];
	});
}

/**
 * A misspelled general word (`delte`, `lsit`) the index does not hold: the word meant and its
 * synonyms, which the index may hold (`delete` → `remove_user`).
 */
function general(word: string): Variant[] {
	const meant = correctGeneral(word);
	if (meant === undefined) return [];
	const stemmed = stem(meant);
	const alternatives = (synonyms().get(stemmed) ?? []).map((terms) => ({ terms, weight: WEIGHT.typo1 * WEIGHT.synonym }));
	return [{ terms: [stemmed], weight: WEIGHT.typo1 }, ...alternatives];
}

/**
 * The ideas a tool must match: the query's concepts less the words that only name a server
 * (`hubspot`) or cue an intent (`show`), when other ideas remain; those weigh in through `fit`.
 */
export function mainConcepts<T extends SearchTool>(index: SearchIndex<T>, query: string, intent: Intent): Concept[] {
	const ideas = concepts(index, query);
	const hints = new Set(intent.servers.values());
	const head = (idea: Concept) => idea.variants[0]?.terms.join(" ") ?? "";
	const main = ideas.filter((idea) => !hints.has(head(idea)) && !CUES.has(head(idea)));
	return main.length > 0 ? main : ideas;
}

/**
 * The query's words from `from` on, in order, a typed phrase of the table (`pull request`, `who am i`)
 * taken as one piece: three words, then two. A query has at most `LIMITS.queryWords` words.
 */
function pieces(
	all: readonly string[],
	table: ReadonlyMap<string, unknown>,
	from: number,
): readonly Readonly<{ word: string; phrase?: string }>[] {
	const word = all[from];
	if (word === undefined) return [];
	const phrase = [3, 2]
		.map((size) => all.slice(from, from + size))
		.filter((run) => run.length > 1)
		.map((run) => run.map(stem).join(" "))
		.find((key) => table.has(key));
	const size = phrase === undefined ? 1 : phrase.split(" ").length;
	return [{ word, phrase }, ...pieces(all, table, from + size)];
}

export function concepts<T extends SearchTool>(index: SearchIndex<T>, query: string): Concept[] {
	const all = queryWords(query);
	const kept = all.filter((word) => !STOP_WORDS.has(word));
	const table = synonyms();
	const out: Concept[] = [];
	for (const { word, phrase } of pieces(all, table, 0)) {
		if (phrase) {
			const terms = phrase.split(" ");
			const alternatives = (table.get(phrase) ?? []).map((other) => ({ terms: other, weight: WEIGHT.synonym }));
			out.push({ size: terms.length, variants: [{ terms, weight: 1 }, ...alternatives] });
			continue;
		}
		if (kept.length > 0 && STOP_WORDS.has(word)) continue;
		const stemmed = stem(word);
		// `make a new folder`: `new` says again what `make` said; counting it twice would favour the verb.
		if (out.some((idea) => idea.variants.some((variant) => variant.terms.length === 1 && variant.terms[0] === stemmed))) continue;
		const alternatives = (table.get(stemmed) ?? []).map((terms) => ({ terms, weight: WEIGHT.synonym }));
		const known = index.postings.has(stemmed) || index.surface.has(word);
		out.push({
			size: 1,
			variants: [{ terms: [stemmed], weight: 1 }, ...alternatives, ...(known ? [] : [...repairs(index, word), ...general(word)])],
		});
	}
	return out;
}

/** Whether a tool's name says the idea (one of its variants, every word of it). */
const namesIdea = (idea: Concept | undefined, names: ReadonlySet<string>): boolean =>
	idea?.variants.some((variant) => variant.terms.every((term) => names.has(term))) ?? false;

/**
 * The tools that best match `query`, best first: an exact name first, then tools whose name is the
 * query's words, then by BM25F relevance weighted by how many of the query's ideas a tool covers.
 */
export function search<T extends SearchTool>(index: SearchIndex<T>, query: string, limit = 10): Hit<T>[] {
	const n = index.docs.length;
	if (n === 0) return [];
	const intent = readIntent(index, query);
	const ideas = mainConcepts(index, query, intent);
	const idf = (term: string): number => {
		const df = index.postings.get(term)?.docs.length ?? 0;
		return Math.log(1 + (n - df + 0.5) / (df + 0.5));
	};
	const totals = new Float64Array(n);
	const covered = new Uint16Array(n);
	// Scratch arrays, cleared through the lists of documents touched, so a query allocates little.
	const best = new Float64Array(n);
	const sums = new Float64Array(n);
	const terms = new Uint8Array(n);
	const matched = new Set<number>();
	for (const idea of ideas) {
		const touched: number[] = [];
		for (const variant of idea.variants) {
			const share = (variant.weight * idea.size) / variant.terms.length;
			const hit: number[] = [];
			for (const term of variant.terms) {
				const weightOfTerm = idf(term) * share;
				const postings = index.postings.get(term);
				if (!postings) continue;
				postings.docs.forEach((doc, i) => {
					const weight = postings.weights[i] ?? 0;
					if (sums[doc] === 0) hit.push(doc);
					sums[doc] = (sums[doc] ?? 0) + (weightOfTerm * weight) / (K1 + weight);
					terms[doc] = (terms[doc] ?? 0) + 1;
				});
			}
			for (const doc of hit) {
				// A phrase ("pull request") counts only where all its words are: "request" alone is not it.
				const score = terms[doc] === variant.terms.length ? (sums[doc] ?? 0) : 0;
				sums[doc] = 0;
				terms[doc] = 0;
				if (score === 0) continue;
				if (best[doc] === 0) touched.push(doc);
				if (score > (best[doc] ?? 0)) best[doc] = score;
			}
		}
		for (const doc of touched) {
			totals[doc] = (totals[doc] ?? 0) + (best[doc] ?? 0);
			covered[doc] = (covered[doc] ?? 0) + 1;
			best[doc] = 0;
			matched.add(doc);
		}
	}
	const exact = new Set(index.names.get(squash(query.slice(0, LIMITS.queryChars))) ?? []);
	const queryStems = new Set(queryWords(query).map(stem));
	const asking = asks(intent);
	const fit = fitOf(intent);
	for (const doc of exact) matched.add(doc);
	const ranked = [...matched].map((doc) => {
		const total = totals[doc] ?? 0;
		const isExact = exact.has(doc);
		const names = index.docs[doc]?.nameStems ?? new Set<string>();
		const sameWords = names.size > 0 && names.size === queryStems.size && [...names].every((term) => queryStems.has(term));
		const coverage = ideas.length > 0 ? (covered[doc] ?? 0) / ideas.length : 0;
		// A query naming one thing and no action ("notifications", "pull requests") most often means to see
		// them: among tools that match it, one that lists them comes first.
		const browse = ideas.length === 1 && names.has(LIST) && namesIdea(ideas[0], names) ? BROWSE : 1;
		const entry = index.docs[doc];
		const fits = asking ? fit(classBits(index, doc)) : 1;
		const hinted = entry && intent.servers.has(entry.server) ? HINT : 1;
		return { doc, tier: isExact ? 2 : sameWords ? 1 : 0, score: total * coverage * browse * fits * hinted };
	});
	ranked.sort((a, b) => b.tier - a.tier || b.score - a.score || a.doc - b.doc);
	return ranked.slice(0, limit).flatMap(({ doc, score }) => {
		const entry = index.docs[doc];
		return entry ? [{ server: entry.server, tool: entry.tool, score, doc }] : [];
	});
}
