/**
 * Everything a server sends passes through here before the model, the user or a log sees it.
 * This first version strips terminal control sequences and bounds message size; the output
 * limits, overflow files and image rules build on it.
 */

/**
 * Terminal escape and control sequences. Hand-written because no well-kept library strips the
 * whole set (OSC/DCS/APC/PM/SOS strings, 8-bit C1 forms, lone ESC) rather than only SGR colours.
 * Order matters: string sequences first, then CSI, then any remaining ESC pair, then lone controls.
 */
const ESCAPES = new RegExp(
	[
		// OSC, DCS, SOS, PM, APC strings (7-bit ESC x ... and 8-bit C1 openers), ended by BEL, ST or the end.
		"(?:\\u001b[\\]PX^_]|[\\u0090\\u0098\\u009d\\u009e\\u009f])[\\s\\S]*?(?:\\u0007|\\u001b\\\\|\\u009c|$)",
		// CSI (7-bit and 8-bit) with parameters and intermediates.
		"(?:\\u001b\\[|\\u009b)[\\u0030-\\u003f]*[\\u0020-\\u002f]*[\\u0040-\\u007e]?",
		// Other two-byte escapes (charset selection, keypad mode, RIS...).
		"\\u001b[\\u0020-\\u002f]*[\\u0030-\\u007e]?",
		// C0 controls except \t and \n, DEL, and the remaining C1 range.
		"[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f]",
	].join("|"),
	"g",
);

/** Removes every terminal control sequence; keeps `\n` and `\t`. `\r\n` becomes `\n`. */
export function stripTerminal(text: string): string {
	return text.replace(/\r\n/g, "\n").replace(ESCAPES, "");
}

/** Longest message (in characters) that an error or notice may carry from a remote source. */
export const MAX_MESSAGE_CHARS = 2000;

/** Secrets-looking fragments that never belong in a message: bearer tokens and OAuth parameters. */
const SECRET_PATTERNS: readonly RegExp[] = [
	/(\bBearer\s+)[A-Za-z0-9._~+/=-]+/gi,
	/(\b(?:access_token|refresh_token|id_token|client_secret|code|code_verifier|password)["']?\s*[=:]\s*["']?)[^\s"'&,}]+/gi,
];

/**
 * The one sanitiser for text that reaches the model or the user from an error or a remote
 * source: escapes stripped, known secret values and secret-looking fragments redacted, length
 * bounded.
 */
export function sanitize(text: string, secrets: readonly string[] = []): string {
	const stripped = stripTerminal(text);
	const redacted = secrets
		.filter((secret) => secret.length >= 4)
		.reduce((acc, secret) => acc.split(secret).join("[redacted]"), stripped);
	const cleaned = SECRET_PATTERNS.reduce((acc, pattern) => acc.replace(pattern, "$1[redacted]"), redacted);
	return cleaned.length > MAX_MESSAGE_CHARS ? `${cleaned.slice(0, MAX_MESSAGE_CHARS)}… [cut]` : cleaned;
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

	/** The last bytes as text, escapes stripped; a partial first line is dropped when cut. */
	text(): string {
		const all = Buffer.concat(this.#chunks);
		const cut = all.length > this.#max;
		const tail = (cut ? all.subarray(all.length - this.#max) : all).toString("utf8");
		const clean = stripTerminal(tail);
		const body = cut ? clean.slice(clean.indexOf("\n") + 1) : clean;
		return body.trimEnd();
	}
}
