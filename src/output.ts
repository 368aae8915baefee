/**
 * Where output ends: Pi's inline limits, the head cut, large texts encoded once for their file
 * (`encodeClean`), and the private overflow files (one 0700 directory per session, 0600 files, a
 * session cap) that hold what does not fit inline. What makes text safe to show is in text.ts; the
 * words for a refused file are `refusalText` in content.ts (this room imports nothing of pi-mcp, and
 * the renderer, which loads at start-up, needs none of it).
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SLICE = 1024 * 1024;

/** A string in slices of about 1 Mi UTF-16 units that never split a surrogate pair. */
function* textSlices(text: string): Generator<string> {
	if (text.length <= SLICE) {
		yield text;
		return;
	}
	yield* slicesFrom(text, 0);
}

/** `textSlices` from `start` on: one slice, then the rest (a few dozen deep for the largest text). */
function* slicesFrom(text: string, start: number): Generator<string> {
	if (start >= text.length) return;
	const end = Math.min(text.length, start + SLICE);
	const safe = end < text.length && /[\uD800-\uDBFF]/.test(text.charAt(end - 1)) ? end - 1 : end;
	yield text.slice(start, safe);
	yield* slicesFrom(text, safe);
}

/** A string in slices (`textSlices`); bytes as they are. */
function* slices(piece: string | Uint8Array): Generator<string | Uint8Array> {
	if (typeof piece === "string") yield* textSlices(piece);
	else yield piece;
}

// ---------------------------------------------------------------------------------------------
// Limits

/** Inline text limits: Pi's own defaults for tool output (`DEFAULT_MAX_BYTES`, `DEFAULT_MAX_LINES`). */
export const INLINE_MAX_BYTES = 50 * 1024;
export const INLINE_MAX_LINES = 2000;
/** Overflow files per session. */
export const OVERFLOW_MAX_BYTES = 50 * 1024 * 1024;
export const MAX_INLINE_IMAGES = 4;
/** Base64 characters of one inline image. */
export const MAX_IMAGE_BASE64 = 2 * 1024 * 1024;
export const INLINE_IMAGE_TYPES: readonly string[] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/** What the renderer needs to know about a result. */
export type OutputInfo = Readonly<{
	textBytes: number;
	images: number;
	truncated?: Readonly<{ shownBytes: number; totalBytes: number; shownLines: number; totalLines: number }>;
	overflowPath?: string;
	saved: readonly string[];
}>;

// ---------------------------------------------------------------------------------------------
// The head within the limits

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

/** `at`, moved back (at most `steps` bytes) to the first byte of the UTF-8 character it falls in. */
function charStart(buf: Buffer, at: number, steps: number): number {
	return steps > 0 && at > 0 && ((buf[at] ?? 0) & 0xc0) === 0x80 ? charStart(buf, at - 1, steps - 1) : at;
}

/** The first `maxBytes` bytes of `text`, never splitting a UTF-8 character or a surrogate pair. */
function headBytes(text: string, maxBytes: number): string {
	// A slice of maxBytes UTF-16 units holds at least maxBytes bytes, so it contains the answer.
	const slice = text.slice(0, maxBytes);
	const buf = Buffer.from(slice, "utf8");
	if (buf.length <= maxBytes) return slice;
	return buf.subarray(0, charStart(buf, maxBytes, 4)).toString("utf8");
}

/**
 * Keeps the head of the joined pieces within the byte and line limits. Linear in what it keeps:
 * each piece is sliced, never the whole result copied. Prefers cutting at a line end.
 */
export function cutHead(
	pieces: readonly string[],
	maxBytes = INLINE_MAX_BYTES,
	maxLines = INLINE_MAX_LINES,
	/** The totals of an earlier cut of the same pieces: a second cut (tighter limits) does not count again. */
	known?: Readonly<Pick<Cut, "totalBytes" | "totalLines">>,
): Cut {
	const { totalBytes, totalLines } = known ?? pieceTotals(pieces);
	if (totalBytes <= maxBytes && totalLines <= maxLines) {
		return { text: pieces.join(""), truncated: false, shownBytes: totalBytes, shownLines: totalLines, totalBytes, totalLines };
	}
	const kept: string[] = [];
	// What is left of the limits as the head is taken, piece by piece.
	let bytes = maxBytes;
	let lines = maxLines;
	for (const piece of pieces) {
		if (bytes <= 0 || lines <= 0) break;
		const lineEnd = nthNewline(piece, lines);
		const head = headBytes(lineEnd === -1 ? piece : piece.slice(0, lineEnd + 1), bytes);
		bytes -= Buffer.byteLength(head);
		lines -= countNewlines(head);
		kept.push(head);
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

/** How many newlines a text holds (`indexOf`: no allocation, where a `match` builds one slot per line). */
function countNewlines(text: string): number {
	let count = 0;
	for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count += 1;
	return count;
}

/** Bytes and newlines of a piece already encoded (`encodeClean`), so that they are not counted again. */
export type Counted = Readonly<{ bytes: Uint8Array; newlines: number }>;

/** Bytes and lines of the concatenation of pieces, without building it; `counted` by piece index. */
export function pieceTotals(
	pieces: readonly string[],
	counted: ReadonlyMap<number, Counted> = new Map(),
): Readonly<Pick<Cut, "totalBytes" | "totalLines">> {
	const totalBytes = pieces.reduce(
		(sum, piece, index) => sum + (counted.get(index)?.bytes.length ?? Buffer.byteLength(piece)),
		0,
	);
	const newlines = pieces.reduce((sum, piece, index) => sum + (counted.get(index)?.newlines ?? countNewlines(piece)), 0);
	const last = [...pieces].reverse().find((piece) => piece.length > 0);
	const totalLines = last === undefined ? 0 : newlines + (last.endsWith("\n") ? 0 : 1);
	return { totalBytes, totalLines };
}

/** Index of the n-th newline (1-based), or -1. */
function nthNewline(text: string, n: number): number {
	let at = -1;
	for (let seen = 0; seen < n; seen += 1) {
		at = text.indexOf("\n", at + 1);
		if (at === -1) return -1;
	}
	return at;
}

// ---------------------------------------------------------------------------------------------
// Large texts encoded once
//
// A text too long to show whole is checked once for anything `stripTerminal` (text.ts) removes. When it
// holds none, it is encoded once, for its overflow file, and its newlines are counted: the file gets those
// bytes as they are and the notice its totals, instead of a strip, a second byte count and a second
// encoding. Its verdict must match text.ts's: tests/fast/output.test.ts compares the two.

/** What `stripTerminal` removes on its own (text.ts's NEEDS_STRIPPING: this room imports nothing of src/). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const REMOVED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/**
 * The text's UTF-8 bytes and newlines, or undefined when it needs stripping. One regular-expression scan
 * (stops at the first removed character), one encoding (what writing the file needs anyway) and one
 * newline count; the bytes are dropped with the result.
 */
export function encodeClean(text: string): Counted | undefined {
	if (REMOVED.test(text)) return undefined;
	return { bytes: Buffer.from(text, "utf8"), newlines: countNewlines(text) };
}

// ---------------------------------------------------------------------------------------------
// Overflow files

export type Saved = Readonly<{ path: string; bytes: number }>;
/** Why a file was not saved: the session ended, or it would pass the session cap (`refusalText` words it). */
export type Refused = Readonly<{ refused: "ended" } | { refused: "cap"; capBytes: number; usedBytes: number }>;

export interface OverflowStore {
	/** Writes the pieces as one file (0600) in the session directory (0700), within the session cap. */
	save(name: string, pieces: readonly (string | Uint8Array)[]): Promise<Saved | Refused>;
	/** Bytes written so far this session. */
	used(): number;
	/** Removes the directory and everything in it. Idempotent. */
	dispose(): Promise<void>;
}

export type OverflowOptions = Readonly<{ baseDir?: string; maxBytes?: number }>;

/** The per-session overflow directory; created on first use, never before. */
export function createOverflowStore(options: OverflowOptions = {}): OverflowStore {
	const store = new OverflowDir(options);
	return { save: (name, pieces) => store.save(name, pieces), used: () => store.used, dispose: () => store.dispose() };
}

/** The overflow directory's one owner: where it is, what was saved, and whether the session ended. */
class OverflowDir {
	readonly #baseDir?: string;
	readonly #maxBytes: number;
	#dir?: Promise<string>;
	#used = 0;
	#count = 0;
	#disposed = false;

	constructor(options: OverflowOptions) {
		this.#baseDir = options.baseDir;
		this.#maxBytes = options.maxBytes ?? OVERFLOW_MAX_BYTES;
	}

	get used(): number {
		return this.#used;
	}

	async #make(): Promise<string> {
		const dir = join(this.#baseDir ?? tmpdir(), `pi-mcp-${process.pid}-${randomBytes(6).toString("hex")}`);
		await mkdir(dir, { mode: 0o700 });
		await chmod(dir, 0o700);
		return dir;
	}

	async save(name: string, pieces: readonly (string | Uint8Array)[]): ReturnType<OverflowStore["save"]> {
		if (this.#disposed) return { refused: "ended" };
		const bytes = pieces.reduce((sum, piece) => sum + (typeof piece === "string" ? Buffer.byteLength(piece) : piece.length), 0);
		if (this.#used + bytes > this.#maxBytes) {
			return { refused: "cap", capBytes: this.#maxBytes, usedBytes: this.#used };
		}
		this.#used += bytes;
		this.#count += 1;
		const safe = name.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 80);
		this.#dir ??= this.#make();
		const path = join(await this.#dir, `${String(this.#count).padStart(3, "0")}-${safe}`);
		// Written piece by piece, and strings in 1 MiB slices: a 50 MiB result is never joined into one
		// more copy, nor encoded into one more 50 MiB buffer.
		const handle = await open(path, "wx", 0o600);
		try {
			for (const piece of pieces) {
				for (const slice of slices(piece)) await handle.writeFile(slice);
			}
		} finally {
			await handle.close();
		}
		return { path, bytes };
	}

	async dispose(): Promise<void> {
		this.#disposed = true;
		const dir = this.#dir;
		this.#dir = undefined;
		if (dir) await rm(await dir, { recursive: true, force: true });
	}
}
