/**
 * The words of tool search and the bounds on them. A server may list anything the transport carries
 * (10 MiB a message: 10,000 tools, or 100 tools with 100 KB descriptions) and a model may write any
 * query, so what is read of each is capped here, by construction (issue #17): indexing is linear in
 * the capped text, and a query's work is bounded whatever its length.
 */

export const LIMITS = {
	/** Characters of a tool's name and of its title that are read. */
	nameChars: 256,
	/** Characters of a description that are read: the first 4 KiB says what a tool does. */
	descriptionChars: 4096,
	/** Parameters (names with their descriptions) read from an input schema, and their characters in all. */
	params: 64,
	paramChars: 4096,
	/**
	 * Characters of descriptions, and of parameters, an index reads in all: shared among the tools, so
	 * each tool's caps above shrink on big lists (5,000 tools: 838 each), never below `minShare`.
	 */
	textBudget: 4 * 2 ** 20,
	minShare: 512,
	/** Letters of a word kept, in the index and in a query: longer words are cut, so no work grows with a word. */
	wordLetters: 32,
	/** Characters and words of a query that are read. */
	queryChars: 256,
	queryWords: 16,
	/** Distinct words an index holds; a later tool's new words past it are not indexed. */
	vocabulary: 100_000,
	/** Words kept per typo bucket (first letter × length, names and titles apart from other text). */
	bucket: 128,
	/** Known words an unknown query word is compared with, at most (its typo scan). */
	typoScan: 1024,
	/** Words kept per prefix bucket (first three letters). */
	prefixBucket: 64,
} as const;

/** Lowercase words of a text; identifiers split at `_ - . /` and camelCase; each cut to `LIMITS.wordLetters`. */
export function words(text: string): string[] {
	// One pass: an upper-case run not followed by lower case (`API`, `HTTP` in `HTTPServer`), a
	// capitalised or lower-case word, or any other run of letters and digits.
	return (text.match(/\p{Lu}+(?!\p{Ll})|\p{Lu}?\p{Ll}+|[\p{L}\p{N}]+/gu) ?? []).map((word) =>
		word.slice(0, LIMITS.wordLetters).toLowerCase(),
	);
}

/** The words of a query that are read: its first `queryChars` characters, then its first `queryWords` words. */
export function queryWords(query: string): string[] {
	return words(query.slice(0, LIMITS.queryChars)).slice(0, LIMITS.queryWords);
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
export const squash = (text: string): string => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");

const INDEX = Uint16Array.from({ length: 64 }, (_, i) => i);

/** The whole numbers from `from` up to (not including) `to`, for a loop over a word's letters (under 64). */
export const between = (from: number, to: number): Uint16Array => INDEX.subarray(from, Math.max(from, to));

/**
 * Optimal string alignment distance (a swap of two neighbours counts 1), giving up above `max`.
 * Three rolling rows in typed arrays: the typo scan runs it over its candidates.
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
		// The row's lowest cell, seen as each is written (a reduce over the row after it made the scan 2-3x slower).
		let lowest = i;
		for (const j of INDEX.subarray(1, b.length + 1)) {
			const cost = a[i - 1] === b[j - 1] ? 0 : 1;
			const best = Math.min((above[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (above[j - 1] ?? 0) + cost);
			const swap = i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1];
			const value = swap ? Math.min(best, (older[j - 2] ?? 0) + 1) : best;
			row[j] = value;
			if (value < lowest) lowest = value;
		}
		if (lowest > max) return max + 1;
	}
	return rows[(a.length + 1) % 3]?.[b.length] ?? max + 1;
}
