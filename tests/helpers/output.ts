/**
 * Helpers for the output pipeline's tests (fast tier: tests/fast/output.test.ts; real tier, the large
 * results that write tens of MiB and measure memory: tests/output-large.test.ts): a real overflow store in
 * a temporary directory removed after the file, result builders, and assertions on what `present()` shows.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createReadStream, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { type Presented, toolResultParts } from "../../src/output/content.ts";
import { formatBytes } from "../../src/output/text.ts";
import { createOverflowStore, INLINE_MAX_BYTES, INLINE_MAX_LINES, type OverflowStore } from "../../src/output.ts";

export const KiB = 1024;
export const MiB = 1024 * 1024;
/** Bytes `present()` keeps free for the truncation notice (`NOTICE_ROOM` in src/content.ts, not exported). */
export const NOTICE_ROOM = 1024;
/** The head budget of a truncated result: the notice must fit with it inside Pi's inline limits. */
export const SHOWN_MAX_BYTES = INLINE_MAX_BYTES - NOTICE_ROOM;
export const SHOWN_MAX_LINES = INLINE_MAX_LINES - 1;

// ---------------------------------------------------------------------------------------------
// Helpers

export const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
	for (const cleanup of cleanups.reverse()) await cleanup();
});

export async function tempBase(): Promise<string> {
	const dir = await mkdtemp(join(tmpdir(), "pi-mcp-output-test-"));
	cleanups.push(() => rm(dir, { recursive: true, force: true }));
	return dir;
}

export async function newStore(maxBytes?: number): Promise<{ store: OverflowStore; base: string }> {
	const base = await tempBase();
	const store = createOverflowStore(maxBytes === undefined ? { baseDir: base } : { baseDir: base, maxBytes });
	cleanups.push(() => store.dispose());
	return { store, base };
}

export type Content = NonNullable<CallToolResult["content"]>;

export const toolParts = (content: Content, extra: Partial<CallToolResult> = {}) =>
	toolResultParts({ content, ...extra } as CallToolResult);
export const textParts = (text: string) => toolParts([{ type: "text", text }]);

/** Every character a terminal could act on, except `\n` and `\t`. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
export const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function assertClean(text: string, what: string): void {
	const found = CONTROL.exec(text);
	assert.equal(
		found,
		null,
		`${what}: control U+${found?.[0].charCodeAt(0).toString(16).padStart(4, "0")} survived in ${JSON.stringify(text)}`,
	);
}

export function assertWellFormed(text: string, what: string): void {
	assert.ok(!text.includes("\uFFFD"), `${what}: contains U+FFFD`);
	assert.ok(!LONE_SURROGATE.test(text), `${what}: contains a lone surrogate`);
	assert.equal(Buffer.from(text, "utf8").toString("utf8"), text, `${what}: not valid UTF-8 round trip`);
}

/** The inline head of a truncated result (what precedes the notice), by the byte count `present` reports. */
export function shownOf(presented: Presented): string {
	const shownBytes = presented.info.truncated?.shownBytes;
	assert.ok(shownBytes !== undefined, "expected a truncated result");
	return Buffer.from(presented.text, "utf8").subarray(0, shownBytes).toString("utf8");
}

export function noticeOf(presented: Presented): string {
	const at = presented.text.lastIndexOf("[Output truncated:");
	assert.ok(at >= 0, `no truncation notice in ${JSON.stringify(presented.text.slice(-300))}`);
	return presented.text.slice(at);
}

/** The exact notice for a truncated result whose full output was saved at `path`. */
export function expectedNotice(presented: Presented, path: string): string {
	const truncated = presented.info.truncated;
	assert.ok(truncated, "expected a truncated result");
	const { shownLines, totalLines, shownBytes, totalBytes } = truncated;
	return (
		`[Output truncated: showing ${shownLines} of ${totalLines} lines ` +
		`(${formatBytes(shownBytes)} of ${formatBytes(totalBytes)}; ${totalBytes - shownBytes} bytes not shown). Full output: ${path}]`
	);
}

/** A truncated result, notice included, stays within Pi's inline limits (50 KiB and 2,000 lines). */
export function assertWithinLimits(presented: Presented, what: string): void {
	const bytes = Buffer.byteLength(presented.text);
	assert.ok(bytes <= INLINE_MAX_BYTES, `${what}: inline text with the notice is ${bytes} bytes`);
	const lines = presented.text.split("\n").length - (presented.text.endsWith("\n") ? 1 : 0);
	assert.ok(lines <= INLINE_MAX_LINES, `${what}: inline text with the notice is ${lines} lines`);
	const truncated = presented.info.truncated;
	assert.ok(truncated, `${what}: expected a truncated result`);
	assert.ok(truncated.shownBytes <= SHOWN_MAX_BYTES, `${what}: shownBytes ${truncated.shownBytes}`);
	assert.ok(truncated.shownLines <= SHOWN_MAX_LINES, `${what}: shownLines ${truncated.shownLines}`);
}

/** Paths named as `saved to <path>]` in the text, in order. */
export function savedPaths(text: string): string[] {
	return [...text.matchAll(/saved to (.+?)\]$/gm)].map((match) => match[1] ?? "");
}

export const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

export async function sha256File(path: string): Promise<string> {
	const hash = createHash("sha256");
	for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
	return hash.digest("hex");
}

export const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** Peak RSS tracking: VmHWM reset through /proc when the kernel allows it, else sampled. */
export function peakTracker(): { base: number; peak: () => number; method: string } {
	try {
		setFlagsFromString("--expose-gc");
		(runInNewContext("gc") as () => void)();
	} catch {
		// GC before measuring is only a refinement.
	}
	const hwm = () => Number(/VmHWM:\s+(\d+)\s*kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? Number.NaN) * 1024;
	try {
		writeFileSync("/proc/self/clear_refs", "5");
		const base = process.memoryUsage().rss;
		if (Number.isFinite(hwm())) return { base, peak: () => Math.max(hwm(), process.memoryUsage().rss), method: "VmHWM" };
	} catch {
		// Not Linux, or clear_refs not writable: fall back to sampling.
	}
	const base = process.memoryUsage().rss;
	const state = { peak: base };
	const timer = setInterval(() => {
		state.peak = Math.max(state.peak, process.memoryUsage().rss);
	}, 2);
	timer.unref();
	return {
		base,
		peak: () => {
			clearInterval(timer);
			return Math.max(state.peak, process.memoryUsage().rss);
		},
		method: "sampled rss",
	};
}

/** `count` lines of exactly `width` bytes each (newline included), numbered so no two are alike. */
export function numberedLines(count: number, width = 80): string {
	const filler = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(Math.ceil(width / 36));
	return Array.from({ length: count }, (_, index) => {
		const head = `line ${String(index + 1).padStart(8, "0")} `;
		return `${head}${filler.slice(0, width - head.length - 1)}\n`;
	}).join("");
}

/** The text blocks of a tool result, joined (other blocks count as nothing). */
export const textOf = (result: Readonly<{ content: readonly Readonly<{ type: string; text?: string }>[] }>): string =>
	result.content.map((block) => (block.type === "text" ? (block.text ?? "") : "")).join("");
