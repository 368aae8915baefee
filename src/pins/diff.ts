/**
 * What a review shows of one pending definition (#47): the approved and the new definition as
 * indented JSON with sorted keys, every hidden character escaped visibly (`\u200b`, `\u{e0041}`), and a
 * word-by-word diff of the two. Bounded: past `MAX_DIFF_WORDS` words on either side the middle is shown
 * as one removal and one addition.
 */
import { escapeName } from "../output/text.ts";
import type { Pending } from "./pins.ts";

export type Segment = Readonly<{ op: "same" | "del" | "add"; text: string }>;

const MAX_DIFF_WORDS = 3000;

function sorted(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(sorted);
	if (value === null || typeof value !== "object") return value;
	const record = value as Record<string, unknown>;
	return Object.fromEntries(
		Object.keys(record)
			.sort()
			.map((key) => [key, sorted(record[key])]),
	);
}

/** A definition as a review shows it: indented JSON, sorted keys, hidden characters escaped. */
export function shownDefinition(definition: unknown): string {
	if (definition === undefined) return "";
	const text = typeof definition === "string" ? definition : (JSON.stringify(sorted(definition), null, 2) ?? "");
	return text.split("\n").map(escapeName).join("\n");
}

const words = (text: string): string[] => text.match(/\s+|[^\s]+/g) ?? [];

/** The word-by-word difference from `before` to `after` (whitespace runs are words too). */
export function wordDiff(before: string, after: string): readonly Segment[] {
	const a = words(before);
	const b = words(after);
	let start = 0;
	while (start < a.length && start < b.length && a[start] === b[start]) start++;
	let endA = a.length;
	let endB = b.length;
	while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
		endA--;
		endB--;
	}
	const middle =
		endA - start > MAX_DIFF_WORDS || endB - start > MAX_DIFF_WORDS
			? [
					{ op: "del" as const, text: a.slice(start, endA).join("") },
					{ op: "add" as const, text: b.slice(start, endB).join("") },
				]
			: lcsDiff(a.slice(start, endA), b.slice(start, endB));
	return merge([{ op: "same", text: a.slice(0, start).join("") }, ...middle, { op: "same", text: a.slice(endA).join("") }]);
}

/**
 * A plain LCS over words, written here: the `diff` package in node_modules is Pi's dependency, not ours
 * (importing it would lean on a peer's internals), and adding it (~1 MB) for these lines buys nothing:
 * the bound above and keeping whitespace runs as words (the shown text rebuilt exactly) are ours anyway.
 */
function lcsDiff(a: readonly string[], b: readonly string[]): Segment[] {
	const width = b.length + 1;
	const table = new Uint32Array((a.length + 1) * width);
	for (let i = a.length - 1; i >= 0; i--)
		for (let j = b.length - 1; j >= 0; j--)
			table[i * width + j] =
				a[i] === b[j]
					? (table[(i + 1) * width + j + 1] ?? 0) + 1
					: Math.max(table[(i + 1) * width + j] ?? 0, table[i * width + j + 1] ?? 0);
	const out: Segment[] = [];
	let i = 0;
	let j = 0;
	while (i < a.length || j < b.length) {
		if (i < a.length && j < b.length && a[i] === b[j]) {
			out.push({ op: "same", text: a[i++] ?? "" });
			j++;
		} else if (i < a.length && (j === b.length || (table[(i + 1) * width + j] ?? 0) >= (table[i * width + j + 1] ?? 0))) {
			out.push({ op: "del", text: a[i++] ?? "" });
		} else out.push({ op: "add", text: b[j++] ?? "" });
	}
	return out;
}

function merge(segments: readonly Segment[]): Segment[] {
	const out: Segment[] = [];
	for (const segment of segments) {
		if (segment.text === "") continue;
		const last = out.at(-1);
		if (last && last.op === segment.op) out[out.length - 1] = { op: last.op, text: last.text + segment.text };
		else out.push(segment);
	}
	return out;
}

/** The diff as plain text: removals `[-…-]`, additions `{+…+}` (for the shell and JSON-free output). */
export function diffText(segments: readonly Segment[]): string {
	return segments.map((s) => (s.op === "same" ? s.text : s.op === "del" ? `[-${s.text}-]` : `{+${s.text}+}`)).join("");
}

const KIND_WORD = { tools: "tool", prompts: "prompt", templates: "resource template", instructions: "instructions" } as const;

/** What a pending definition is: `tool "x"`, `prompt "y"`, `instructions`. */
export function pendingWhat(pending: Pick<Pending, "kind" | "name">): string {
	return pending.kind === "instructions" ? "instructions" : `${KIND_WORD[pending.kind]} "${escapeName(pending.name)}"`;
}

/** One line naming a pending definition and why it is withheld. */
export function pendingTitle(pending: Pending): string {
	const what = pendingWhat(pending);
	switch (pending.reason) {
		case "changed":
			return `${what}: changed since approved`;
		case "new":
			return `${what}: new`;
		case "external":
			return `${what}: its schema has an external $ref (${escapeName(pending.external ?? "")}), which cannot be pinned (never fetched)`;
		default:
			return `${what}: withheld, the pins file cannot be read`;
	}
}

/** A pending definition's diff: the approved one against the new one (all new when none was approved). */
export function pendingDiff(pending: Pending): readonly Segment[] {
	return wordDiff(shownDefinition(pending.approved), shownDefinition(pending.definition));
}
