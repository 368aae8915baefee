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

/** One open object or array: its path, the keys met so far and where its next value goes. */
class Frame {
	readonly object: boolean;
	readonly path: readonly string[];
	readonly start: number;
	readonly keys = new Map<string, number[]>();
	#key?: string;
	#index = 0;
	#expectKey: boolean;
	/** Something inside opened deeper than the limit: this value is blanked out when it closes. */
	#deep = false;

	constructor(object: boolean, path: readonly string[], start: number) {
		this.object = object;
		this.path = path;
		this.start = start;
		this.#expectKey = object;
	}

	get key(): string | undefined {
		return this.#key;
	}

	get deep(): boolean {
		return this.#deep;
	}

	/** The path of a value opened inside this one. */
	childPath(): readonly string[] {
		return [...this.path, this.object ? (this.#key ?? "") : `[${this.#index}]`];
	}

	/** A string here is a key (not a value). */
	get expectsKey(): boolean {
		return this.object && this.#expectKey;
	}

	/** A key, where one is expected, recorded with its line. */
	named(name: string, line: number): void {
		const lines = this.keys.get(name);
		if (lines) lines.push(line);
		else this.keys.set(name, [line]);
		this.#key = name;
		this.#expectKey = false;
	}

	comma(): void {
		if (this.object) this.#expectKey = true;
		else this.#index += 1;
	}

	/** Marks this value too deep; true the first time. */
	markDeep(): boolean {
		if (this.#deep) return false;
		this.#deep = true;
		return true;
	}
}

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

const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/** Brackets in a run from `from` (its characters other than whitespace); a loop: a regex replace is 100x slower. */
function bracketCount(run: string, from = 0): number {
	let count = 0;
	for (let at = from; at < run.length; at += 1) if (!isSpace(run.charCodeAt(at))) count += 1;
	return count;
}

function keyOf(token: string): string {
	if (!token.includes("\\") && token.length > 1 && token.endsWith('"')) return token.slice(1, -1);
	try {
		return JSON.parse(token) as string;
	} catch {
		return token.slice(1, -1); // Not valid JSON: JSON.parse reports the file anyway.
	}
}

/** Newlines in `text` between `start` and `end`. */
function newlines(text: string, start: number, end: number): number {
	let count = 0;
	for (let at = start; at < end; at += 1) if (text.charCodeAt(at) === 0x0a) count += 1;
	return count;
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

/** Where a run's brackets after the first `count` begin. */
function after(run: string, count: number): number {
	if (count === 0 || bracketCount(run) === run.length) return count;
	let at = 0;
	for (let seen = 0; seen < count; at += 1) if (isClose(run.charAt(at))) seen += 1;
	return at;
}

/** Keys given twice and values nested too deep, in one pass; see the file comment. */
export function scanJson(text: string): Scan {
	const stack: Frame[] = [];
	const duplicates: Duplicate[] = [];
	const tooDeep: TooDeep[] = [];
	const spans: [number, number][] = [];
	/** Containers open beyond `LIMIT` (counted, not tracked as frames). */
	let beyond = 0;
	// Line numbers of increasing offsets, counted once over the text.
	let line = 1;
	let lineStart = 0;
	const lineAt = (offset: number): number => {
		for (let next = text.indexOf("\n", lineStart); next !== -1 && next < offset; next = text.indexOf("\n", lineStart)) {
			line += 1;
			lineStart = next + 1;
		}
		return line;
	};
	const pop = (end: number): void => {
		const frame = stack.pop();
		if (!frame) return;
		for (const [key, lines] of frame.keys) if (lines.length > 1) duplicates.push({ path: frame.path, key, lines });
		if (frame.deep) spans.push([frame.start, end]);
	};
	/** A run of opening brackets: frames up to `LIMIT`, the rest counted and their field marked. */
	const opens = (run: string, offset: number): void => {
		let at = 0;
		for (; at < run.length && beyond === 0 && stack.length < LIMIT; at += 1) {
			const char = run.charAt(at);
			if (isOpen(char)) stack.push(new Frame(char === "{", stack.at(-1)?.childPath() ?? [], offset + at));
		}
		const rest = bracketCount(run, at);
		if (rest === 0) return;
		if (beyond === 0 && stack[FIELD_DEPTH - 1]?.markDeep()) tooDeep.push(whereDeep(stack));
		beyond += rest;
	};
	/** A run of closing brackets: the counted ones first, then frames. */
	const closes = (run: string, offset: number): void => {
		const counted = Math.min(beyond, bracketCount(run));
		beyond -= counted;
		for (let at = after(run, counted); at < run.length; at += 1) if (isClose(run.charAt(at))) pop(offset + at + 1);
	};
	for (const match of text.matchAll(TOKEN)) {
		const [token] = match;
		const code = token.charCodeAt(0);
		const top = stack.at(-1);
		if (code === QUOTE) {
			if (beyond === 0 && top?.expectsKey) top.named(keyOf(token), lineAt(match.index));
		} else if (code === COMMA) {
			if (beyond === 0) top?.comma();
		} else if (isOpen(token.charAt(0))) opens(token, match.index);
		else closes(token, match.index);
	}
	// An unclosed file: what is still open ends with the text (JSON.parse then reports where).
	while (stack.length > 0) pop(text.length);
	spans.sort((a, b) => a[0] - b[0]);
	return { text: blank(text, spans), duplicates, tooDeep };
}

/** `lines 3 and 5`, `lines 2, 4 and 9`; past five uses, `lines 1, 2, 3, 4, … and 900 (1000 uses)`. */
export function linesText(lines: readonly number[]): string {
	if (lines.length <= 5) return `lines ${lines.slice(0, -1).join(", ")} and ${lines.at(-1)}`;
	return `lines ${lines.slice(0, 4).join(", ")}, … and ${lines.at(-1)}`;
}
