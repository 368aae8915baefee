/**
 * A server's `instructions` (sent at connection) as pi-mcp passes them on: escapes and hidden characters
 * stripped, secrets redacted, at most `MAX_INSTRUCTIONS_CHARS` with the rest cut and said so. The model
 * gets them once per session (`Given`), with the first listing or `describe` of that server.
 */
import { sanitize, stripProse } from "../output/text.ts";

/** About 1 KiB: instructions steer the model; more would be a tax on every session that lists the server. */
export const MAX_INSTRUCTIONS_CHARS = 1024;

export function boundedInstructions(raw: string | undefined, secrets: readonly string[]): string | undefined {
	const text = stripProse(raw ?? "").trim();
	if (text === "") return undefined;
	if (text.length <= MAX_INSTRUCTIONS_CHARS) return sanitize(text, secrets);
	const end = /[\uD800-\uDBFF]/.test(text.charAt(MAX_INSTRUCTIONS_CHARS - 1))
		? MAX_INSTRUCTIONS_CHARS - 1
		: MAX_INSTRUCTIONS_CHARS;
	return `${sanitize(text.slice(0, end), secrets)}\n… (${text.length - end} more characters cut)`;
}

/** Which servers' instructions the model was given this session (the text, so changed ones are given again). */
export class Given {
	readonly #given = new Map<string, string>();

	/** The text the first time it is asked for on `server`; undefined after that, or when there is none. */
	once(server: string, text: string | undefined): string | undefined {
		if (text === undefined || this.#given.get(server) === text) return undefined;
		this.#given.set(server, text);
		return text;
	}
}
