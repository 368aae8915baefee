/**
 * Unknown keys named with advice: a hint for another client's key, an alias (`cmd` for `command`),
 * or a close match ("did you mean"), for fields, top-level keys and server names.
 */

/** Edit distance with adjacent transpositions (optimal string alignment); names and keys are short. */
function distance(a: string, b: string, limit: number): number {
	if (Math.abs(a.length - b.length) > limit) return limit + 1;
	const rows: number[][] = [[0, ...b.split("").map((_, index) => index + 1)]];
	for (const [before] of a.split("").entries()) {
		const i = before + 1;
		const row = [i];
		for (const [left] of b.split("").entries()) {
			const j = left + 1;
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

/** Hints for keys that other clients (Pi's built-in MCP among them) accept and we do not. */
const KEY_HINTS: Readonly<Record<string, string>> = {
	clientSecret: 'put the secret in an environment variable and name it in "clientSecretEnv"',
	callbackPort: 'use "redirectUri", e.g. "http://127.0.0.1:8976/callback"',
	callbackUrl: 'use "redirectUri"',
};

/** Other clients' (or a hand's) words for our keys. */
const KEY_ALIASES: Readonly<Record<string, string>> = {
	cmd: "command",
	arguments: "args",
	argv: "args",
	environment: "env",
	serverUrl: "url",
	httpUrl: "url",
	endpoint: "url",
	disable: "disabled",
	enable: "enabled",
	working_directory: "cwd",
};

/** Why a key is not supported: a hint, a close match among the allowed keys, or nothing. */
function keyAdvice(key: string, allowed: readonly string[]): string {
	const hint = KEY_HINTS[key];
	if (hint) return `; ${hint}`;
	const alias = KEY_ALIASES[key];
	const close = alias && allowed.includes(alias) ? [alias] : closeMatches(key, allowed);
	return close.length > 0 ? ` (did you mean ${close.map((each) => `"${each}"`).join(" or ")}?)` : "";
}

/** Every unknown key named, each with its advice; undefined when there is none. */
export function unknownKeys(raw: Readonly<Record<string, unknown>>, allowed: readonly string[], prefix = ""): string | undefined {
	const unknown = Object.keys(raw).filter((key) => !allowed.includes(key));
	const [first] = unknown;
	if (first === undefined) return undefined;
	if (unknown.length === 1) return `field "${prefix}${first}" is not supported${keyAdvice(first, allowed)}`;
	const each = unknown.map((key) => {
		const advice = keyAdvice(key, allowed);
		return `"${prefix}${key}"${advice.startsWith("; ") ? ` (${advice.slice(2)})` : advice}`;
	});
	return `fields ${each.join(", ")} are not supported`;
}
