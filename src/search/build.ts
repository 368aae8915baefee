/**
 * The search index of one or more servers' tools: BM25F postings over each tool's name words, title,
 * description and parameters, plus the bounded word buckets the typo and prefix scans walk. Built
 * once per tools/list result (cached on the list object) and never per query. Every tool is read
 * through the caps of `text.ts`, and `indexOf` builds in slices that give the event loop back every
 * few milliseconds, so no tool list holds Pi's terminal still while the model writes its call.
 */
import { LIMITS, squash, stem, words } from "./text.ts";

export type SearchTool = Readonly<{
	name: string;
	title?: string;
	description?: string;
	inputSchema?: unknown;
	annotations?: Readonly<{ title?: string }>;
}>;

/** One server's tools, as listed. */
export type Source<T extends SearchTool> = Readonly<{ server: string; tools: readonly T[] }>;

export type Field = "name" | "title" | "description" | "params" | "server";

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

/** A term's documents with their BM25F term frequency (already field-weighted and length-normalised). */
export type Postings = Readonly<{ docs: readonly number[]; weights: readonly number[] }>;

export type Doc<T extends SearchTool> = Readonly<{
	server: string;
	tool: T;
	/** Stems of the name: a tool whose name is the query's words ranks first. */
	nameStems: ReadonlySet<string>;
	/** The stem of the description's first word (`list` for "Lists KV namespaces"): its action, when the name says none. */
	lead: string;
}>;

/** The index of one or more servers' tools. Built once per list; read-only afterwards. */
export type SearchIndex<T extends SearchTool> = Readonly<{
	docs: readonly Doc<T>[];
	postings: ReadonlyMap<string, Postings>;
	/** Surface word → its stem, for typo and prefix matching against words as written. */
	surface: ReadonlyMap<string, string>;
	/** `tier first-letter length` → surface words (tier 0: names and titles), at most `LIMITS.bucket` each. */
	typoBuckets: ReadonlyMap<string, readonly string[]>;
	/** First three letters → surface words, names and titles first, at most `LIMITS.prefixBucket` each. */
	prefixBuckets: ReadonlyMap<string, readonly string[]>;
	/** Squashed name (and `server/name`) → documents, for exact names. */
	names: ReadonlyMap<string, readonly number[]>;
	/**
	 * Stem → the servers it may name: a word of the server's name, or of most of its tools' names
	 * (`hubspot-list-objects`, 3 tools or more). The query reads it to tell a server's name from a thing.
	 */
	serverWords: ReadonlyMap<string, readonly string[]>;
}>;

/** Parameter names and descriptions, depth first, within `params` names and `chars` characters. */
function schemaWords(schema: unknown, params: number, chars: number): string[] {
	const out: string[] = [];
	let paramsLeft = params;
	let charsLeft = chars;
	/** The part of `text` that still fits, counted. */
	const take = (text: string): string => {
		const kept = text.slice(0, charsLeft);
		charsLeft -= Math.min(text.length, charsLeft);
		return kept;
	};
	const visit = (schema: unknown, depth: number): void => {
		if (depth > 3 || typeof schema !== "object" || schema === null || charsLeft <= 0) return;
		const node = schema as Record<string, unknown>;
		if (typeof node.description === "string" && depth > 0) out.push(take(node.description));
		if (typeof node.properties === "object" && node.properties !== null) {
			// for…in: no array of every key of a huge object is made; stops at the budget.
			for (const name in node.properties) {
				if (paramsLeft <= 0 || charsLeft <= 0) return;
				paramsLeft -= 1;
				out.push(take(name));
				visit((node.properties as Record<string, unknown>)[name], depth + 1);
			}
		}
		visit(node.items, depth + 1);
		for (const key of ["anyOf", "oneOf", "allOf"]) {
			const variants = node[key];
			if (Array.isArray(variants)) for (const variant of variants.slice(0, LIMITS.params)) visit(variant, depth + 1);
		}
	};
	visit(schema, 0);
	return out;
}

const text = (value: unknown, max: number): string => (typeof value === "string" ? value.slice(0, max) : "");

/** The texts of each field, as read: every field within its cap (`share`: a tool's part of the text budget). */
function fieldTexts(tool: SearchTool, server: string, share: number): Record<Field, readonly string[]> {
	const params = schemaWords(tool.inputSchema, LIMITS.params, Math.min(share, LIMITS.paramChars));
	return {
		name: [text(tool.name, LIMITS.nameChars)],
		title: [text(tool.title ?? tool.annotations?.title, LIMITS.nameChars)],
		description: [text(tool.description, Math.min(share, LIMITS.descriptionChars))],
		params,
		server: [text(server, LIMITS.nameChars)],
	};
}

/** What a build learns as it reads: words, their stems as numbers, and the bounded buckets. */
type Vocabulary = Readonly<{
	surface: Map<string, string>;
	typoBuckets: Map<string, string[]>;
	prefixBuckets: Map<string, string[]>;
	/** Stem → its number, and back. */
	ids: Map<string, number>;
	stems: string[];
	/** Texts and tokens already read: parameter descriptions repeat across a server's tools. */
	texts: Map<string, Int32Array>;
	tokens: Map<string, number>;
}>;

const WIDTH = 5; // FIELD_NAMES.length

/** Adds a word as written to the bounded buckets: tier 0 (names, titles) and tier 1 (other text) apart. */
function bucket(vocabulary: Vocabulary, word: string, tier: number): void {
	if (word.length < 3) return;
	const add = (map: Map<string, string[]>, key: string, cap: number) => {
		const list = map.get(key);
		if (!list) map.set(key, [word]);
		else if (list.length < cap) list.push(word);
	};
	add(vocabulary.typoBuckets, `${tier}${word[0]}${word.length}`, LIMITS.bucket);
	add(vocabulary.prefixBuckets, `${tier}${word.slice(0, 3)}`, LIMITS.prefixBucket);
}

/** A token met for the first time: its word (as `words` makes it), its stem's number; -1 past the vocabulary cap. */
function learn(vocabulary: Vocabulary, token: string, tier: number): number {
	const word = token.slice(0, LIMITS.wordLetters).toLowerCase();
	const known = vocabulary.surface.get(word);
	if (known === undefined && vocabulary.surface.size >= LIMITS.vocabulary) return -1;
	const term = known ?? stem(word);
	if (known === undefined) {
		vocabulary.surface.set(word, term);
		bucket(vocabulary, word, tier);
	}
	const id = vocabulary.ids.get(term) ?? vocabulary.stems.length;
	if (id === vocabulary.stems.length) {
		vocabulary.ids.set(term, id);
		vocabulary.stems.push(term);
	}
	if (vocabulary.tokens.size < LIMITS.vocabulary) vocabulary.tokens.set(token, id);
	return id;
}

const TOKEN = /\p{Lu}+(?!\p{Ll})|\p{Lu}?\p{Ll}+|[\p{L}\p{N}]+/gu;

/** The stems (as numbers) of a text, read once per build; words past the vocabulary cap left out. */
function termsOf(vocabulary: Vocabulary, text: string, tier: number): Int32Array {
	const known = vocabulary.texts.get(text);
	if (known) return known;
	const terms = (text.match(TOKEN) ?? [])
		.map((token) => vocabulary.tokens.get(token) ?? learn(vocabulary, token, tier))
		.filter((id) => id >= 0);
	const read = Int32Array.from(terms);
	if (vocabulary.texts.size < LIMITS.vocabulary) vocabulary.texts.set(text, read);
	return read;
}

/** One tool's distinct stems (numbers) and, for each, its count in each field (`FIELD_NAMES` order), with each field's length. */
type Counted = Readonly<{ terms: Int32Array; counts: Float32Array; lengths: readonly number[]; name: Int32Array; lead: number }>;

/**
 * The grid of per-stem counts for the tool being read (cleared after it through the stems it touched),
 * reused from tool to tool and grown as the vocabulary grows.
 */
const gridFor = (grid: Float32Array, stems: number): Float32Array =>
	grid.length < (stems + 4096) * WIDTH ? new Float32Array(Math.min(LIMITS.vocabulary, 2 * stems + 8192) * WIDTH) : grid;

function count(vocabulary: Vocabulary, grid: Float32Array, tool: SearchTool, server: string, share: number): Counted {
	const texts = fieldTexts(tool, server, share);
	const touched: number[] = [];
	const read = FIELD_NAMES.map((field, i) => texts[field].map((text) => termsOf(vocabulary, text, i < 2 ? 0 : 1)));
	const lengths = read.map((field, i) =>
		field.reduce((length, terms) => {
			for (const id of terms) {
				if (
					grid[id * WIDTH] === 0 &&
					grid[id * WIDTH + 1] === 0 &&
					grid[id * WIDTH + 2] === 0 &&
					grid[id * WIDTH + 3] === 0 &&
					grid[id * WIDTH + 4] === 0
				)
					touched.push(id);
				grid[id * WIDTH + i] = (grid[id * WIDTH + i] ?? 0) + 1;
			}
			return length + terms.length;
		}, 0),
	);
	const counts = new Float32Array(touched.length * WIDTH);
	touched.forEach((id, slot) => {
		counts.set(grid.subarray(id * WIDTH, id * WIDTH + WIDTH), slot * WIDTH);
		grid.fill(0, id * WIDTH, id * WIDTH + WIDTH);
	});
	return {
		terms: Int32Array.from(touched),
		counts,
		lengths,
		name: read[0]?.[0] ?? new Int32Array(),
		lead: read[2]?.[0]?.[0] ?? -1,
	};
}

/**
 * The build, one step per tool: counting every tool, then its postings. A generator, so that
 * `buildIndex` runs it at once and `indexOf` in slices between which the event loop runs.
 */
function* building<T extends SearchTool>(sources: readonly Source<T>[]): Generator<undefined, SearchIndex<T>> {
	const docs = sources.flatMap((source) => source.tools.map((tool) => ({ server: source.server, tool })));
	const vocabulary: Vocabulary = {
		surface: new Map(),
		typoBuckets: new Map(),
		prefixBuckets: new Map(),
		ids: new Map(),
		stems: [],
		texts: new Map(),
		tokens: new Map(),
	};
	let grid: Float32Array = new Float32Array(0);
	const counted: Counted[] = [];
	const share = Math.max(LIMITS.minShare, Math.floor(LIMITS.textBudget / (docs.length || 1)));
	for (const doc of docs) {
		grid = gridFor(grid, vocabulary.stems.length);
		counted.push(count(vocabulary, grid, doc.tool, doc.server, share));
		yield;
	}
	const average = FIELD_NAMES.map(
		(_, i) => counted.reduce((sum, doc) => sum + (doc.lengths[i] ?? 0), 0) / (docs.length || 1) || 1,
	);
	const lists = vocabulary.stems.map(() => ({ docs: [] as number[], weights: [] as number[] }));
	for (const [index, doc] of counted.entries()) {
		// BM25F: each field's count, weighted and normalised by the field's length against its average.
		const norms = FIELD_NAMES.map((field, i) => {
			const { weight, b } = FIELDS[field];
			return weight / (1 - b + (b * (doc.lengths[i] ?? 0)) / (average[i] ?? 1));
		});
		doc.terms.forEach((id, slot) => {
			const weight = norms.reduce((sum, norm, i) => sum + norm * (doc.counts[slot * WIDTH + i] ?? 0), 0);
			lists[id]?.docs.push(index);
			lists[id]?.weights.push(weight);
		});
		yield;
	}
	// The rest walks the vocabulary and the tools once more: in steps too, so a 10,000-tool list never
	// holds the event loop for the whole walk.
	const postings = new Map<string, { docs: number[]; weights: number[] }>();
	for (const [id, term] of vocabulary.stems.entries()) {
		postings.set(term, lists[id] ?? { docs: [], weights: [] });
		if (id % 256 === 255) yield;
	}
	const names = new Map<string, number[]>();
	const { surface, typoBuckets, prefixBuckets, stems } = vocabulary;
	const indexed: SearchIndex<T>["docs"][number][] = [];
	for (const [index, doc] of docs.entries()) {
		const name = text(doc.tool.name, LIMITS.nameChars);
		for (const key of [squash(name), squash(`${doc.server}/${name}`)]) {
			const list = names.get(key);
			if (list) list.push(index);
			else names.set(key, [index]);
		}
		const lead = stems[counted[index]?.lead ?? -1] ?? "";
		indexed.push({ ...doc, nameStems: new Set(Array.from(counted[index]?.name ?? [], (id) => stems[id] ?? "")), lead });
		yield;
	}
	return { docs: indexed, postings, surface, typoBuckets, prefixBuckets, names, serverWords: serverWords(indexed) };
}

/** See `SearchIndex.serverWords`: one pass over the tools' name stems. */
function serverWords(docs: readonly Doc<SearchTool>[]): Map<string, string[]> {
	const counts = new Map<string, Map<string, number>>();
	const sizes = new Map<string, number>();
	for (const doc of docs) {
		const terms = counts.get(doc.server) ?? new Map<string, number>();
		counts.set(doc.server, terms);
		sizes.set(doc.server, (sizes.get(doc.server) ?? 0) + 1);
		for (const term of doc.nameStems) terms.set(term, (terms.get(term) ?? 0) + 1);
	}
	const out = new Map<string, string[]>();
	for (const [server, terms] of counts) {
		const size = sizes.get(server) ?? 0;
		const named = new Set(words(server.slice(0, LIMITS.nameChars)).map(stem));
		if (size >= 3) for (const [term, n] of terms) if (n >= 0.6 * size) named.add(term);
		for (const term of named) out.set(term, [...(out.get(term) ?? []), server]);
	}
	return out;
}

/** Builds the index of the given servers' tools at once (tests, the bench; the extension uses `indexOf`). */
export function buildIndex<T extends SearchTool>(sources: readonly Source<T>[]): SearchIndex<T> {
	const steps = building(sources);
	for (;;) {
		const step = steps.next();
		if (step.done) return step.value;
	}
}

/** The longest the build runs before it gives the event loop back. */
export const SLICE_MS = 8;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Builds the index in slices of at most about `SLICE_MS`, yielding to the event loop between them. */
export async function buildIndexAsync<T extends SearchTool>(sources: readonly Source<T>[]): Promise<SearchIndex<T>> {
	const steps = building(sources);
	for (;;) {
		const built = slice(steps);
		if (built) return built;
		await nextTurn();
	}
}

/** Runs the build's steps for about `SLICE_MS`: the index if it finished in that time. */
function slice<T extends SearchTool>(steps: Generator<undefined, SearchIndex<T>>): SearchIndex<T> | undefined {
	const since = performance.now();
	for (;;) {
		const step = steps.next();
		if (step.done) return step.value;
		if (performance.now() - since >= SLICE_MS) return undefined;
	}
}

type Built = Promise<SearchIndex<SearchTool>>;
/**
 * Both caches are keyed weakly by a session's own tools/list results, so they go with its listings:
 * one index per list, and one cross-server index per first list, replaced whole when a list changes.
 */
const single = new WeakMap<readonly SearchTool[], Readonly<{ server: string; index: Built }>>();
const combined = new WeakMap<
	readonly SearchTool[],
	Readonly<{ key: readonly (readonly SearchTool[])[]; servers: string; index: Built }>
>();

/**
 * The index of these servers' lists, built once per list object: a server's index is rebuilt only
 * when its tools/list result changes; the last cross-server index is kept while no list changed.
 * A build under way is shared: the early start begins it, the call's search awaits it.
 */
export function indexOf<T extends SearchTool>(sources: readonly Source<T>[]): Promise<SearchIndex<T>> {
	if (sources.length === 1 && sources[0]) {
		const { server, tools } = sources[0];
		const found = single.get(tools);
		if (found && found.server === server) return found.index as Promise<SearchIndex<T>>;
		const index = buildIndexAsync(sources);
		single.set(tools, { server, index: index as unknown as Built });
		return index;
	}
	const first = sources[0]?.tools ?? NONE;
	const servers = sources.map((source) => source.server).join("\n");
	const last = combined.get(first);
	const same =
		last?.servers === servers && last.key.length === sources.length && sources.every((source, i) => last.key[i] === source.tools);
	if (same) return last.index as Promise<SearchIndex<T>>;
	const index = buildIndexAsync(sources);
	combined.set(first, { key: sources.map((source) => source.tools), servers, index: index as unknown as Built });
	return index;
}

/** The key of the cross-server index of no server at all. */
const NONE: readonly SearchTool[] = [];
