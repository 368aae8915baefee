/** Close matches for a mistyped word (a server name, a field, a top-level key), for "did you mean". */

/** Edit distance with adjacent transpositions (optimal string alignment); names and keys are short. */
function distance(a: string, b: string, limit: number): number {
	if (Math.abs(a.length - b.length) > limit) return limit + 1;
	const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, index) => index)];
	for (const i of Array.from({ length: a.length }, (_, index) => index + 1)) {
		const row = [i];
		for (const j of Array.from({ length: b.length }, (_, index) => index + 1)) {
			const up = rows[i - 1] ?? [];
			const cost = a[i - 1] === b[j - 1] ? 0 : 1;
			const best = Math.min((up[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (up[j - 1] ?? 0) + cost);
			const swapped = i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1];
			row.push(swapped ? Math.min(best, (rows[i - 2]?.[j - 2] ?? 0) + 1) : best);
		}
		rows.push(row);
	}
	return rows[a.length]?.[b.length] ?? 0;
}

/**
 * The candidates close to `word` (a typo, a case slip), nearest first: 1 edit for words of up to 4
 * letters, 2 up to 8, else 3; or equal ignoring case, `-` and `_`.
 */
export function closeMatches(word: string, candidates: readonly string[]): readonly string[] {
	const squash = (text: string) => text.toLowerCase().replace(/[-_]/g, "");
	const limit = word.length <= 4 ? 1 : word.length <= 8 ? 2 : 3;
	return candidates
		.map((candidate) => ({
			candidate,
			score: squash(candidate) === squash(word) ? 0 : distance(word.toLowerCase(), candidate.toLowerCase(), limit),
		}))
		.filter(({ candidate, score }) => candidate !== word && score <= limit)
		.sort((a, b) => a.score - b.score)
		.slice(0, 3)
		.map(({ candidate }) => candidate);
}
