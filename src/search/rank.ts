/**
 * Ranked tool search for `mcp({ action: "tools", query })`: BM25F over each tool's name words, title,
 * description and parameters, with light stemming, the synonyms of `synonyms.ts`, typo tolerance and
 * exact names first. Hand-written rather than MiniSearch: on the same queries (bench figure 7) it
 * finds more right tools in the top 3, because per-field length normalisation, synonyms as
 * alternatives of one query word and typo correction only for unknown words are not MiniSearch
 * options (see docs/architecture.md, "Tool search"). Pure and synchronous; no SDK import.
 *
 * The index is built once per tools/list result (cached on the list object) and never per query.
 */
import { SYNONYM_GROUPS } from "./synonyms.ts";

export type SearchTool = Readonly<{
	name: string;
	title?: string;
	description?: string;
	inputSchema?: unknown;
	annotations?: Readonly<{ title?: string }>;
}>;

/** One server's tools, as listed. */
export type Source<T extends SearchTool> = Readonly<{ server: string; tools: readonly T[] }>;

export type Hit<T extends SearchTool> = Readonly<{ server: string; tool: T; score: number }>;

type Field = "name" | "title" | "description" | "params" | "server";

/** Field weight and length normalisation (b); the name counts most, and a short name matching beats a long one. */
const FIELDS: Readonly<Record<Field, Readonly<{ weight: number; b: number }>>> = {
	name: { weight: 5, b: 0.75 },
	title: { weight: 2, b: 0.5 },
	description: { weight: 1, b: 0.75 },
	params: { weight: 0.4, b: 0.75 },
	// Shared by every tool of a server: finds the server (`notion page`), barely the tool in it.
	server: { weight: 0.5, b: 0 },
};
const FIELD_NAMES = Object.keys(FIELDS) as Field[];
/** Saturation: higher than the usual 1.2, so a strong name match keeps counting more than a mention. */
const K1 = 3;

/** How much an alternative of a query word counts, relative to the word itself. */
const WEIGHT = { synonym: 0.7, typo1: 0.8, typo2: 0.6, compound: 0.9, prefix: 0.5 } as const;

const STOP_WORDS = new Set(
	(
		"a an the to of in on for with and or is are be it its this that these those my me i we you your our at by from as into " +
		"about can could would should will do does please some any all how what which who where when want need am using use"
	).split(" "),
);

/** Lowercase words of a text; identifiers split at `_ - . /` and camelCase. */
export function words(text: string): string[] {
	// One pass: an upper-case run not followed by lower case (`API`, `HTTP` in `HTTPServer`), a
	// capitalised or lower-case word, or any other run of letters and digits.
	return (text.match(/\p{Lu}+(?!\p{Ll})|\p{Lu}?\p{Ll}+|[\p{L}\p{N}]+/gu) ?? []).map((word) => word.toLowerCase());
}

/**
 * A light English stemmer (plural, -ing, -ed, -ion, final e), applied to the index and the query
 * alike, so `issues`/`issue`, `created`/`create`/`creation` and `committed`/`commit` meet.
 */
export function stem(word: string): string {
	if (word.length <= 3 || !/^[a-z]+$/.test(word)) return word;
	const plural =
		word.endsWith("ies") && word.length > 4
			? `${word.slice(0, -3)}y`
			: /(ches|shes|sses|xes|zes)$/.test(word)
				? word.slice(0, -2)
				: word.endsWith("s") && !/(ss|us|is)$/.test(word)
					? word.slice(0, -1)
					: word;
	const suffix = /^(.{3,}?)(ing|ed|ion)$/.exec(plural);
	const base = suffix?.[1] ?? plural;
	// `committed` → `committ` → `commit`; `running` → `runn` → `run`.
	const undoubled = suffix && /([^aeiouls])\1$/.test(base) ? base.slice(0, -1) : base;
	return undoubled.length > 4 && undoubled.endsWith("e") ? undoubled.slice(0, -1) : undoubled;
}

/** Letters and digits only, lowercase: how names are compared for an exact match. */
const squash = (text: string): string => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");

const INDEX = Uint16Array.from({ length: 64 }, (_, i) => i);

/**
 * Optimal string alignment distance (a swap of two neighbours counts 1), giving up above `max`.
 * Three rolling rows in typed arrays: the typo scan runs it over the vocabulary.
 */
export function editDistance(a: string, b: string, max: number): number {
	if (Math.abs(a.length - b.length) > max) return max + 1;
	if (a.length >= INDEX.length || b.length >= INDEX.length) return a === b ? 0 : max + 1;
	// Row k of the table lives in rows[(k + 1) % 3]: row 0 is 0…n, the row before it is unused.
	const rows = [new Uint8Array(b.length + 1), Uint8Array.from(INDEX.subarray(0, b.length + 1)), new Uint8Array(b.length + 1)];
	for (const i of INDEX.subarray(1, a.length + 1)) {
		const [older = rows[0] as Uint8Array, above = rows[0] as Uint8Array, row = rows[0] as Uint8Array] = [
			rows[(i + 2) % 3],
			rows[i % 3],
			rows[(i + 1) % 3],
		];
		row[0] = i;
		const lowest = { value: i };
		for (const j of INDEX.subarray(1, b.length + 1)) {
			const cost = a[i - 1] === b[j - 1] ? 0 : 1;
			const best = Math.min((above[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (above[j - 1] ?? 0) + cost);
			const swap = i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1];
			const value = swap ? Math.min(best, (older[j - 2] ?? 0) + 1) : best;
			row[j] = value;
			if (value < lowest.value) lowest.value = value;
		}
		if (lowest.value > max) return max + 1;
	}
	return rows[(a.length + 1) % 3]?.[b.length] ?? max + 1;
}

type Posting = Readonly<{ doc: number; weight: number }>;

/** The index of one or more servers' tools. Built once per list; read-only afterwards. */
export type SearchIndex<T extends SearchTool> = Readonly<{
	docs: readonly Readonly<{ server: string; tool: T; nameStems: ReadonlySet<string> }>[];
	/** Stem → documents with their BM25F term frequency (already field-weighted and length-normalised). */
	postings: ReadonlyMap<string, readonly Posting[]>;
	/** Surface word → its stem, for typo and prefix matching against words as written. */
	surface: ReadonlyMap<string, string>;
	/** Squashed name (and `server/name`) → documents, for exact names. */
	names: ReadonlyMap<string, readonly number[]>;
}>;

function schemaWords(schema: unknown, depth: number, out: string[]): void {
	if (depth > 3 || typeof schema !== "object" || schema === null) return;
	const node = schema as Record<string, unknown>;
	if (typeof node.description === "string" && depth > 0) out.push(node.description);
	if (typeof node.properties === "object" && node.properties !== null) {
		for (const [name, property] of Object.entries(node.properties)) {
			out.push(name);
			schemaWords(property, depth + 1, out);
		}
	}
	schemaWords(node.items, depth + 1, out);
	for (const key of ["anyOf", "oneOf", "allOf"]) {
		const variants = node[key];
		if (Array.isArray(variants)) for (const variant of variants) schemaWords(variant, depth + 1, out);
	}
}

function fieldTexts(tool: SearchTool, server: string): Record<Field, string> {
	const params: string[] = [];
	schemaWords(tool.inputSchema, 0, params);
	return {
		name: tool.name,
		title: tool.title ?? tool.annotations?.title ?? "",
		description: tool.description ?? "",
		params: params.join(" "),
		server,
	};
}

/** Builds the index of the given servers' tools (use `indexOf`, which caches it). */
export function buildIndex<T extends SearchTool>(sources: readonly Source<T>[]): SearchIndex<T> {
	const docs = sources.flatMap((source) => source.tools.map((tool) => ({ server: source.server, tool })));
	const surface = new Map<string, string>();
	const stemOf = (word: string): string => {
		const known = surface.get(word);
		if (known !== undefined) return known;
		const stemmed = stem(word);
		surface.set(word, stemmed);
		return stemmed;
	};
	const counted = docs.map((doc) => {
		const texts = fieldTexts(doc.tool, doc.server);
		const fields = FIELD_NAMES.map((field) => {
			const stems = words(texts[field]).map(stemOf);
			const counts = new Map<string, number>();
			for (const term of stems) counts.set(term, (counts.get(term) ?? 0) + 1);
			return { field, counts, length: stems.length };
		});
		return { fields, nameStems: new Set(fields[0]?.counts.keys()) };
	});
	const average = Object.fromEntries(
		FIELD_NAMES.map((field, i) => [
			field,
			counted.reduce((sum, doc) => sum + (doc.fields[i]?.length ?? 0), 0) / (docs.length || 1) || 1,
		]),
	) as Record<Field, number>;
	const postings = new Map<string, Posting[]>();
	counted.forEach((doc, index) => {
		const weights = new Map<string, number>();
		for (const { field, counts, length } of doc.fields) {
			const { weight, b } = FIELDS[field];
			const norm = 1 - b + (b * length) / average[field];
			for (const [term, count] of counts) weights.set(term, (weights.get(term) ?? 0) + (weight * count) / norm);
		}
		for (const [term, weight] of weights) {
			const list = postings.get(term) ?? [];
			if (list.length === 0) postings.set(term, list);
			list.push({ doc: index, weight });
		}
	});
	const names = new Map<string, number[]>();
	docs.forEach((doc, index) => {
		for (const key of [squash(doc.tool.name), squash(`${doc.server}/${doc.tool.name}`)]) {
			const list = names.get(key) ?? [];
			if (list.length === 0) names.set(key, list);
			list.push(index);
		}
	});
	return {
		docs: docs.map((doc, i) => ({ ...doc, nameStems: counted[i]?.nameStems ?? new Set() })),
		postings,
		surface,
		names,
	};
}

const single = new WeakMap<readonly SearchTool[], SearchIndex<SearchTool>>();
const combined: { key?: readonly (readonly SearchTool[])[]; servers?: string; index?: SearchIndex<SearchTool> } = {};

/**
 * The index of these servers' lists, built once per list object: a server's index is rebuilt only
 * when its tools/list result changes; the last cross-server index is kept while no list changed.
 */
export function indexOf<T extends SearchTool>(sources: readonly Source<T>[]): SearchIndex<T> {
	if (sources.length === 1 && sources[0]) {
		const found = single.get(sources[0].tools) as SearchIndex<T> | undefined;
		if (found && found.docs[0]?.server === sources[0].server) return found;
		const built = buildIndex(sources);
		single.set(sources[0].tools, built as unknown as SearchIndex<SearchTool>);
		return built;
	}
	const servers = sources.map((source) => source.server).join("\n");
	const same =
		combined.servers === servers &&
		combined.key?.length === sources.length &&
		sources.every((source, i) => combined.key?.[i] === source.tools);
	if (same && combined.index) return combined.index as unknown as SearchIndex<T>;
	const built = buildIndex(sources);
	Object.assign(combined, { key: sources.map((source) => source.tools), servers, index: built });
	return built;
}

type Variant = Readonly<{ terms: readonly string[]; weight: number }>;
/** One idea of the query (a word or a typed phrase) and the ways it may appear in a tool. */
type Concept = Readonly<{ size: number; variants: readonly Variant[] }>;

const synonymTable: { map?: ReadonlyMap<string, readonly (readonly string[])[]> } = {};

/** Stemmed phrase → the stemmed phrases of every group it belongs to (itself excluded). */
function synonyms(): ReadonlyMap<string, readonly (readonly string[])[]> {
	if (synonymTable.map) return synonymTable.map;
	const map = new Map<string, (readonly string[])[]>();
	for (const group of SYNONYM_GROUPS) {
		const phrases = group.map((phrase) => words(phrase).map(stem));
		for (const phrase of phrases) {
			const key = phrase.join(" ");
			const others = phrases.filter((other) => other.join(" ") !== key);
			map.set(key, [...(map.get(key) ?? []), ...others]);
		}
	}
	synonymTable.map = map;
	return map;
}

/** Ways an unknown word may have been meant: typos (1 edit for 4–5 letters, 2 from 6), compounds, prefixes. */
function repairs<T extends SearchTool>(index: SearchIndex<T>, word: string): Variant[] {
	if (word.length < 3 || !/^[a-z]+$/.test(word)) return [];
	const max = word.length >= 6 ? 2 : word.length >= 4 ? 1 : 0;
	const typos = new Map<string, number>();
	if (max > 0) {
		for (const [known, stemmed] of index.surface) {
			// Typos rarely touch the first letter (except by swapping it with the second): skip the rest cheaply.
			if (known[0] !== word[0] && !(known[0] === word[1] && known[1] === word[0])) continue;
			const distance = editDistance(word, known, max);
			if (distance <= max) typos.set(stemmed, Math.max(typos.get(stemmed) ?? 0, distance === 1 ? WEIGHT.typo1 : WEIGHT.typo2));
		}
	}
	const found: Variant[] = [...typos].map(([term, weight]) => ({ terms: [term], weight }));
	for (const at of Array.from({ length: Math.max(0, word.length - 5) }, (_, i) => i + 3)) {
		const [head, tail] = [stem(word.slice(0, at)), stem(word.slice(at))];
		if (index.postings.has(head) && index.postings.has(tail)) found.push({ terms: [head, tail], weight: WEIGHT.compound });
	}
	if (found.length > 0) return found;
	const prefixed = [...index.surface].filter(([known]) => known.length > word.length && known.startsWith(word)).slice(0, 8);
	return prefixed.map(([, stemmed]) => ({ terms: [stemmed], weight: WEIGHT.prefix }));
}

function concepts<T extends SearchTool>(index: SearchIndex<T>, query: string): Concept[] {
	const all = words(query);
	const kept = all.filter((word) => !STOP_WORDS.has(word));
	const table = synonyms();
	const out: Concept[] = [];
	const skip = { next: false };
	all.forEach((word, i) => {
		if (skip.next) {
			skip.next = false;
			return;
		}
		const next = all[i + 1];
		const pair = next === undefined ? undefined : `${stem(word)} ${stem(next)}`;
		if (pair && table.has(pair)) {
			skip.next = true;
			const alternatives = (table.get(pair) ?? []).map((terms) => ({ terms, weight: WEIGHT.synonym }));
			out.push({ size: 2, variants: [{ terms: pair.split(" "), weight: 1 }, ...alternatives] });
			return;
		}
		if (kept.length > 0 && STOP_WORDS.has(word)) return;
		const stemmed = stem(word);
		// `make a new folder`: `new` says again what `make` said; counting it twice would favour the verb.
		if (out.some((idea) => idea.variants.some((variant) => variant.terms.length === 1 && variant.terms[0] === stemmed))) return;
		const alternatives = (table.get(stemmed) ?? []).map((terms) => ({ terms, weight: WEIGHT.synonym }));
		const known = index.postings.has(stemmed) || index.surface.has(word);
		out.push({ size: 1, variants: [{ terms: [stemmed], weight: 1 }, ...alternatives, ...(known ? [] : repairs(index, word))] });
	});
	return out;
}

/**
 * The tools that best match `query`, best first: an exact name first, then tools whose name is the
 * query's words, then by BM25F relevance weighted by how many of the query's ideas a tool covers.
 */
export function search<T extends SearchTool>(index: SearchIndex<T>, query: string, limit = 10): Hit<T>[] {
	const n = index.docs.length;
	if (n === 0) return [];
	const ideas = concepts(index, query);
	const idf = (term: string): number => {
		const df = index.postings.get(term)?.length ?? 0;
		return Math.log(1 + (n - df + 0.5) / (df + 0.5));
	};
	const totals = new Float64Array(n);
	const covered = new Uint16Array(n);
	// Scratch arrays, cleared through the lists of documents touched, so a query allocates little.
	const best = new Float64Array(n);
	const sums = new Float64Array(n);
	const matched = new Set<number>();
	for (const idea of ideas) {
		const touched: number[] = [];
		for (const variant of idea.variants) {
			const share = (variant.weight * idea.size) / variant.terms.length;
			const hit: number[] = [];
			for (const term of variant.terms) {
				const weightOfTerm = idf(term) * share;
				for (const posting of index.postings.get(term) ?? []) {
					if (sums[posting.doc] === 0) hit.push(posting.doc);
					sums[posting.doc] = (sums[posting.doc] ?? 0) + (weightOfTerm * posting.weight) / (K1 + posting.weight);
				}
			}
			for (const doc of hit) {
				const score = sums[doc] ?? 0;
				sums[doc] = 0;
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
	const exact = new Set(index.names.get(squash(query)) ?? []);
	const queryStems = new Set(words(query).map(stem));
	for (const doc of exact) matched.add(doc);
	const ranked = [...matched].map((doc) => {
		const total = totals[doc] ?? 0;
		const isExact = exact.has(doc);
		const names = index.docs[doc]?.nameStems ?? new Set<string>();
		const sameWords = names.size > 0 && names.size === queryStems.size && [...names].every((term) => queryStems.has(term));
		const coverage = ideas.length > 0 ? (covered[doc] ?? 0) / ideas.length : 0;
		return { doc, tier: isExact ? 2 : sameWords ? 1 : 0, score: total * coverage };
	});
	ranked.sort((a, b) => b.tier - a.tier || b.score - a.score || a.doc - b.doc);
	return ranked.slice(0, limit).flatMap(({ doc, score }) => {
		const entry = index.docs[doc];
		return entry ? [{ server: entry.server, tool: entry.tool, score }] : [];
	});
}
