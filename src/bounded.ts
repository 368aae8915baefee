/**
 * Text kept within a bound: the head of a result within Pi's inline limits (`cutHead`) and the tail
 * of a child's stderr (`TailBuffer`).
 */
import { INLINE_MAX_BYTES, INLINE_MAX_LINES, stripTerminal } from "./output.ts";

/** A bounded tail of a byte stream (a child's stderr), decoded lazily and stripped of escapes. */
export class TailBuffer {
	readonly #max: number;
	#chunks: Buffer[] = [];
	#size = 0;

	constructor(maxBytes = 4096) {
		this.#max = maxBytes;
	}

	push(chunk: Buffer | string): void {
		const buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
		this.#chunks.push(buf);
		this.#size += buf.length;
		while (this.#size - (this.#chunks[0]?.length ?? 0) >= this.#max && this.#chunks.length > 1) {
			this.#size -= this.#chunks.shift()?.length ?? 0;
		}
	}

	clear(): void {
		this.#chunks = [];
		this.#size = 0;
	}

	/** The last bytes as text, escapes stripped (after joining, so sequences split across chunks go too). */
	text(): string {
		const all = Buffer.concat(this.#chunks);
		const cut = all.length > this.#max;
		// Start at a character boundary: skip UTF-8 continuation bytes at the cut.
		const start = cut ? skipContinuation(all, all.length - this.#max) : 0;
		const tail = all.subarray(start).toString("utf8");
		const clean = stripTerminal(tail);
		const body = cut ? clean.slice(clean.indexOf("\n") + 1) : clean;
		return body.trimEnd();
	}
}

function skipContinuation(buf: Buffer, from: number): number {
	const limit = Math.min(buf.length, from + 3);
	const found = { at: from };
	while (found.at < limit && ((buf[found.at] ?? 0) & 0xc0) === 0x80) found.at += 1;
	return found.at;
}

export type Cut = Readonly<{
	text: string;
	truncated: boolean;
	shownBytes: number;
	shownLines: number;
	totalBytes: number;
	totalLines: number;
}>;

function countLines(text: string): number {
	if (text.length === 0) return 0;
	return countNewlines(text) + (text.endsWith("\n") ? 0 : 1);
}

/** The first `maxBytes` bytes of `text`, never splitting a UTF-8 character or a surrogate pair. */
function headBytes(text: string, maxBytes: number): string {
	// A slice of maxBytes UTF-16 units holds at least maxBytes bytes, so it contains the answer.
	const slice = text.slice(0, maxBytes);
	const buf = Buffer.from(slice, "utf8");
	if (buf.length <= maxBytes) return slice;
	const end = Array.from({ length: 4 }).reduce<number>(
		(cut) => (cut > 0 && ((buf[cut] ?? 0) & 0xc0) === 0x80 ? cut - 1 : cut),
		maxBytes,
	);
	return buf.subarray(0, end).toString("utf8");
}

/**
 * Keeps the head of the joined pieces within the byte and line limits. Linear in what it keeps:
 * each piece is sliced, never the whole result copied. Prefers cutting at a line end.
 */
export function cutHead(pieces: readonly string[], maxBytes = INLINE_MAX_BYTES, maxLines = INLINE_MAX_LINES): Cut {
	const totalBytes = pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0);
	const totalLines = pieceLines(pieces);
	if (totalBytes <= maxBytes && totalLines <= maxLines) {
		return { text: pieces.join(""), truncated: false, shownBytes: totalBytes, shownLines: totalLines, totalBytes, totalLines };
	}
	const kept: string[] = [];
	const budget = { bytes: maxBytes, lines: maxLines };
	for (const piece of pieces) {
		if (budget.bytes <= 0 || budget.lines <= 0) break;
		const lineEnd = nthNewline(piece, budget.lines);
		const byLines = lineEnd === -1 ? piece : piece.slice(0, lineEnd + 1);
		const head = headBytes(byLines, budget.bytes);
		kept.push(head);
		budget.bytes -= Buffer.byteLength(head);
		budget.lines -= countNewlines(head);
		if (head.length < piece.length) break;
	}
	const joined = kept.join("");
	const lastNewline = joined.lastIndexOf("\n");
	const text = lastNewline > 0 && !joined.endsWith("\n") ? joined.slice(0, lastNewline + 1) : joined;
	return {
		text,
		truncated: true,
		shownBytes: Buffer.byteLength(text),
		shownLines: countLines(text),
		totalBytes,
		totalLines,
	};
}

/** Counts newlines without allocating (a `match` would build one array slot per line). */
function countNewlines(text: string): number {
	const state = { count: 0, at: text.indexOf("\n") };
	while (state.at !== -1) {
		state.count += 1;
		state.at = text.indexOf("\n", state.at + 1);
	}
	return state.count;
}

/** Lines of the concatenation of pieces, without building it. */
function pieceLines(pieces: readonly string[]): number {
	const newlines = pieces.reduce((sum, piece) => sum + countNewlines(piece), 0);
	const last = [...pieces].reverse().find((piece) => piece.length > 0);
	if (last === undefined) return 0;
	return newlines + (last.endsWith("\n") ? 0 : 1);
}

/** Index of the n-th newline (1-based), or -1. */
function nthNewline(text: string, n: number): number {
	const found = { index: -1, seen: 0 };
	while (found.seen < n) {
		const next = text.indexOf("\n", found.index + 1);
		if (next === -1) return -1;
		found.index = next;
		found.seen += 1;
	}
	return found.index;
}
