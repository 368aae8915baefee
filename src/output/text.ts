/**
 * Text from elsewhere made safe to show here, the one copy of each rule: terminal escapes stripped
 * (`stripTerminal`), names escaped (`escapeName`), text put on one line (`oneLine`, `shortText`), the
 * sanitiser for errors and remote notices (`sanitize`: bidi escaped, known secrets and secret-looking
 * fragments redacted, length bounded), which stderr lines say what went wrong (`isTelling`), and byte
 * counts for people (`formatBytes`). Imports only the exact-value rule (`redact.ts`): every other room may use it.
 */

import { REDACTED, redactExact } from "./redact.ts";

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

/** Past a run of code units from `low` to `high` starting at `at`. */
function skip(text: string, at: number, low: number, high: number): number {
	let end = at;
	while (within(text.charCodeAt(end), low, high)) end += 1;
	return end;
}

/** Past the final byte at `at` when it is from `low` to `high`, else `at`. */
const endAfter = (text: string, at: number, low: number, high: number): number =>
	within(text.charCodeAt(at), low, high) ? at + 1 : at;

/** After a CSI opener: parameters, intermediates, and the final byte when there is one. */
const csiEnd = (text: string, from: number): number =>
	endAfter(text, skip(text, skip(text, from, 0x30, 0x3f), 0x20, 0x2f), 0x40, 0x7e);

/** After a lone ESC: intermediates and the final byte when there is one (charset selection, RIS...). */
const escEnd = (text: string, from: number): number => endAfter(text, skip(text, from, 0x20, 0x2f), 0x30, 0x7e);

/**
 * The body of a string sequence from `from`: `end` when it ends (after BEL, ST or ESC \, or, for a
 * 7-bit opener only, at the line end or the end of the text, where it is unterminated: the line end
 * stays), else `stop`, where another ESC or a C1 byte cut it short. A doubled ESC (tmux passthrough)
 * belongs to a 7-bit body. No body crosses a line end, so an unterminated sequence costs at most the
 * rest of its line.
 */
function stringBody(text: string, from: number, sevenBit: boolean): Readonly<{ end: number } | { stop: number }> {
	let at = from;
	for (;;) {
		if (at >= text.length) return sevenBit ? { end: text.length } : { stop: at };
		const code = text.charCodeAt(at);
		if (code === LF) return sevenBit ? { end: at } : { stop: at };
		if (code === BEL || code === ST) return { end: at + 1 };
		if (code === ESC) {
			const next = text.charCodeAt(at + 1);
			if (next === BACKSLASH) return { end: at + 2 };
			if (!sevenBit || next !== ESC) return { stop: at };
			at += 2;
		} else if (within(code, 0x80, 0x9f)) {
			return { stop: at };
		} else {
			at += 1;
		}
	}
}

/**
 * The text without its control sequences. Kept text in runs joined every few thousand pieces: a
 * result full of colour codes would otherwise hold millions of small slices at once.
 */
function withoutSequences(text: string): string {
	const runs: string[] = [];
	const pieces: string[] = [];
	const finder = new RegExp(CONTROL);
	// Where the last 7-bit string that was cut short stopped: an opener inside that body would be cut at
	// the same place (it starts aligned with the body's ESC pairs), so it is removed as a two-byte escape
	// without scanning the body again. That keeps the whole scan linear, however many openers a line holds.
	let plain = 0;
	/** End of the control sequence at `start`. */
	const sequenceEnd = (start: number): number => {
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
		if (STRING_7.has(next) && start >= plain) {
			const body = stringBody(text, start + 2, true);
			if ("end" in body) return body.end;
			// Cut short by another escape: only the opener goes; the body stays as inert text.
			plain = body.stop;
			return start + 2;
		}
		return escEnd(text, start + 1);
	};
	let from = 0;
	for (;;) {
		finder.lastIndex = from;
		const found = finder.exec(text);
		if (!found) break;
		if (found.index > from) pieces.push(text.slice(from, found.index));
		if (pieces.length >= 4096) runs.push(pieces.splice(0).join(""));
		from = sequenceEnd(found.index);
	}
	pieces.push(text.slice(from));
	runs.push(pieces.join(""));
	return runs.join("");
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
	return withoutSequences(text);
}

/**
 * Characters that make what the user sees differ from what the model reads: bidi marks, embeddings,
 * overrides and isolates (they reorder the display), and tag characters U+E0000–U+E007F (invisible
 * on screen, readable by a model: "ASCII smuggling"). Removed from a server's prose about itself
 * (descriptions, schemas); tool results keep them (a flag emoji is made of tag characters).
 */
const HIDDEN_IN_PROSE = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u{E0000}-\u{E007F}]/gu;

/** A server's prose as both the user and the model may see it: escapes stripped, `HIDDEN_IN_PROSE` removed. */
export function stripProse(text: string): string {
	return stripTerminal(text).replace(HIDDEN_IN_PROSE, "");
}

/** `text` on one line: escapes and hidden characters stripped, whitespace collapsed, cut at `max` characters with an ellipsis. */
export function oneLine(text: string | undefined, max = 120): string {
	const line = stripProse(text ?? "")
		.replace(/\s+/g, " ")
		.trim();
	return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Text on one line, escapes stripped, cut at a word boundary near `max` characters with `…`
 * (descriptions in listings, queries and errors quoted in them). */
export function shortText(text: string | undefined, max = 120): string {
	const line = oneLine(text, Number.POSITIVE_INFINITY);
	if (line.length <= max) return line;
	const head = line.slice(0, max - 1);
	const space = head.lastIndexOf(" ");
	// A word boundary unless the only one is far back (one very long word): then cut inside it.
	const cut = space >= max * 0.6 ? head.slice(0, space) : head;
	return `${cut.replace(/[\s,;:.–—-]+$/u, "")}…`;
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
	return name.replace(HIDDEN_IN_NAME, escapeChar);
}

/** One character as a JavaScript escape: `\n`, `\u202e`, `\u{e0041}`. */
function escapeChar(char: string): string {
	const short = SHORT_ESCAPES[char];
	if (short) return short;
	const code = char.codePointAt(0) ?? 0;
	return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * What an error or a stderr line never shows raw: bidi marks, embeddings, overrides and isolates
 * (`failed: boom ‮evil‬` reads backwards on screen), line and paragraph separators, and tag
 * characters (invisible, yet read by the model). Escaped as in names; zero-width joiners stay
 * (emoji are made of them) and line ends stay (stderr has lines).
 */
const HIDDEN_IN_MESSAGE = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u2028\u2029\u{E0000}-\u{E007F}]/gu;

// ---------------------------------------------------------------------------------------------
// Redaction

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
 * JSON, headers, query strings and form bodies, plain or URL-encoded. Group 1 is what stays; the
 * rest is redacted only when it looks like a secret (`looksSecret`), so that prose such as "Basic
 * authentication" or "use a bearer token" stays.
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
 * A value a machine made rather than a word: 6+ characters with a digit, a base64 or JWT character
 * (`+ / = ~`, a dot inside), or 24+ characters. Random tokens of 16+ characters nearly always hold a
 * digit (~3% of 20-character base62 strings have none), while the product's own words ("token",
 * "credentials", "invalid_grant") and short numbers ("code: 3") have neither.
 */
export function looksSecret(value: string): boolean {
	const core = value.replace(/[.,;:!?)\]}"']+$/, "");
	return core.length >= 24 || (core.length >= 6 && /\d|[+/=~]|\w\.\w/.test(core));
}

/**
 * Text the user reads whole before deciding (a confirm dialog's arguments): escapes stripped, bidi and tag
 * characters shown escaped, exact secret values redacted; never cut, and nothing else changed.
 */
export function showWhole(text: string, secrets: readonly string[] = []): string {
	return redactExact(stripTerminal(text), secrets).replace(HIDDEN_IN_MESSAGE, escapeChar);
}

/**
 * The one sanitiser for text that reaches the model or the user from an error or a remote
 * source: escapes stripped, bidi and tag characters escaped (`HIDDEN_IN_MESSAGE`), known secret
 * values and secret-looking fragments redacted, length bounded.
 */
export function sanitize(text: string, secrets: readonly string[] = []): string {
	// A remote HTML page (an error page quoted by the SDK) is never passed on, only its absence noted.
	const stripped = stripTerminal(text).replace(/<(?:!doctype\s+html|html)\b[\s\S]*?(?:<\/html>|$)/gi, "[HTML page omitted]");
	const redacted = redactExact(stripped, secrets).replace(HIDDEN_IN_MESSAGE, escapeChar);
	// The patterns run on a window a few times the bound only (they cost more per character than the
	// plain scans above); a match crossing the window's end is still redacted up to it.
	const window = redacted.length > MAX_MESSAGE_CHARS * 4 ? redacted.slice(0, MAX_MESSAGE_CHARS * 4) : redacted;
	const cleaned = SECRET_PATTERNS.reduce(
		(acc, pattern) =>
			acc.replace(pattern, (match: string, kept: string) =>
				looksSecret(match.slice(kept.length)) ? `${kept}${REDACTED}` : match,
			),
		window,
	);
	if (cleaned.length <= MAX_MESSAGE_CHARS && window === redacted) return cleaned;
	// Never leave half of a surrogate pair at the cut.
	const bound = Math.min(MAX_MESSAGE_CHARS, cleaned.length);
	const end = /[\uD800-\uDBFF]/.test(cleaned.charAt(bound - 1)) ? bound - 1 : bound;
	return `${cleaned.slice(0, end)}… [cut]`;
}

// ---------------------------------------------------------------------------------------------
// Lines that tell: in a server's stderr, the ones that say what went wrong

/** A line that says what went wrong: `Error: boom`, `fatal: …`, `… not found`. */
const TELLING =
	/\b(?:error|exception|fatal|panic|failed|failure|cannot|can't|unable|denied|refused|not found|no such|invalid|missing|traceback)\b/i;
/** A stack frame (JavaScript, Python), telling or not. */
const FRAME = /^\s+(?:at |File "|in )/;

/** The length a telling line is cut to. */
const TELLING_CHARS = 300;

/** Whether a line says what went wrong (and is not a stack frame). */
export function isTelling(line: string): boolean {
	return TELLING.test(line) && !FRAME.test(line);
}

/** A line cut to `TELLING_CHARS`. */
export function cutLine(line: string): string {
	return line.length > TELLING_CHARS ? `${line.slice(0, TELLING_CHARS - 1)}…` : line;
}

/** A byte count for people: `512 B`, `1.5 KiB`, `2.0 MiB`. */
export function formatBytes(bytes: number): string {
	if (bytes < 1024) return `${bytes} B`;
	if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
	return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
