/**
 * The one rule for configured secrets in what a server sends: each exact value is replaced by
 * `[redacted]`, nothing else. Which values count is the configuration's (`config/secrets.ts`) and
 * the credentials' (stored `${secret:…}` values, tokens); a heuristic has no place in a tool result
 * or in the model's own arguments, where it would hide ordinary text ("Authorization: /home/…").
 * Error messages also pass `sanitize` (`text.ts`), which adds the credential patterns.
 */

export const REDACTED = "[redacted]";

/** The values worth replacing, longest first (a secret that contains another is never left half redacted). */
function ordered(secrets: readonly string[]): readonly string[] {
	return [...new Set(secrets)].filter((secret) => secret.length >= 4).sort((a, b) => b.length - a.length);
}

/** `text` with every exact secret value replaced. */
export function redactExact(text: string, secrets: readonly string[]): string {
	return ordered(secrets).reduce((acc, secret) => (acc.includes(secret) ? acc.split(secret).join(REDACTED) : acc), text);
}

/** Base64 fields (images, audio, blobs): never text a model reads, and often megabytes. */
const BINARY = new Set(["data", "blob"]);

/**
 * A server's result (a tool result, resource contents, prompt messages, completions) with every
 * string in it redacted, keys too; the same object when no secret occurs in it.
 */
export function redactDeep<T>(value: T, secrets: readonly string[]): T {
	const list = ordered(secrets);
	if (list.length === 0) return value;
	const walk = (node: unknown): unknown => {
		if (typeof node === "string") return redactExact(node, list);
		if (node === null || typeof node !== "object") return node;
		if (Array.isArray(node)) return node.map(walk);
		return Object.fromEntries(
			Object.entries(node).map(([key, item]) => [
				redactExact(key, list),
				BINARY.has(key) && typeof item === "string" ? item : walk(item),
			]),
		);
	};
	return walk(value) as T;
}
