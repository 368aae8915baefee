/**
 * The bounded tail of a child's stderr (`TailBuffer`): what a failed server said last, kept within
 * a few KiB and shown stripped of escapes, plus the first few lines that say what went wrong (a
 * crash's `Error: boom` sits above a stack that may fill the tail). The head cut of results is
 * `cutHead` in output.ts.
 */
import { StringDecoder } from "node:string_decoder";
import { cutLine, isTelling, stripTerminal } from "../output/text.ts";

/** Telling lines kept from the start. */
const EARLY_LINES = 3;

/** A bounded tail of a byte stream (a child's stderr), decoded lazily and stripped of escapes. */
export class TailBuffer {
	readonly #max: number;
	#chunks: Buffer[] = [];
	#size = 0;
	/** The first telling lines, and the line being read while fewer are found (its first KiB). */
	#early: string[] = [];
	#line = "";
	#decoder = new StringDecoder("utf8");

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
		if (this.#early.length < EARLY_LINES) this.#scan(buf);
	}

	/** Looks for telling lines until there are enough: bounded work per byte, then none. */
	#scan(buf: Buffer): void {
		const pieces = this.#decoder.write(buf).split("\n");
		const complete = [`${this.#line}${pieces[0] ?? ""}`, ...pieces.slice(1, -1)];
		const rest = pieces.length > 1 ? (pieces.at(-1) ?? "") : complete.pop();
		this.#line = (rest ?? "").slice(0, 1024);
		for (const raw of complete) {
			const line = stripTerminal(raw).trimEnd();
			if (this.#early.length < EARLY_LINES && isTelling(line)) this.#early.push(cutLine(line));
		}
	}

	clear(): void {
		this.#chunks = [];
		this.#size = 0;
		this.#early = [];
		this.#line = "";
		this.#decoder = new StringDecoder("utf8");
	}

	/**
	 * The last bytes as text, escapes stripped (after joining, so sequences split across chunks go
	 * too); the first telling lines above them, then `…`, when the tail no longer holds them.
	 */
	text(): string {
		const all = Buffer.concat(this.#chunks);
		const cut = all.length > this.#max;
		// Start at a character boundary: skip UTF-8 continuation bytes at the cut.
		const start = cut ? skipContinuation(all, all.length - this.#max) : 0;
		const tail = all.subarray(start).toString("utf8");
		const clean = stripTerminal(tail);
		const body = (cut ? clean.slice(clean.indexOf("\n") + 1) : clean).trimEnd();
		const lost = this.#early.filter((line) => !body.includes(line));
		return lost.length === 0 ? body : `${lost.join("\n")}\n…\n${body}`;
	}
}

/** `from`, moved past at most three UTF-8 continuation bytes (a character is at most four bytes). */
function skipContinuation(buf: Buffer, from: number, limit = Math.min(buf.length, from + 3)): number {
	return from < limit && ((buf[from] ?? 0) & 0xc0) === 0x80 ? skipContinuation(buf, from + 1, limit) : from;
}
