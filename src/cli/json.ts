/**
 * JSON on stdout. `JSON.stringify` escapes only U+0000–U+001F: C1 controls (U+009B opens a terminal
 * sequence), bidi overrides and isolates, zero-width and other invisible characters would reach the
 * terminal raw. Every character the text output strips or escapes is written as `\uXXXX` here.
 */

const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/gu;

const unit = (code: number) => `\\u${code.toString(16).padStart(4, "0")}`;

/**
 * One JSON document and a newline; the hidden characters escaped. Tab, line feed and carriage return
 * are left: `JSON.stringify` escapes them inside strings, so raw ones are the indentation's.
 */
export function jsonLine(value: unknown, indent?: number): string {
	const text = JSON.stringify(value, null, indent) ?? "null";
	const escaped = text.replace(HIDDEN, (char) =>
		char === "\n" || char === "\r" || char === "\t"
			? char
			: char
					.split("")
					.map((code) => unit(code.charCodeAt(0)))
					.join(""),
	);
	return `${escaped}\n`;
}

/** The error document of `--json`: `{"error":{"message","code"}}`. */
export function jsonError(message: string, code: string): string {
	return jsonLine({ error: { message, code } });
}
