/**
 * Redaction of text that reaches the model or the user from an error or a remote source: known
 * secrets and secret-looking fragments replaced, escapes stripped, length bounded.
 */
import { stripTerminal } from "./output.ts";

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
