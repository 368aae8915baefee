/**
 * Everything a server returns passes through here before the model, the user or a log sees it:
 * terminal escapes stripped, text bounded to Pi's inline limits, the rest in private overflow
 * files, images capped, blobs saved rather than inlined.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const NEEDS_STRIPPING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const ESC = 0x1b;
const BEL = 0x07;
const LF = 0x0a;
const ST = 0x9c;
const BACKSLASH = 0x5c;
/** Second byte of a 7-bit OSC, DCS, SOS, PM or APC opener: `]`, `P`, `X`, `^`, `_`. */
const STRING_7 = new Set([0x5d, 0x50, 0x58, 0x5e, 0x5f]);
/** The 8-bit DCS, SOS, OSC, PM and APC openers. */
const STRING_8 = new Set([0x90, 0x98, 0x9d, 0x9e, 0x9f]);

const within = (code: number, low: number, high: number) => code >= low && code <= high;

/** After a CSI opener: parameters, intermediates, and the final byte when there is one. */
function csiEnd(text: string, from: number): number {
	const at = { i: from };
	while (within(text.charCodeAt(at.i), 0x30, 0x3f)) at.i += 1;
	while (within(text.charCodeAt(at.i), 0x20, 0x2f)) at.i += 1;
	return within(text.charCodeAt(at.i), 0x40, 0x7e) ? at.i + 1 : at.i;
}

/** After a lone ESC: intermediates and the final byte when there is one (charset selection, RIS...). */
function escEnd(text: string, from: number): number {
	const at = { i: from };
	while (within(text.charCodeAt(at.i), 0x20, 0x2f)) at.i += 1;
	return within(text.charCodeAt(at.i), 0x30, 0x7e) ? at.i + 1 : at.i;
}

/**
 * The body of a string sequence from `from`: `end` when it ends (after BEL, ST or ESC \, or, for a
 * 7-bit opener only, at the line end or the end of the text, where it is unterminated: the line end
 * stays), else `stop`, where another ESC or a C1 byte cut it short. A doubled ESC (tmux passthrough)
 * belongs to a 7-bit body. No body crosses a line end, so an unterminated sequence costs at most the
 * rest of its line.
 */
function stringBody(text: string, from: number, sevenBit: boolean): Readonly<{ end: number } | { stop: number }> {
	const at = { i: from };
	for (;;) {
		if (at.i >= text.length) return sevenBit ? { end: text.length } : { stop: at.i };
		const code = text.charCodeAt(at.i);
		if (code === LF) return sevenBit ? { end: at.i } : { stop: at.i };
		if (code === BEL || code === ST) return { end: at.i + 1 };
		if (code === ESC) {
			const next = text.charCodeAt(at.i + 1);
			if (next === BACKSLASH) return { end: at.i + 2 };
			if (!sevenBit || next !== ESC) return { stop: at.i };
			at.i += 2;
		} else if (within(code, 0x80, 0x9f)) {
			return { stop: at.i };
		} else {
			at.i += 1;
		}
	}
}

/**
 * End of the control sequence at `start`. `scan.plain` is where the last 7-bit string that was cut
 * short stopped: an opener inside that body would be cut at the same place (it starts aligned with
 * the body's ESC pairs), so it is removed as a two-byte escape without scanning the body again. That
 * keeps the whole scan linear, however many openers a line holds.
 */
function sequenceEnd(text: string, start: number, scan: { plain: number }): number {
	const code = text.charCodeAt(start);
	if (code === 0x9b) return csiEnd(text, start + 1);
	if (STRING_8.has(code)) {
		// An 8-bit opener is more often mis-decoded text: removed with its body only when terminated.
		const body = stringBody(text, start + 1, false);
		return "end" in body ? body.end : start + 1;
	}
	if (code !== ESC) return start + 1;
	const next = text.charCodeAt(start + 1);
	if (next === 0x5b) return csiEnd(text, start + 2);
	if (STRING_7.has(next) && start >= scan.plain) {
		const body = stringBody(text, start + 2, true);
		if ("end" in body) return body.end;
		// Cut short by another escape: only the opener goes; the body stays as inert text.
		scan.plain = body.stop;
		return start + 2;
	}
	return escEnd(text, start + 1);
}

/**
 * Removes every terminal control sequence; keeps `\n` and `\t`. `\r\n` becomes `\n`. Hand-written
 * because no well-kept library strips the whole set (OSC/DCS/APC/PM/SOS strings, 8-bit C1 forms,
 * lone ESC) rather than only SGR colours, and a backtracking regex is quadratic on openers that never
 * close. One pass: each character is looked at a bounded number of times.
 */
export function stripTerminal(text: string): string {
	// The test is one linear scan without allocation: clean text (the usual case, and a 50 MiB
	// result) is returned as is instead of being copied.
	if (!NEEDS_STRIPPING.test(text)) return text;
	// No separate `\r\n` pass: a CR is a control removed on its own (also inside a string body, which
	// the line end after it closes all the same).
	// Kept text in runs joined every few thousand pieces: a result full of colour codes would otherwise
	// hold millions of small slices at once.
	const runs: string[] = [];
	const pieces: string[] = [];
	const scan = { from: 0, plain: 0 };
	const finder = new RegExp(CONTROL);
	for (;;) {
		finder.lastIndex = scan.from;
		const found = finder.exec(text);
		if (!found) break;
		if (found.index > scan.from) pieces.push(text.slice(scan.from, found.index));
		if (pieces.length >= 4096) runs.push(pieces.splice(0).join(""));
		scan.from = sequenceEnd(text, found.index, scan);
	}
	pieces.push(text.slice(scan.from));
	runs.push(pieces.join(""));
	return runs.join("");
}

/** `text` on one line: escapes stripped, whitespace collapsed, cut at `max` characters with an ellipsis. */
export function oneLine(text: string | undefined, max = 120): string {
	const line = stripTerminal(text ?? "")
		.replace(/\s+/g, " ")
		.trim();
	return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * Characters a name never shows raw: controls, line and paragraph separators, format characters
 * (bidi embeddings, overrides and isolates, zero-width), the other default-ignorables (tag
 * characters U+E0000–U+E007F, variation selectors) and lone surrogates. They could forge listing
 * lines, rewrite the terminal or hide text from the user while the model reads it.
 */
const HIDDEN_IN_NAME = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/gu;
const SHORT_ESCAPES: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * A name (server, tool, prompt, argument, resource) as the model and the user see it: every
 * character of `HIDDEN_IN_NAME` written as a JavaScript escape (`\n`, `\u001b`, `\u{e0041}`), the
 * rest unchanged. Clean names (the usual case) are returned as they are.
 */
export function escapeName(name: string): string {
	return name.replace(HIDDEN_IN_NAME, (char) => {
		const short = SHORT_ESCAPES[char];
		if (short) return short;
		const code = char.codePointAt(0) ?? 0;
		return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
	});
}

/** Longest message (in characters) that an error or notice may carry from a remote source. */
export const MAX_MESSAGE_CHARS = 2000;

/** Where a name starts: not inside a word, but right after a URL-encoded byte (`%3F`, `%22`…). */
const START = String.raw`(?:(?<=%[0-9A-Fa-f]{2})|(?<![A-Za-z0-9_]))`;
/** A quote, plain or URL-encoded. */
const QUOTE = String.raw`(?:["']|%22|%27)`;
/** Spaces, plain or URL-encoded. */
const SPACE = String.raw`(?:\s|%20|\+)`;
/** `=` or `:`, plain or URL-encoded, with optional spaces around it. */
const ASSIGN = String.raw`${SPACE}*(?:[=:]|%3D|%3A)${SPACE}*`;
/** A value up to the next separator; URL-encoded separators (`&`, quotes, `,`, `}`, space) end it too. */
const VALUE = String.raw`(?:[^\s"'&,}%]|%(?!26|22|27|2C|7D|20)[0-9A-Fa-f]{2})+`;
/** Parameter names whose value is a credential: snake_case, camelCase and kebab-case spellings. */
const SECRET_NAMES = [
	"registration[_-]?access[_-]?token",
	"access[_-]?token",
	"refresh[_-]?token",
	"id[_-]?token",
	"client[_-]?secret",
	"code[_-]?verifier",
	"(?:x-)?api[_-]?key",
	"password",
	"code",
].join("|");

/**
 * Secret-looking fragments that never belong in a message, wherever they come from: the value of an
 * `Authorization` header (any scheme), `Bearer` and `Basic` credentials, and credential parameters in
 * JSON, headers, query strings and form bodies, plain or URL-encoded. The `Basic` pattern needs a
 * base64-looking value (a digit, `+`, `/` or `=`), so that prose such as "Basic authentication" stays.
 */
const SECRET_PATTERNS: readonly RegExp[] = [
	new RegExp(
		String.raw`(${START}authorization${QUOTE}?${ASSIGN}${QUOTE}?)[A-Za-z-]*${SPACE}*${VALUE}(?:,?${SPACE}*[A-Za-z-]+=${VALUE})*`,
		"gi",
	),
	new RegExp(String.raw`(${START}Bearer${SPACE}+)[A-Za-z0-9._~+/=-]+`, "gi"),
	new RegExp(String.raw`(${START}Basic${SPACE}+)(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{6,}={0,2}`, "gi"),
	new RegExp(String.raw`(${START}(?:${SECRET_NAMES})${QUOTE}?${ASSIGN}${QUOTE}?)${VALUE}`, "gi"),
];

/**
 * The one sanitiser for text that reaches the model or the user from an error or a remote
 * source: escapes stripped, known secret values and secret-looking fragments redacted, length
 * bounded.
 */
export function sanitize(text: string, secrets: readonly string[] = []): string {
	// A remote HTML page (an error page quoted by the SDK) is never passed on, only its absence noted.
	const stripped = stripTerminal(text).replace(/<(?:!doctype\s+html|html)\b[\s\S]*?(?:<\/html>|$)/gi, "[HTML page omitted]");
	// Longest first: a secret that contains another is never left half redacted.
	const redacted = secrets
		.filter((secret) => secret.length >= 4)
		.sort((a, b) => b.length - a.length)
		.reduce((acc, secret) => acc.split(secret).join("[redacted]"), stripped);
	// The patterns run on a window a few times the bound only (they cost more per character than the
	// plain scans above); a match crossing the window's end is still redacted up to it.
	const window = redacted.length > MAX_MESSAGE_CHARS * 4 ? redacted.slice(0, MAX_MESSAGE_CHARS * 4) : redacted;
	const cleaned = SECRET_PATTERNS.reduce((acc, pattern) => acc.replace(pattern, "$1[redacted]"), window);
	if (cleaned.length <= MAX_MESSAGE_CHARS && window === redacted) return cleaned;
	// Never leave half of a surrogate pair at the cut.
	const bound = Math.min(MAX_MESSAGE_CHARS, cleaned.length);
	const end = /[\uD800-\uDBFF]/.test(cleaned.charAt(bound - 1)) ? bound - 1 : bound;
	return `${cleaned.slice(0, end)}… [cut]`;
}

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

const SLICE = 1024 * 1024;

/** A string in slices of about 1 MiB that never split a surrogate pair; bytes as they are. */
function* slices(piece: string | Uint8Array): Generator<string | Uint8Array> {
	if (typeof piece !== "string" || piece.length <= SLICE) {
		yield piece;
		return;
	}
	const at = { start: 0 };
	while (at.start < piece.length) {
		const end = Math.min(piece.length, at.start + SLICE);
		const safe = end < piece.length && /[\uD800-\uDBFF]/.test(piece.charAt(end - 1)) ? end - 1 : end;
		yield piece.slice(at.start, safe);
		at.start = safe;
	}
}

function skipContinuation(buf: Buffer, from: number): number {
	const limit = Math.min(buf.length, from + 3);
	const found = { at: from };
	while (found.at < limit && ((buf[found.at] ?? 0) & 0xc0) === 0x80) found.at += 1;
	return found.at;
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

export function formatBytes(bytes: number): string {
	if (bytes < 1024) return `${bytes} B`;
	if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
	return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

// ---------------------------------------------------------------------------------------------
// Overflow files

export type Saved = Readonly<{ path: string; bytes: number }>;
export type Refused = Readonly<{ refused: string }>;

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
	const maxBytes = options.maxBytes ?? OVERFLOW_MAX_BYTES;
	const state: { dir?: Promise<string>; used: number; count: number; disposed: boolean } = {
		used: 0,
		count: 0,
		disposed: false,
	};
	const directory = (): Promise<string> => {
		state.dir ??= (async () => {
			const dir = join(options.baseDir ?? tmpdir(), `pi-mcp-${process.pid}-${randomBytes(6).toString("hex")}`);
			await mkdir(dir, { mode: 0o700 });
			await chmod(dir, 0o700);
			return dir;
		})();
		return state.dir;
	};
	return {
		async save(name, pieces) {
			if (state.disposed) return { refused: "the session has ended" };
			const bytes = pieces.reduce((sum, piece) => sum + (typeof piece === "string" ? Buffer.byteLength(piece) : piece.length), 0);
			if (state.used + bytes > maxBytes) {
				return {
					refused: `this session's overflow limit of ${formatBytes(maxBytes)} is reached (${formatBytes(state.used)} used)`,
				};
			}
			state.used += bytes;
			state.count += 1;
			const safe = name.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 80);
			const path = join(await directory(), `${String(state.count).padStart(3, "0")}-${safe}`);
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
		},
		used: () => state.used,
		async dispose() {
			state.disposed = true;
			const dir = state.dir;
			state.dir = undefined;
			if (dir) await rm(await dir, { recursive: true, force: true });
		},
	};
}

// ---------------------------------------------------------------------------------------------
// Inline text

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
