/**
 * The output pipeline with large results (real tier: each test writes tens of MiB to disk and measures
 * the process's peak memory, which a busy fast tier would skew): 50 MiB results inline-cut and saved whole,
 * memory under 4× the payload, and the real 50 MiB session cap.
 */
import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { dirname } from "node:path";
import { describe, test } from "node:test";
import { present } from "../src/output/content.ts";
import {
	assertClean,
	assertWithinLimits,
	MiB,
	modeOf,
	newStore,
	noticeOf,
	numberedLines,
	peakTracker,
	SHOWN_MAX_BYTES,
	SHOWN_MAX_LINES,
	sha256,
	sha256File,
	shownOf,
	textParts,
} from "./helpers/output.ts";

// ---------------------------------------------------------------------------------------------
// 50 MiB

describe("a 50 MiB text result", () => {
	test("inline with its notice ≤ 50 KiB, file complete and byte-identical, 0600 in a 0700 directory, bounded memory", async (t) => {
		const { store } = await newStore();
		const payload = 50 * MiB;
		const text = numberedLines(payload / 80, 80);
		assert.equal(text.length, payload);
		const expectedHash = sha256(text);

		const tracker = peakTracker();
		const started = performance.now();
		const presented = await present(textParts(text), store, "huge");
		const elapsed = performance.now() - started;
		const growth = tracker.peak() - tracker.base;
		t.diagnostic(
			`50 MiB present(): ${elapsed.toFixed(0)} ms, peak RSS growth ${(growth / MiB).toFixed(1)} MiB ` +
				`(${(growth / payload).toFixed(2)}× payload, ${tracker.method})`,
		);

		const truncated = presented.info.truncated;
		assert.ok(truncated);
		// 627 whole 80-byte lines fit the 50,176-byte head budget.
		assert.deepEqual(truncated, { shownBytes: 627 * 80, totalBytes: payload, shownLines: 627, totalLines: payload / 80 });
		const shown = shownOf(presented);
		assert.equal(shown, text.slice(0, 627 * 80));
		assertWithinLimits(presented, "50 MiB");

		const path = presented.info.overflowPath;
		assert.ok(path);
		assert.equal(
			noticeOf(presented),
			`[Output truncated: showing 627 of 655360 lines (49.0 KiB of 50.0 MiB; 52378640 bytes not shown). Full output: ${path}]`,
		);
		assert.equal(presented.text, `${shown}${noticeOf(presented)}`);
		assert.equal((await stat(path)).size, payload);
		assert.equal(await sha256File(path), expectedHash);
		assert.equal(await modeOf(path), 0o600, "overflow file mode");
		assert.equal(await modeOf(dirname(path)), 0o700, "session directory mode");

		assert.ok(growth < 4 * payload, `peak RSS growth ${(growth / MiB).toFixed(1)} MiB is not < 4× the payload`);
	});

	test("a 50 MiB result full of colour codes and CRLF: stripped inline and in the file; time and memory measured", async (t) => {
		const { store } = await newStore();
		const line = `\x1b[31m${"x".repeat(69)}\x1b[0m\r\n`;
		assert.equal(line.length, 80);
		const count = (50 * MiB) / 80;
		const text = line.repeat(count);
		const clean = `${"x".repeat(69)}\n`.repeat(count);
		const tracker = peakTracker();
		const started = performance.now();
		const presented = await present(textParts(text), store, "colour");
		const elapsed = performance.now() - started;
		const growth = tracker.peak() - tracker.base;
		t.diagnostic(
			`50 MiB with escapes: ${elapsed.toFixed(0)} ms, peak RSS growth ${(growth / MiB).toFixed(1)} MiB ` +
				`(${(growth / text.length).toFixed(2)}× payload, ${tracker.method})`,
		);
		assertClean(presented.text, "inline");
		// Stripped lines are 70 bytes: 716 of them fit the 50,176-byte head budget.
		assert.equal(shownOf(presented), clean.slice(0, 716 * 70));
		assert.deepEqual(presented.info.truncated, {
			shownBytes: 716 * 70,
			totalBytes: clean.length,
			shownLines: 716,
			totalLines: count,
		});
		assertWithinLimits(presented, "colour");
		const path = presented.info.overflowPath ?? "";
		assert.equal((await stat(path)).size, clean.length);
		assert.equal(await sha256File(path), sha256(clean));
	});

	test("many short lines (10 MiB of 'x\\n'): peak memory stays < 4× the payload", async (t) => {
		const { store } = await newStore();
		const payload = 10 * MiB;
		const text = "x\n".repeat(payload / 2);
		assert.equal(text.length, payload);
		const tracker = peakTracker();
		const started = performance.now();
		const presented = await present(textParts(text), store, "short-lines");
		const elapsed = performance.now() - started;
		const growth = tracker.peak() - tracker.base;
		t.diagnostic(
			`10 MiB of 'x\\n': ${elapsed.toFixed(0)} ms, peak RSS growth ${(growth / MiB).toFixed(1)} MiB ` +
				`(${(growth / payload).toFixed(2)}× payload, ${tracker.method})`,
		);
		assert.equal(presented.info.truncated?.shownLines, SHOWN_MAX_LINES);
		assert.equal(shownOf(presented), "x\n".repeat(SHOWN_MAX_LINES));
		assertWithinLimits(presented, "short lines");
		assert.equal((await stat(presented.info.overflowPath ?? "")).size, payload);
		assert.ok(growth < 4 * payload, `peak RSS growth ${(growth / MiB).toFixed(1)} MiB is not < 4× the payload`);
	});
});

describe("the session's overflow cap", () => {
	test("the real default cap (50 MiB): of two 30 MiB results the second is refused with a note saying the limit", async () => {
		const { store } = await newStore();
		const thirty = "z".repeat(30 * MiB);
		const a = await present(textParts(thirty), store, "thirty-a");
		assert.ok(a.info.overflowPath);
		assert.equal((await stat(a.info.overflowPath)).size, 30 * MiB);
		const b = await present(textParts(`${thirty.slice(1)}!`), store, "thirty-b");
		assert.equal(b.info.overflowPath, undefined);
		const notice = noticeOf(b);
		assert.ok(notice.includes("overflow limit of 50.0 MiB is reached (30.0 MiB used)"), notice);
		assert.ok(notice.includes("not saved"), notice);
		assert.deepEqual(b.info.truncated, { shownBytes: SHOWN_MAX_BYTES, totalBytes: 30 * MiB, shownLines: 1, totalLines: 1 });
		assertWithinLimits(b, "thirty-b");
		assert.equal(store.used(), 30 * MiB);
	});
});
