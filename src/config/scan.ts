/**
 * One linear pass over a configuration file's text, before `JSON.parse`: the keys given twice in one
 * object, and the values nested deeper than `MAX_DEPTH`. Nesting is bounded because nothing else
 * about it is: V8's `JSON.parse` spends ~3 µs per level and jsonc-parser (the error positions)
 * overflows its stack, while no field needs more than two levels. A too-deep value is blanked out
 * of the text (a `0`, its newlines and spaces, so later positions keep their line and column): the
 * rest of the file parses as usual and only its entry is refused.
 */

/** How deep a field's value may nest (arrays and objects); `args: ["a"]` is one level. */
export const MAX_DEPTH = 64;

/** A key given more than once in one object: the object's path, the key and the line of each use. */
export type Duplicate = Readonly<{ path: readonly string[]; key: string; lines: readonly number[] }>;

/** A value nested too deep: the entry and its field when it sits in one (`mcpServers.<entry>.<field>`). */
export type TooDeep = Readonly<{ entry?: string; field?: string }>;

export type Scan = Readonly<{
	/** The text with each too-deep value blanked out (what follows keeps its line and column). */
	text: string;
	duplicates: readonly Duplicate[];
	tooDeep: readonly TooDeep[];
}>;

type Frame = {
	readonly object: boolean;
	readonly path: readonly string[];
	readonly start: number;
	readonly keys: Map<string, number[]>;
	key?: string;
	index: number;
	expectKey: boolean;
	/** Something inside opened deeper than the limit: this value is blanked out when it closes. */
	deep: boolean;
};

/** A field's value sits at depth 4: the root object, `mcpServers`, the entry, the value. */
const FIELD_DEPTH = 4;
/** The deepest container tracked; deeper ones are counted only. */
const LIMIT = FIELD_DEPTH - 1 + MAX_DEPTH;

const QUOTE = 0x22;
const COMMA = 0x2c;
const isOpen = (char: string) => char === "{" || char === "[";
const isClose = (char: string) => char === "}" || char === "]";
/**
 * A string (to its closing quote or the end of the text), a run of opening or of closing brackets
 * (whitespace between them included), or a comma. Runs make a deeply nested file a few matches;
 * numbers, literals and colons are skipped by the regex engine.
 */
const TOKEN = /"[^"\\]*(?:\\[\s\S][^"\\]*)*"?|[{[][\s{[]*|[}\]][\s}\]]*|,/g;

/** Brackets in a run from `from` (its characters other than whitespace); a loop: a regex replace is 100x slower. */
function bracketCount(run: string, from = 0): number {
	const at = { i: from, count: 0 };
	for (; at.i < run.length; at.i += 1) {
		const code = run.charCodeAt(at.i);
		if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) at.count += 1;
	}
	return at.count;
}

function keyOf(token: string): string {
	if (!token.includes("\\") && token.length > 1 && token.endsWith('"')) return token.slice(1, -1);
	try {
		return JSON.parse(token) as string;
	} catch {
		return token.slice(1, -1); // Not valid JSON: JSON.parse reports the file anyway.
	}
}

/** Line numbers of increasing offsets, counted once over the text. */
function lineCounter(text: string): (offset: number) => number {
	const at = { offset: 0, line: 1 };
	return (offset) => {
		for (;;) {
			const next = text.indexOf("\n", at.offset);
			if (next === -1 || next >= offset) break;
			at.line += 1;
			at.offset = next + 1;
		}
		return at.line;
	};
}

/** Newlines in `text` between `start` and `end`. */
function newlines(text: string, start: number, end: number): number {
	const at = { i: start, count: 0 };
	for (; at.i < end; at.i += 1) if (text.charCodeAt(at.i) === 0x0a) at.count += 1;
	return at.count;
}

/**
 * Each span replaced by `0`, its newlines, and as many spaces as its last line is long: what follows
 * keeps its line and column (the positions in error messages), not its offset.
 */
function blank(text: string, spans: readonly (readonly [number, number])[]): string {
	if (spans.length === 0) return text;
	const pieces = spans.map(([start, end], i) => {
		const before = text.slice(i === 0 ? 0 : (spans[i - 1]?.[1] ?? 0), start);
		const lines = newlines(text, start, end);
		const last = lines === 0 ? end - start - 1 : end - text.lastIndexOf("\n", end - 1) - 1;
		return `${before}0${"\n".repeat(lines)}${" ".repeat(last)}`;
	});
	return `${pieces.join("")}${text.slice(spans.at(-1)?.[1] ?? 0)}`;
}

/** Which entry and field a too-deep value belongs to, from the open frames above it. */
function whereDeep(stack: readonly Frame[]): TooDeep {
	const [root, servers, entry] = stack;
	if (!root?.object || root.key !== "mcpServers" || !servers?.object) return {};
	return { entry: servers.key, field: entry?.object ? entry.key : undefined };
}

type State = {
	readonly text: string;
	readonly stack: Frame[];
	readonly duplicates: Duplicate[];
	readonly tooDeep: TooDeep[];
	readonly spans: [number, number][];
	readonly lineAt: (offset: number) => number;
	/** Containers open beyond `LIMIT` (counted, not tracked as frames). */
	beyond: number;
};

function push(state: State, code: number, start: number): void {
	const { stack } = state;
	const top = stack.at(-1);
	const path = top === undefined ? [] : [...top.path, top.object ? (top.key ?? "") : `[${top.index}]`];
	stack.push({ object: code === 0x7b, path, start, keys: new Map(), index: 0, expectKey: code === 0x7b, deep: false });
}

function pop(state: State, end: number): void {
	const frame = state.stack.pop();
	if (!frame) return;
	for (const [key, lines] of frame.keys) if (lines.length > 1) state.duplicates.push({ path: frame.path, key, lines });
	if (frame.deep) state.spans.push([frame.start, end]);
}

/** A run of opening brackets: frames up to `LIMIT`, the rest counted and their field marked. */
function opens(state: State, run: string, offset: number): void {
	const at = { j: 0 };
	for (; at.j < run.length && state.beyond === 0 && state.stack.length < LIMIT; at.j += 1) {
		const char = run.charAt(at.j);
		if (isOpen(char)) push(state, char.charCodeAt(0), offset + at.j);
	}
	const rest = bracketCount(run, at.j);
	if (rest === 0) return;
	const target = state.stack[FIELD_DEPTH - 1];
	if (state.beyond === 0 && target && !target.deep) {
		target.deep = true;
		state.tooDeep.push(whereDeep(state.stack));
	}
	state.beyond += rest;
}

/** Where a run's brackets after the first `count` begin. */
function after(run: string, count: number): number {
	if (count === 0 || bracketCount(run) === run.length) return count;
	const at = { j: 0, left: count };
	for (; at.left > 0; at.j += 1) if (isClose(run.charAt(at.j))) at.left -= 1;
	return at.j;
}

/** A run of closing brackets: the counted ones first, then frames. */
function closes(state: State, run: string, offset: number): void {
	const counted = Math.min(state.beyond, bracketCount(run));
	state.beyond -= counted;
	for (const at = { j: after(run, counted) }; at.j < run.length; at.j += 1) {
		if (isClose(run.charAt(at.j))) pop(state, offset + at.j + 1);
	}
}

function key(state: State, token: string, offset: number): void {
	const top = state.stack.at(-1);
	if (state.beyond > 0 || !top?.object || !top.expectKey) return;
	const name = keyOf(token);
	const lines = top.keys.get(name);
	if (lines) lines.push(state.lineAt(offset));
	else top.keys.set(name, [state.lineAt(offset)]);
	top.key = name;
	top.expectKey = false;
}

/** Keys given twice and values nested too deep, in one pass; see the file comment. */
export function scanJson(text: string): Scan {
	const state: State = { text, stack: [], duplicates: [], tooDeep: [], spans: [], lineAt: lineCounter(text), beyond: 0 };
	for (const match of text.matchAll(TOKEN)) {
		const token = match[0];
		const code = token.charCodeAt(0);
		if (code === QUOTE) key(state, token, match.index);
		else if (code === COMMA) {
			const top = state.stack.at(-1);
			if (state.beyond > 0 || !top) continue;
			if (top.object) top.expectKey = true;
			else top.index += 1;
		} else if (isOpen(token.charAt(0))) opens(state, token, match.index);
		else closes(state, token, match.index);
	}
	// An unclosed file: what is still open ends with the text (JSON.parse then reports where).
	while (state.stack.length > 0) pop(state, text.length);
	const spans = state.spans.sort((a, b) => a[0] - b[0]);
	return { text: blank(text, spans), duplicates: state.duplicates, tooDeep: state.tooDeep };
}

/** `lines 3 and 5`, `lines 2, 4 and 9`; past five uses, `lines 1, 2, 3, 4, … and 900 (1000 uses)`. */
export function linesText(lines: readonly number[]): string {
	if (lines.length <= 5) return `lines ${lines.slice(0, -1).join(", ")} and ${lines.at(-1)}`;
	return `lines ${lines.slice(0, 4).join(", ")}, … and ${lines.at(-1)}`;
}
