/**
 * What a server returns is made safe to show here: terminal escapes stripped, names escaped, the
 * inline limits, and the private overflow files that hold what does not fit inline (redaction is in
 * redact.ts, the head and tail cuts in bounded.ts).
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
