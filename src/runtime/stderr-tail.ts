/**
 * The bounded tail of a child's stderr (`TailBuffer`): what a failed server said last, kept within
 * a few KiB and shown stripped of escapes. The head cut of results is `cutHead` in output.ts.
 */
import { stripTerminal } from "../output/text.ts";

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
