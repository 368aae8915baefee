/**
 * The output pipeline (src/output.ts, src/content.ts) at its boundaries, through `present()` with a
 * real overflow store in a temporary directory: inline limits, UTF-8 safe cuts, overflow files and
 * their permissions, the session cap, disposal, images, blobs, resources, the terminal escape
 * corpus through every path a server's text can take, and the check that encodes a large clean text
 * once (`encodeClean`, src/output.ts) against the exact path it stands in for.
 *   node --import tsx --test tests/fast/output.test.ts
 */
import assert from "node:assert/strict";
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { describe, test } from "node:test";
import type { GetPromptResult, ReadResourceResult } from "@modelcontextprotocol/client";
import { isAppResource, present, promptResultParts, refusalText, resourceResultParts } from "../../src/output/content.ts";
import { formatBytes, MAX_MESSAGE_CHARS, sanitize, stripTerminal } from "../../src/output/text.ts";
import { cutHead, encodeClean, INLINE_MAX_BYTES, INLINE_MAX_LINES, MAX_IMAGE_BASE64 } from "../../src/output.ts";
import { TailBuffer } from "../../src/runtime/stderr-tail.ts";
import {
	assertClean,
	assertWellFormed,
	assertWithinLimits,
	CONTROL,
	type Content,
	expectedNotice,
	KiB,
	MiB,
	modeOf,
	newStore,
	noticeOf,
	numberedLines,
	SHOWN_MAX_BYTES,
	SHOWN_MAX_LINES,
	savedPaths,
	sha256,
	shownOf,
	textParts,
	toolParts,
} from "../helpers/output.ts";

const png = (seed: number, size = 16) =>
	Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(size, seed)]);

// ---------------------------------------------------------------------------------------------
// Inline limits

describe("inline text limits through present()", () => {
	test("exactly 50 KiB (51200 bytes) on one line: not truncated, nothing written", async () => {
		const { store, base } = await newStore();
		const text = "a".repeat(INLINE_MAX_BYTES);
		assert.equal(Buffer.byteLength(text), 51200);
		const presented = await present(textParts(text), store, "exact");
		assert.equal(presented.text, text);
		assert.deepEqual(presented.content, [{ type: "text", text }]);
		assert.equal(presented.info.truncated, undefined);
		assert.equal(presented.info.overflowPath, undefined);
		assert.equal(presented.info.textBytes, 51200);
		assert.equal(store.used(), 0);
		assert.deepEqual(await readdir(base), [], "the session directory is created on first use only");
	});

	test("exactly 50 KiB over many lines, and exactly 50 KiB of two-byte characters: not truncated", async () => {
		const { store } = await newStore();
		const lines = numberedLines(640, 80);
		assert.equal(Buffer.byteLength(lines), 51200);
		const a = await present(textParts(lines), store, "lines");
		assert.equal(a.text, lines);
		assert.equal(a.info.truncated, undefined);
		const accents = "é".repeat(25600);
		assert.equal(Buffer.byteLength(accents), 51200);
		const b = await present(textParts(accents), store, "accents");
		assert.equal(b.text, accents);
		assert.equal(b.info.truncated, undefined);
		assert.equal(store.used(), 0);
	});

	test("one byte over 50 KiB: truncated to 50 KiB - 1 KiB, the notice names the file, the file is the full text", async () => {
		const { store } = await newStore();
		const text = "a".repeat(INLINE_MAX_BYTES + 1);
		const presented = await present(textParts(text), store, "over");
		const truncated = presented.info.truncated;
		assert.ok(truncated);
		assert.deepEqual(truncated, { shownBytes: 50176, totalBytes: 51201, shownLines: 1, totalLines: 1 });
		assert.equal(shownOf(presented), "a".repeat(SHOWN_MAX_BYTES));
		const path = presented.info.overflowPath;
		assert.ok(path, "an overflow path");
		const notice = noticeOf(presented);
		assert.equal(
			notice,
			`[Output truncated: showing 1 of 1 lines (49.0 KiB of 50.0 KiB; 1025 bytes not shown). Full output: ${path}]`,
		);
		assert.equal(presented.text, `${"a".repeat(SHOWN_MAX_BYTES)}\n${notice}`);
		assertWithinLimits(presented, "one byte over");
		assert.equal(await readFile(path, "utf8"), text);
		assert.deepEqual(presented.info.saved, [path]);
		assert.equal(store.used(), 51201);
		assert.deepEqual(presented.content, [{ type: "text", text: presented.text }]);
	});

	test("one byte over 50 KiB over many lines: cut at a line end, the file is the full text", async () => {
		const { store } = await newStore();
		const text = `${numberedLines(640, 80)}x`;
		const presented = await present(textParts(text), store, "over-lines");
		const shown = shownOf(presented);
		assert.ok(shown.endsWith("\n"), "cut at a line end");
		// 50,176 bytes of budget hold 627 whole 80-byte lines (50,160 bytes); the 628th is not split.
		assert.equal(shown, numberedLines(627, 80));
		assert.deepEqual(presented.info.truncated, { shownBytes: 50160, totalBytes: 51201, shownLines: 627, totalLines: 641 });
		assert.equal(
			noticeOf(presented),
			`[Output truncated: showing 627 of 641 lines (49.0 KiB of 50.0 KiB; 1041 bytes not shown). Full output: ${presented.info.overflowPath}]`,
		);
		assert.equal(presented.text, `${shown}${noticeOf(presented)}`, "the notice follows the head's own newline");
		assertWithinLimits(presented, "over-lines");
		assert.equal(await readFile(presented.info.overflowPath ?? "", "utf8"), text);
	});

	test("25,600 × 'é' + one byte: truncated, no half character", async () => {
		const { store } = await newStore();
		const text = `${"é".repeat(25600)}a`;
		const presented = await present(textParts(text), store, "accents-over");
		const shown = shownOf(presented);
		assertWellFormed(presented.text, "inline");
		assert.equal(shown, "é".repeat(SHOWN_MAX_BYTES / 2));
		assert.equal(presented.info.truncated?.shownBytes, SHOWN_MAX_BYTES);
		assertWithinLimits(presented, "accents-over");
		assert.equal(await readFile(presented.info.overflowPath ?? "", "utf8"), text);
	});

	test("2,000 lines: not truncated; 2,001 lines: truncated to 1,999 (the notice is the 2,000th), file complete", async () => {
		const { store } = await newStore();
		const exact = Array.from({ length: INLINE_MAX_LINES }, (_, i) => `line ${i + 1}`).join("\n");
		const a = await present(textParts(exact), store, "2000");
		assert.equal(a.text, exact);
		assert.equal(a.info.truncated, undefined);

		const withNewline = "x\n".repeat(2000);
		const b = await present(textParts(withNewline), store, "2000nl");
		assert.equal(b.text, withNewline, "a trailing newline does not make a 2,001st line");
		assert.equal(b.info.truncated, undefined);
		assert.equal(store.used(), 0);

		const over = `${exact}\nline 2001`;
		const c = await present(textParts(over), store, "2001");
		assert.deepEqual(
			{ shownLines: c.info.truncated?.shownLines, totalLines: c.info.truncated?.totalLines },
			{ shownLines: 1999, totalLines: 2001 },
		);
		const shown = shownOf(c);
		const first1999 = Array.from({ length: SHOWN_MAX_LINES }, (_, i) => `line ${i + 1}\n`).join("");
		assert.equal(shown, first1999);
		assert.equal(c.info.truncated?.shownBytes, Buffer.byteLength(first1999));
		assert.ok(noticeOf(c).startsWith("[Output truncated: showing 1999 of 2001 lines ("), noticeOf(c));
		assert.equal(noticeOf(c), expectedNotice(c, c.info.overflowPath ?? ""));
		assert.equal(c.text, `${first1999}${noticeOf(c)}`);
		assert.equal(c.text.split("\n").length, INLINE_MAX_LINES, "1,999 lines and the notice: exactly 2,000 lines");
		assertWithinLimits(c, "2001");
		assert.equal(await readFile(c.info.overflowPath ?? "", "utf8"), over);

		const d = await present(textParts(`${withNewline}y`), store, "2001b");
		assert.equal(shownOf(d), "x\n".repeat(SHOWN_MAX_LINES));
		assert.deepEqual(d.info.truncated, { shownBytes: 3998, totalBytes: 4001, shownLines: 1999, totalLines: 2001 });
		assert.equal(
			noticeOf(d),
			`[Output truncated: showing 1999 of 2001 lines (3.9 KiB of 3.9 KiB; 3 bytes not shown). Full output: ${d.info.overflowPath}]`,
		);
		assertWithinLimits(d, "2001b");
	});

	for (const [name, char] of [
		["é (2 bytes)", "é"],
		["€ (3 bytes)", "€"],
		["😀 (4 bytes, surrogate pair)", "😀"],
		["𝄞 (4 bytes, surrogate pair)", "𝄞"],
	] as const) {
		test(`a multi-byte character straddling the byte cut never splits: ${name}`, async () => {
			const { store } = await newStore();
			const width = Buffer.byteLength(char);
			for (let into = 1; into < width; into += 1) {
				// The character straddles the head budget (50 KiB less the notice's room); the text is long
				// enough to be over 50 KiB, so it is truncated.
				const prefix = "a".repeat(SHOWN_MAX_BYTES - into);
				const text = `${prefix}${char}${"b".repeat(2 * KiB)}`;
				assert.ok(Buffer.byteLength(text) > INLINE_MAX_BYTES);
				const presented = await present(textParts(text), store, `straddle-${into}`);
				assertWellFormed(presented.text, `${name} at ${into}`);
				assert.equal(shownOf(presented), prefix, `${name} at ${into}`);
				assert.equal(presented.info.truncated?.shownBytes, SHOWN_MAX_BYTES - into, `${name} at ${into}`);
				assertWithinLimits(presented, `${name} at ${into}`);
				assert.equal(await readFile(presented.info.overflowPath ?? "", "utf8"), text);
			}
			// A text made only of the character: the cut falls inside one at most positions.
			const only = char.repeat(Math.ceil((INLINE_MAX_BYTES + 7) / width));
			const presented = await present(textParts(only), store, "only");
			assertWellFormed(presented.text, `${name} only`);
			const shown = shownOf(presented);
			assert.equal(shown, char.repeat(Math.floor(SHOWN_MAX_BYTES / width)));
			assertWithinLimits(presented, `${name} only`);
		});
	}

	test("cutHead directly: pieces, byte limit inside a piece, line limit across pieces", () => {
		const small = cutHead(["ab", "\n", "cd"], 100, 100);
		assert.deepEqual(small, { text: "ab\ncd", truncated: false, shownBytes: 5, shownLines: 2, totalBytes: 5, totalLines: 2 });
		const bytes = cutHead(["aaaa\n", "bbbb\n", "cccc"], 12, 100);
		assert.equal(bytes.text, "aaaa\nbbbb\n");
		assert.equal(bytes.totalBytes, 14);
		const lines = cutHead(["1\n2\n", "3\n4\n", "5"], 100, 3);
		assert.equal(lines.text, "1\n2\n3\n");
		assert.equal(lines.totalLines, 5);
		const euro = cutHead(["€€€€"], 7, 100);
		assert.equal(euro.text, "€€");
		const emoji = cutHead(["x😀y"], 3, 100);
		assert.equal(emoji.text, "x");
	});

	test("several text blocks are joined with newlines; the overflow file is that joined text", async () => {
		const { store } = await newStore();
		const first = "first block";
		const second = "s".repeat(INLINE_MAX_BYTES);
		const presented = await present(
			toolParts([
				{ type: "text", text: first },
				{ type: "text", text: second },
			]),
			store,
			"joined",
		);
		assert.equal(await readFile(presented.info.overflowPath ?? "", "utf8"), `${first}\n${second}`);
		assert.equal(shownOf(presented), `${first}\n`);
		assertWithinLimits(presented, "joined");
	});

	test("an empty result says so", async () => {
		const { store } = await newStore();
		const presented = await present(toolParts([]), store, "empty");
		assert.equal(presented.text, "(no content)");
		assert.deepEqual(presented.content, [{ type: "text", text: "(no content)" }]);
	});
});

// ---------------------------------------------------------------------------------------------
// Session cap, permissions, disposal

describe("the overflow store", () => {
	test("the cap with a small maxBytes: the first overflow saved, the next refused with a note naming the limit", async () => {
		const { store, base } = await newStore(100 * KiB);
		const first = "1".repeat(60 * KiB);
		const a = await present(textParts(first), store, "first");
		assert.ok(a.info.overflowPath);
		assert.equal(store.used(), 60 * KiB);

		const second = "2".repeat(60 * KiB);
		const b = await present(textParts(second), store, "second");
		assert.equal(b.info.overflowPath, undefined);
		assert.ok(b.info.truncated, "still truncated inline");
		assert.equal(shownOf(b), "2".repeat(SHOWN_MAX_BYTES));
		const notice = noticeOf(b);
		assert.equal(
			notice,
			"[Output truncated: showing 1 of 1 lines (49.0 KiB of 60.0 KiB; 11264 bytes not shown). " +
				"The full output was not saved: this session's overflow limit of 100.0 KiB is reached (60.0 KiB used).]",
		);
		assertWithinLimits(b, "refused");
		assert.equal(store.used(), 60 * KiB);
		assert.deepEqual(b.info.saved, []);

		// Blobs are refused the same way, and the text says so.
		const audio = await present(
			toolParts([{ type: "audio", data: Buffer.alloc(50 * KiB, 7).toString("base64"), mimeType: "audio/wav" }]),
			store,
			"audio",
		);
		assert.match(audio.text, /^\[audio audio\/wav, 50\.0 KiB: not saved: this session's overflow limit of 100\.0 KiB is reached/);
		assert.deepEqual(audio.info.saved, []);

		const sessionDirs = await readdir(base);
		assert.equal(sessionDirs.length, 1);
		assert.equal((await readdir(join(base, sessionDirs[0] ?? ""))).length, 1, "only the first file exists");
	});

	test("the cap is inclusive: exactly maxBytes fits, one more byte is refused", async () => {
		const { store } = await newStore(1000);
		const a = await store.save("a.txt", ["x".repeat(600), Buffer.alloc(400, 0x79)]);
		assert.ok("path" in a);
		assert.equal(a.bytes, 1000);
		assert.equal(await readFile(a.path, "utf8"), `${"x".repeat(600)}${"y".repeat(400)}`);
		const b = await store.save("b.txt", ["z"]);
		assert.ok("refused" in b);
		assert.deepEqual(b, { refused: "cap", capBytes: 1000, usedBytes: 1000 });
		assert.equal(refusalText(b), "this session's overflow limit of 1000 B is reached (1000 B used)");
	});

	test("files 0600 in a 0700 directory under the given base; names are sanitised", async () => {
		const { store, base } = await newStore();
		const saved = await store.save("../../etc/passwd \x1b[31m name", ["x"]);
		assert.ok("path" in saved);
		assert.equal(dirname(dirname(saved.path)), base, "stays inside its session directory");
		assert.match(basename(saved.path), /^001-[A-Za-z0-9._-]+$/);
		assert.equal(await modeOf(saved.path), 0o600);
		assert.equal(await modeOf(dirname(saved.path)), 0o700);
	});

	test("dispose() removes everything, is idempotent, and later saves are refused", async () => {
		const { store, base } = await newStore();
		const text = await present(textParts("t".repeat(INLINE_MAX_BYTES + 10)), store, "text");
		const blob = await present(
			toolParts([{ type: "audio", data: Buffer.from("RIFF....WAVE").toString("base64"), mimeType: "audio/wav" }]),
			store,
			"blob",
		);
		const paths = [text.info.overflowPath ?? "", ...blob.info.saved];
		assert.equal(paths.length, 2);
		for (const path of paths) assert.ok((await stat(path)).isFile());
		const sessionDir = dirname(paths[0] ?? "");

		await store.dispose();
		await assert.rejects(stat(sessionDir), { code: "ENOENT" });
		for (const path of paths) await assert.rejects(stat(path), { code: "ENOENT" });
		assert.deepEqual(await readdir(base), []);
		await store.dispose();

		const refused = await store.save("late.txt", ["late"]);
		assert.deepEqual(refused, { refused: "ended" });
		const late = await present(textParts("l".repeat(INLINE_MAX_BYTES + 1)), store, "late");
		assert.ok(
			noticeOf(late).endsWith("bytes not shown). The full output was not saved: the session has ended.]"),
			noticeOf(late),
		);
		assert.deepEqual(await readdir(base), [], "nothing recreated after dispose");
	});

	test("dispose() of a store that never saved anything creates nothing", async () => {
		const { store, base } = await newStore();
		await store.dispose();
		assert.deepEqual(await readdir(base), []);
	});
});

// ---------------------------------------------------------------------------------------------
// Images, audio, structured content, resources

describe("images, blobs, structured content and resources", () => {
	test("6 PNG images: 4 inline, 2 described with their saved paths (files hold the decoded bytes)", async () => {
		const { store } = await newStore();
		const images = Array.from({ length: 6 }, (_, i) => png(i + 1));
		const presented = await present(
			toolParts(images.map((bytes) => ({ type: "image" as const, data: bytes.toString("base64"), mimeType: "image/png" }))),
			store,
			"six",
		);
		const inline = presented.content.filter((block) => block.type === "image");
		assert.equal(inline.length, 4);
		assert.deepEqual(
			inline.map((block) => (block.type === "image" ? block.data : "")),
			images.slice(0, 4).map((bytes) => bytes.toString("base64")),
		);
		assert.equal(presented.info.images, 4);
		const lines = presented.text.split("\n");
		assert.equal(lines.length, 2);
		for (const line of lines) {
			assert.match(line, /^\[image image\/png, 24 B, more than 4 images in one result: saved to .+\]$/);
		}
		const paths = savedPaths(presented.text);
		assert.equal(paths.length, 2);
		assert.deepEqual(presented.info.saved, paths);
		for (const [index, path] of paths.entries()) {
			assert.ok(path.endsWith(".png"), path);
			assert.deepEqual(await readFile(path), images[4 + index]);
			assert.equal(await modeOf(path), 0o600);
		}
	});

	test("an image of exactly 2 MiB base64 is inline; one over is described and saved", async () => {
		const { store } = await newStore();
		const fits = Buffer.alloc((MAX_IMAGE_BASE64 / 4) * 3, 1);
		assert.equal(fits.toString("base64").length, MAX_IMAGE_BASE64);
		const a = await present(toolParts([{ type: "image", data: fits.toString("base64"), mimeType: "image/jpeg" }]), store, "fits");
		assert.equal(a.info.images, 1);
		assert.equal(a.text, "");
		assert.deepEqual(
			a.content.map((block) => block.type),
			["image"],
		);

		const big = Buffer.alloc((MAX_IMAGE_BASE64 / 4) * 3 + 1, 2);
		assert.ok(big.toString("base64").length > MAX_IMAGE_BASE64);
		const b = await present(
			toolParts([
				{ type: "image", data: big.toString("base64"), mimeType: "image/png" },
				{ type: "image", data: png(9).toString("base64"), mimeType: "image/png" },
			]),
			store,
			"big",
		);
		assert.equal(b.info.images, 1, "the small one is still inline");
		assert.match(b.text, /^\[image image\/png, 1\.5 MiB, larger than 2\.0 MiB of base64: saved to .+\.png\]$/);
		const [path] = savedPaths(b.text);
		assert.ok(path);
		assert.deepEqual(await readFile(path), big);
	});

	for (const [mimeType, extension] of [
		["image/bmp", ".bin"],
		["image/svg+xml", ".svg"],
		["image/tiff", ".bin"],
	] as const) {
		test(`an unsupported image type (${mimeType}) is described and saved, never inline`, async () => {
			const { store } = await newStore();
			const bytes = mimeType === "image/svg+xml" ? Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>') : png(3);
			const presented = await present(toolParts([{ type: "image", data: bytes.toString("base64"), mimeType }]), store, "odd");
			assert.equal(presented.info.images, 0);
			assert.ok(presented.content.every((block) => block.type === "text"));
			assert.ok(presented.text.startsWith(`[image ${mimeType}, ${formatBytes(bytes.length)}, type not shown inline: saved to `));
			const [path] = savedPaths(presented.text);
			assert.ok(path, "a saved path");
			assert.ok(path.endsWith(extension), path);
			assert.deepEqual(await readFile(path), bytes);
		});
	}

	test("audio goes to a file named in the text", async () => {
		const { store } = await newStore();
		const wav = Buffer.concat([Buffer.from("RIFF"), Buffer.alloc(2000, 3)]);
		const presented = await present(
			toolParts([
				{ type: "text", text: "here is the recording" },
				{ type: "audio", data: wav.toString("base64"), mimeType: "audio/wav" },
			]),
			store,
			"speak",
		);
		assert.equal(presented.info.images, 0);
		const [first, second] = presented.text.split("\n");
		assert.equal(first, "here is the recording");
		assert.match(second ?? "", /^\[audio audio\/wav, 2\.0 KiB: saved to .+\.wav\]$/);
		const [path] = savedPaths(presented.text);
		assert.ok(path);
		assert.deepEqual(await readFile(path), wav);
		assert.deepEqual(presented.info.saved, [path]);
	});

	test("structuredContent only: JSON text", async () => {
		const { store } = await newStore();
		const structured = { issues: [{ key: "PI-1", title: "café ☕" }], total: 1 };
		const presented = await present(toolParts([], { structuredContent: structured }), store, "structured");
		assert.deepEqual(JSON.parse(presented.text), structured);
		assert.equal(presented.info.truncated, undefined);
	});

	test("structuredContent is bounded inside the same budget; the file is the full JSON", async () => {
		const { store } = await newStore();
		const structured = { rows: Array.from({ length: 5000 }, (_, i) => ({ id: i, name: `row ${i}`, padding: "p".repeat(20) })) };
		const presented = await present(toolParts([], { structuredContent: structured }), store, "big-json");
		assert.ok(presented.info.truncated);
		assertWithinLimits(presented, "structured");
		assert.equal(presented.info.truncated.shownLines, SHOWN_MAX_LINES, "pretty-printed JSON hits the line budget first");
		assert.deepEqual(JSON.parse(await readFile(presented.info.overflowPath ?? "", "utf8")), structured);
	});

	test("structuredContent with escape characters in values does not leak them (JSON leaves C1 raw)", async () => {
		const { store } = await newStore();
		const presented = await present(
			toolParts([], { structuredContent: { a: "\x1b]52;c;AAAA\x07", b: "\x9b31mred", c: "\x9d0;title\x9c" } }),
			store,
			"structured-escapes",
		);
		assertClean(presented.text, "structured");
		// ESC and BEL are escaped by JSON (harmless visible text); the raw C1 sequences are stripped.
		assert.ok(presented.text.includes('"a": "\\u001b]52;c;AAAA\\u0007"'), presented.text);
		assert.ok(presented.text.includes('"b": "red"'), presented.text);
		assert.ok(presented.text.includes('"c": ""'), presented.text);
	});

	test("resource link: one short line with name, uri, type and description; escapes stripped", async () => {
		const { store } = await newStore();
		const presented = await present(
			toolParts([
				{
					type: "resource_link",
					name: "report\x1b[31m.pdf",
					uri: "file:///tmp/report.pdf",
					mimeType: "application/pdf",
					description: "Quarterly\nreport\r\n\x1b]8;;https://evil.example/\x07 with a link",
				},
			]),
			store,
			"link",
		);
		assert.equal(
			presented.text,
			"[resource link: report.pdf <file:///tmp/report.pdf> (application/pdf; Quarterly report with a link)]",
		);
		assert.equal(presented.info.saved.length, 0);
	});

	test("embedded text resource: its text, through the same limits", async () => {
		const { store } = await newStore();
		const small = await present(
			toolParts([{ type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "hello\x1b[2J world" } }]),
			store,
			"embedded",
		);
		assert.equal(small.text, "hello world");
		const bigText = numberedLines(3000, 20);
		const big = await present(
			toolParts([{ type: "resource", resource: { uri: "file:///big.txt", text: bigText } }]),
			store,
			"embedded-big",
		);
		assert.equal(big.info.truncated?.shownLines, SHOWN_MAX_LINES);
		assert.equal(shownOf(big), numberedLines(SHOWN_MAX_LINES, 20));
		assertWithinLimits(big, "embedded-big");
		assert.equal(await readFile(big.info.overflowPath ?? "", "utf8"), bigText);
	});

	test("embedded blob resource: saved, the file named in the text", async () => {
		const { store } = await newStore();
		const pdf = Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(300, 5)]);
		const presented = await present(
			toolParts([
				{
					type: "resource",
					resource: { uri: "file:///x/report.pdf", mimeType: "application/pdf", blob: pdf.toString("base64") },
				},
			]),
			store,
			"blob",
		);
		assert.match(presented.text, /^\[resource <file:\/\/\/x\/report\.pdf> application\/pdf, 309 B: saved to .+\.pdf\]$/);
		const [path] = savedPaths(presented.text);
		assert.ok(path);
		assert.deepEqual(await readFile(path), pdf);
	});

	test("a blob resource without a type is saved as octet-stream", async () => {
		const { store } = await newStore();
		const presented = await present(
			resourceResultParts({
				contents: [{ uri: "mem://x", blob: Buffer.from([1, 2, 3]).toString("base64") }],
			} as ReadResourceResult),
			store,
			"raw",
		);
		assert.match(presented.text, /^\[resource <mem:\/\/x> application\/octet-stream, 3 B: saved to .+\.bin\]$/);
	});

	test("MCP App resources (ui://…, text/html;profile=mcp-app) are omitted", async () => {
		const { store } = await newStore();
		const html = "<html><script>alert(1)</script></html>";
		const presented = await present(
			toolParts([
				{ type: "text", text: "before" },
				{ type: "resource", resource: { uri: "ui://weather/app.html", mimeType: "text/html;profile=mcp-app", text: html } },
				{ type: "resource", resource: { uri: "https://example.com/app", mimeType: "text/html;profile=mcp-app", text: html } },
				{ type: "resource", resource: { uri: "ui://blob/app", blob: Buffer.from(html).toString("base64") } },
			]),
			store,
			"apps",
		);
		assert.equal(
			presented.text,
			[
				"before",
				"[MCP App resource <ui://weather/app.html> omitted]",
				"[MCP App resource <https://example.com/app> omitted]",
				"[MCP App resource <ui://blob/app> omitted]",
			].join("\n"),
		);
		assert.deepEqual(presented.info.saved, []);
		const read = await present(
			resourceResultParts({ contents: [{ uri: "ui://x/y", mimeType: "text/html;profile=mcp-app", text: html }] }),
			store,
			"read",
		);
		assert.equal(read.text, "[MCP App resource <ui://x/y> omitted]");
		assert.ok(isAppResource("ui://a"));
		assert.ok(isAppResource("https://a", "text/html; profile=mcp-app"));
		assert.ok(!isAppResource("https://a", "text/html"));
	});

	test("prompt results: description, roles and contents through the same pipeline", async () => {
		const { store } = await newStore();
		const prompt: GetPromptResult = {
			description: "Review\x1b[31m code",
			messages: [
				{ role: "user", content: { type: "text", text: "Please review\x07 this" } },
				{ role: "assistant", content: { type: "image", data: png(4).toString("base64"), mimeType: "image/png" } },
			],
		};
		const presented = await present(promptResultParts(prompt), store, "prompt");
		assert.equal(presented.text, "(Review code)\nuser:\nPlease review this\nassistant:");
		assert.equal(presented.info.images, 1);
	});
});

// ---------------------------------------------------------------------------------------------
// Terminal escape corpus

/** [name, sequence]; each is wrapped as `«${sequence}»`, and only `«»` may remain. */
const CORPUS: readonly (readonly [string, string])[] = [
	["CSI cursor up", "\x1b[A"],
	["CSI cursor up 5", "\x1b[5A"],
	["CSI cursor position", "\x1b[10;20H"],
	["CSI save / restore cursor", "\x1b[s\x1b[u"],
	["CSI erase display", "\x1b[2J"],
	["CSI erase line", "\x1b[2K"],
	["CSI SGR red", "\x1b[31m"],
	["CSI SGR reset", "\x1b[0m"],
	["CSI SGR truecolour", "\x1b[38;2;255;0;0m"],
	["CSI SGR colon sub-parameters", "\x1b[4:3m"],
	["CSI private mode: hide cursor", "\x1b[?25l"],
	["CSI private mode: alternate screen", "\x1b[?1049h"],
	["CSI bracketed paste end", "\x1b[201~"],
	["CSI with intermediate (cursor style)", "\x1b[2 q"],
	["CSI scroll region", "\x1b[1;24r"],
	["CSI kitty keyboard push", "\x1b[>1u"],
	["CSI device status request", "\x1b[6n"],
	["OSC 0 title, BEL", "\x1b]0;pwned title\x07"],
	["OSC 2 title, ST", "\x1b]2;pwned title\x1b\\"],
	["OSC 8 hyperlink open, ST", "\x1b]8;;https://evil.example/\x1b\\"],
	["OSC 8 hyperlink close, ST", "\x1b]8;;\x1b\\"],
	["OSC 8 hyperlink open with id, BEL", "\x1b]8;id=x;https://evil.example/\x07"],
	["OSC 52 clipboard write, BEL", "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"],
	["OSC 52 clipboard write, ST", "\x1b]52;p;Y3VybA==\x1b\\"],
	["OSC 52 clipboard query", "\x1b]52;c;?\x07"],
	["OSC 7 working directory", "\x1b]7;file:///etc\x07"],
	["OSC 1337 iTerm2 file", "\x1b]1337;File=name=eA==;inline=1:QUFBQQ==\x07"],
	["DCS DECRQSS", "\x1bP$qm\x1b\\"],
	["DCS sixel", "\x1bPq#0;2;0;0;0#0~~@@vv\x1b\\"],
	["DCS tmux passthrough", "\x1bPtmux;\x1b\x1b]0;x\x07\x1b\\"],
	["APC kitty graphics", "\x1b_Gf=100,a=T;QUFBQQ==\x1b\\"],
	["PM", "\x1b^private message\x1b\\"],
	["SOS", "\x1bXstart of string\x1b\\"],
	["8-bit CSI SGR", "\x9b31m"],
	["8-bit CSI erase display", "\x9b2J"],
	["8-bit OSC title, 8-bit ST", "\x9d0;pwned\x9c"],
	["8-bit OSC hyperlink, BEL", "\x9d8;;https://evil.example/\x07"],
	["8-bit OSC 52, 7-bit ST", "\x9d52;c;Y3VybA==\x1b\\"],
	["8-bit DCS", "\x90q#0~~\x9c"],
	["8-bit SOS", "\x98sos\x9c"],
	["8-bit PM", "\x9epm\x9c"],
	["8-bit APC", "\x9fGf=100;QUFB\x9c"],
	["C1 NEL, IND, RI, HTS", "\x85\x84\x8d\x88"],
	["8-bit ST alone", "\x9c"],
	["lone ESC", "\x1b"],
	["ESC c (full reset)", "\x1bc"],
	["ESC 7 / ESC 8 (save / restore cursor)", "\x1b7\x1b8"],
	["ESC ( 0 (line drawing charset)", "\x1b(0"],
	["ESC # 8 (screen alignment fill)", "\x1b#8"],
	["ESC = (keypad mode)", "\x1b="],
	["ESC \\ (ST alone)", "\x1b\\"],
	["BEL", "\x07"],
	["backspaces", "\b\b\b"],
	["carriage return", "\r"],
	["NUL", "\x00"],
	["DEL", "\x7f"],
	["VT, FF", "\x0b\x0c"],
	["SO, SI (charset shift)", "\x0e\x0f"],
	["CAN, SUB", "\x18\x1a"],
	["ENQ (answerback)", "\x05"],
];

const wrap = (sequence: string) => `«${sequence}»`;
/** Everything jammed together with visible words between, plus newlines and tabs that must stay. */
const JAMMED = `${CORPUS.map(([, sequence], index) => `«${index}»${sequence}`).join("")}\tend\nnext line`;
const JAMMED_CLEAN = `${CORPUS.map((_, index) => `«${index}»`).join("")}\tend\nnext line`;

describe("terminal escape corpus", () => {
	test("the corpus has at least 30 sequences, each of which contains a control character", () => {
		assert.ok(CORPUS.length >= 30, `${CORPUS.length}`);
		for (const [name, sequence] of CORPUS) assert.ok(CONTROL.test(sequence), name);
	});

	test("stripTerminal: every sequence removed, the text around it kept", () => {
		for (const [name, sequence] of CORPUS) assert.equal(stripTerminal(wrap(sequence)), "«»", name);
		assert.equal(stripTerminal(JAMMED), JAMMED_CLEAN);
	});

	test("stripTerminal keeps \\n and \\t, turns \\r\\n into \\n, and returns clean text unchanged", () => {
		assert.equal(stripTerminal("a\tb\nc\r\nd"), "a\tb\nc\nd");
		const clean = "plain text, “quotes”, é, 😀\n\tindented";
		assert.equal(stripTerminal(clean), clean);
	});

	test("overprinting cannot hide text: every character written stays visible", () => {
		assert.equal(stripTerminal("rm -rf ~\r# harmless comment"), "rm -rf ~# harmless comment");
		assert.equal(stripTerminal("evil\b\b\b\bnice"), "evilnice");
		assert.equal(stripTerminal("a\b_b\b_"), "a_b_");
	});

	test("an unterminated string sequence at the end removes the rest of it, never the text before", () => {
		assert.equal(stripTerminal("keep\x1b]8;;https://evil.example/ never closed"), "keep");
		assert.equal(stripTerminal("keep\x1bP unterminated dcs"), "keep");
		for (const opener of ["\x1b]", "\x1bP", "\x1bX", "\x1b^", "\x1b_"]) {
			assert.equal(stripTerminal(`keep${opener}0;body\twith a tab`), "keep", JSON.stringify(opener));
		}
		// A doubled ESC (tmux passthrough) is part of the body, so it runs to the end too.
		assert.equal(stripTerminal("keep\x1bPtmux;\x1b\x1b]0;x never closed"), "keep");
		assert.equal(stripTerminal("keep\x1b"), "keep");
		assert.equal(stripTerminal("keep\x9b"), "keep");
	});

	test("a 7-bit string sequence ends at BEL, ESC \\ or 8-bit ST; tmux passthrough is removed whole", () => {
		assert.equal(stripTerminal("a\x1b]0;t\x07b"), "ab");
		assert.equal(stripTerminal("a\x1b]0;t\x1b\\b"), "ab");
		assert.equal(stripTerminal("a\x1b]0;t\x9cb"), "ab");
		assert.equal(stripTerminal("\x1bPtmux;\x1b\x1b]0;x\x07\x1b\\"), "");
		assert.equal(stripTerminal("a\x1bPtmux;\x1b\x1b]0;x\x07\x1b\\b"), "ab");
		assert.equal(stripTerminal("a\x1bPtmux;\x1b\x1b]52;c;Y3VybA==\x07\x1b\\b"), "ab");
	});

	test("a 7-bit string body stops at a lone ESC or a C1 byte: the opener goes, the rest stays as inert text", () => {
		// Stopped by another escape before any terminator: the opener is removed as a two-byte escape,
		// the body is visible text, the next escape is removed by its own rule.
		assert.equal(stripTerminal("a\x1b]0;title\x1b[31mvisible"), "a0;titlevisible");
		assert.equal(stripTerminal("a\x1bPq#0~~\x1b7rest"), "aq#0~~rest");
		assert.equal(stripTerminal("a\x1b_Gf=100\x1bc tail"), "aGf=100 tail");
		// Stopped by a C1 byte other than ST.
		assert.equal(stripTerminal("a\x1b]0;t\x85rest"), "a0;trest");
		assert.equal(stripTerminal("a\x1b]0;t\x9b31mrest"), "a0;trest");
		// A later terminator does not extend the sequence past the lone ESC that stopped it.
		assert.equal(stripTerminal("a\x1b]0;t\x1b[1mkept\x07b"), "a0;tkeptb");
		// A lone ESC at the very end stops the body too.
		assert.equal(stripTerminal("a\x1b]0;t\x1b"), "a0;t");
	});

	test("an 8-bit string sequence is removed only when terminated; an unterminated 8-bit opener goes alone", () => {
		assert.equal(stripTerminal("before \x98 middle text after"), "before  middle text after");
		for (const opener of ["\x90", "\x98", "\x9d", "\x9e", "\x9f"]) {
			const what = `U+00${opener.charCodeAt(0).toString(16)}`;
			assert.equal(stripTerminal(`a${opener}0;text after`), "a0;text after", `${what} unterminated`);
			assert.equal(stripTerminal(`a${opener}0;t\x07b`), "ab", `${what} BEL`);
			assert.equal(stripTerminal(`a${opener}0;t\x1b\\b`), "ab", `${what} ESC \\`);
			assert.equal(stripTerminal(`a${opener}0;t\x9cb`), "ab", `${what} ST`);
			// Stopped by an ESC that is not ST: only the opener goes, then the ESC's own rule applies.
			assert.equal(stripTerminal(`a${opener}0;t\x1b[31mb\x07c`), "a0;tbc", `${what} stopped by CSI`);
		}
	});

	test("present(): every sequence removed from text content", async () => {
		const { store } = await newStore();
		for (const [name, sequence] of CORPUS) {
			const presented = await present(textParts(wrap(sequence)), store, "escape");
			assert.equal(presented.text, "«»", name);
			assert.deepEqual(presented.content, [{ type: "text", text: "«»" }], name);
		}
		const jammed = await present(textParts(JAMMED), store, "jammed");
		assert.equal(jammed.text, JAMMED_CLEAN);
	});

	test("present(): escapes in names, types and uris of links, resources and blobs are removed", async () => {
		const { store } = await newStore();
		const corpus = CORPUS.map(([, sequence]) => sequence).join("");
		const presented = await present(
			toolParts([
				{
					type: "resource_link",
					name: `n${corpus}`,
					uri: `file:///u${corpus}`,
					mimeType: `text/x${corpus}`,
					description: corpus,
				},
				{ type: "audio", data: "AAAA", mimeType: `audio/${corpus}` },
				{ type: "image", data: "AAAA", mimeType: `image/${corpus}` },
				{ type: "resource", resource: { uri: `ui://${corpus}`, text: "x" } },
				{ type: "resource", resource: { uri: `file:///b${corpus}`, blob: "AAAA", mimeType: "application/pdf" } },
				{ type: `evil${corpus}` } as unknown as Content[number],
			]),
			store,
			`label${corpus}`,
		);
		assertClean(presented.text, "descriptive lines");
		for (const path of presented.info.saved) assertClean(path, "saved path");
	});

	test("present(): a long escape-laden text that is truncated has no control left inline or in the file", async () => {
		const { store } = await newStore();
		const text = Array.from({ length: 3000 }, (_, i) => `${CORPUS[i % CORPUS.length]?.[1]}row ${i}`).join("\n");
		const presented = await present(textParts(text), store, "escapes-big");
		assertClean(presented.text, "inline");
		assert.ok(presented.info.truncated);
		const file = await readFile(presented.info.overflowPath ?? "", "utf8");
		assertClean(file, "overflow file");
		assert.equal(file, stripTerminal(text));
	});

	test("sanitize(): every sequence removed from error text", () => {
		for (const [name, sequence] of CORPUS) assert.equal(sanitize(wrap(sequence)), "«»", name);
		assert.equal(sanitize(JAMMED), JAMMED_CLEAN);
		assert.equal(sanitize(`Error:\x1b[31m bad\x1b[0m\r\nBearer abc.def`), "Error: bad\nBearer [redacted]");
	});

	test("sanitize(): bounded length, secrets redacted", () => {
		const long = sanitize(`${"x".repeat(MAX_MESSAGE_CHARS + 500)}`);
		assert.equal(long, `${"x".repeat(MAX_MESSAGE_CHARS)}… [cut]`);
		assert.equal(sanitize("token hunter2secret leaked", ["hunter2secret"]), "token [redacted] leaked");
	});

	test("sanitize(): the length cut never splits a surrogate pair", () => {
		const cut = sanitize(`${"x".repeat(MAX_MESSAGE_CHARS - 1)}😀tail`);
		assertWellFormed(cut, "sanitize cut");
		assert.equal(cut, `${"x".repeat(MAX_MESSAGE_CHARS - 1)}… [cut]`, "the whole pair is left out");
		const after = sanitize(`${"x".repeat(MAX_MESSAGE_CHARS - 2)}😀tail`);
		assert.equal(after, `${"x".repeat(MAX_MESSAGE_CHARS - 2)}😀… [cut]`, "a pair that fits is kept whole");
	});

	test("TailBuffer: every sequence split across two chunks at every byte position is removed", () => {
		const checked = { splits: 0 };
		for (const [name, sequence] of CORPUS) {
			const bytes = Buffer.from(`${wrap(sequence)}\n`, "utf8");
			for (let at = 0; at <= bytes.length; at += 1) {
				const tail = new TailBuffer();
				tail.push(bytes.subarray(0, at));
				tail.push(bytes.subarray(at));
				const text = tail.text();
				assertClean(text, `${name} split at byte ${at}`);
				assert.equal(text, "«»", `${name} split at byte ${at}`);
				checked.splits += 1;
			}
		}
		assert.ok(checked.splits > CORPUS.length * 3);
	});

	test("TailBuffer: string chunks split at every UTF-16 position, and the jammed corpus byte by byte", () => {
		for (const [name, sequence] of CORPUS) {
			const text = wrap(sequence);
			for (let at = 0; at <= text.length; at += 1) {
				const tail = new TailBuffer();
				tail.push(text.slice(0, at));
				tail.push(text.slice(at));
				assert.equal(tail.text(), "«»", `${name} split at ${at}`);
			}
		}
		const tail = new TailBuffer(64 * KiB);
		for (const byte of Buffer.from(JAMMED, "utf8")) tail.push(Buffer.from([byte]));
		assert.equal(tail.text(), JAMMED_CLEAN);
	});

	test("TailBuffer: bounded to its size, keeps the tail from a line start, clear() empties it", () => {
		const tail = new TailBuffer(4096);
		for (let i = 0; i < 5000; i += 1) tail.push(`\x1b[33mwarning ${i}\x1b[0m\r\n`);
		const text = tail.text();
		assertClean(text, "tail");
		assert.ok(Buffer.byteLength(text) <= 4096);
		assert.ok(text.endsWith("warning 4999"));
		assert.match(text, /^warning \d+$/m);
		assert.ok(
			text.split("\n").every((line) => /^warning \d+$/.test(line)),
			"no partial first line",
		);
		tail.clear();
		assert.equal(tail.text(), "");
	});

	test("TailBuffer: a tail that starts inside a multi-byte character (no newline to cut at) has no U+FFFD", () => {
		const tail = new TailBuffer(4096);
		tail.push(`${"é".repeat(5000)}a`);
		const text = tail.text();
		assertWellFormed(text, "tail");
		// 10,001 bytes; the last 4,096 start on the second byte of an 'é', which is skipped.
		assert.equal(text, `${"é".repeat(2047)}a`);
		for (const char of ["€", "😀"]) {
			const wide = new TailBuffer(4096);
			wide.push(`${char.repeat(5000)}a`);
			const wideText = wide.text();
			assertWellFormed(wideText, `tail of ${char}`);
			assert.ok(wideText.startsWith(char) && wideText.endsWith(`${char}a`), `tail of ${char}`);
		}
	});

	test("TailBuffer: a raw 8-bit C1 byte (not UTF-8) never survives as a control character", () => {
		const tail = new TailBuffer();
		tail.push(Buffer.from([0x61, 0x9b, 0x33, 0x31, 0x6d, 0x62, 0x9d, 0x30, 0x3b, 0x74, 0x07, 0x63]));
		assertClean(tail.text(), "raw C1 bytes");
	});
});

describe("remote bodies", () => {
	test("an HTML error page quoted in an error never reaches a message", () => {
		const text = sanitize(
			"Registration rejected (HTTP 404): <!DOCTYPE html>\n<html><head><title>x</title></head><body>secret page</body></html> done",
		);
		assert.equal(text, "Registration rejected (HTTP 404): [HTML page omitted] done");
		assert.equal(sanitize("a <b>tag</b> in prose stays"), "a <b>tag</b> in prose stays");
	});
});

// ---------------------------------------------------------------------------------------------
// Unterminated string sequences (issue #13, item 1)

describe("an unterminated string sequence removes at most the rest of its own line", () => {
	const OPENERS_7 = ["\x1b]", "\x1bP", "\x1bX", "\x1b^", "\x1b_"];
	const OPENERS_8 = ["\x90", "\x98", "\x9d", "\x9e", "\x9f"];

	test("stripTerminal: the next lines survive for every opener, 7-bit and 8-bit", () => {
		// A 7-bit opener takes the rest of its line; an unterminated 8-bit opener goes alone (its body stays).
		const cases = [...OPENERS_7.map((opener) => [opener, ""]), ...OPENERS_8.map((opener) => [opener, "0;t"])];
		for (const [opener = "", body = ""] of cases) {
			const what = JSON.stringify(opener);
			assert.equal(stripTerminal(`keep${opener}0;t\nTAILMARK\nlast`), `keep${body}\nTAILMARK\nlast`, what);
			// CRLF is a line end too (it becomes \n first).
			assert.equal(stripTerminal(`keep${opener}0;t\r\nTAILMARK`), `keep${body}\nTAILMARK`, `${what} CRLF`);
			// A terminator on a later line does not reach back: the line end closes the sequence first.
			assert.equal(stripTerminal(`a${opener}0;t\nTAIL\x07MARK`), `a${body}\nTAILMARK`, `${what} later BEL`);
			assert.equal(stripTerminal(`a${opener}0;t\nTAIL\x1b\\MARK`), `a${body}\nTAILMARK`, `${what} later ST`);
		}
		// A tmux passthrough cut short ends at its line too.
		assert.equal(stripTerminal("a\x1bPtmux;\x1b\x1b]0;x\nTAILMARK"), "a\nTAILMARK");
		// Terminated sequences on one line are unchanged, text around them kept.
		assert.equal(stripTerminal("a\x1b]0;t\x07b\nc"), "ab\nc");
	});

	test("present(): a result whose last line is cut inside an OSC keeps the lines after it, inline and in the file", async () => {
		const { store } = await newStore();
		const head = numberedLines(1000);
		const text = `${head}last line cut \x1b]8\nTAILMARK\n`;
		const expected = `${head}last line cut \nTAILMARK\n`;
		const small = await present(textParts(`x \x1b]8\nTAILMARK`), store, "cut-small");
		assert.equal(small.text, "x \nTAILMARK");
		const presented = await present(textParts(text), store, "cut-osc");
		assert.ok(presented.info.truncated, "80 KB of text is truncated");
		const file = await readFile(presented.info.overflowPath ?? "", "utf8");
		assert.equal(file, expected, "the overflow file is the full text, byte for byte, less the sequence");
		assert.equal(presented.info.truncated.totalBytes, Buffer.byteLength(expected));
		// Two text blocks: the cut one and the next one.
		const blocks = await present(
			toolParts([
				{ type: "text", text: "cut \x1b]8" },
				{ type: "text", text: "TAILMARK" },
			]),
			store,
			"b",
		);
		assert.equal(blocks.text, "cut \nTAILMARK");
	});

	test("present(): a stray ESC ] early in a 5 MiB text costs only the rest of its line", async (t) => {
		const { store } = await newStore();
		const body = numberedLines((5 * MiB) / 80);
		const text = `first line\nstray \x1b] here, rest of line lost\n${body}TAILMARK\n`;
		const expected = `first line\nstray \n${body}TAILMARK\n`;
		const started = performance.now();
		const presented = await present(textParts(text), store, "stray");
		t.diagnostic(`5 MiB with a stray ESC ]: present() ${(performance.now() - started).toFixed(0)} ms`);
		assert.ok(presented.text.startsWith(`first line\nstray \n${body.slice(0, 1000)}`), "inline keeps the lines after it");
		assertClean(presented.text, "inline");
		const file = await readFile(presented.info.overflowPath ?? "", "utf8");
		assert.equal(file.length, expected.length);
		assert.equal(sha256(file), sha256(expected), "the overflow file is the full text less the sequence");
		assert.ok(file.endsWith("TAILMARK\n"));
	});

	test("stripping stays linear on 5 MiB of pathological input (many openers that never close on one line)", (t) => {
		const count = Math.floor((5 * MiB) / 5);
		// One opener, then ESC ESC ] x repeated (a doubled ESC belongs to a string body), then a lone ESC
		// that stops the body: a backtracking scan restarts at every inner opener (quadratic).
		const text = `a\x1b]${"\x1b\x1b]x".repeat(count)}\x1bZ\nTAIL`;
		const started = performance.now();
		const out = stripTerminal(text);
		t.diagnostic(`5 MiB pathological: stripTerminal ${(performance.now() - started).toFixed(0)} ms`);
		assert.equal(out, `a${"x".repeat(count)}\nTAIL`);
		// Many unterminated 8-bit openers, and many 7-bit ones each cut by the next, on one 5 MiB line.
		const c1 = `${"\x9d0;t".repeat(count)}\nTAIL`;
		assert.equal(stripTerminal(c1), `${"0;t".repeat(count)}\nTAIL`);
		const c0 = `${"\x1b]0;t".repeat(count)}\nTAIL`;
		assert.equal(stripTerminal(c0), `${"0;t".repeat(count - 1)}\nTAIL`);
	});
});

// ---------------------------------------------------------------------------------------------
// The check behind large texts (`encodeClean` in src/output.ts)

/** A seeded generator (mulberry32), so a failing case can be replayed. */
function seeded(seed: number): () => number {
	const state = { seed };
	return () => {
		state.seed = (state.seed + 0x6d2b79f5) | 0;
		const a = Math.imul(state.seed ^ (state.seed >>> 15), 1 | state.seed);
		const b = (a + Math.imul(a ^ (a >>> 7), 61 | a)) ^ a;
		return ((b ^ (b >>> 14)) >>> 0) / 4294967296;
	};
}

/** Every character `stripTerminal` removes on its own: C0 but tab and newline, DEL, C1. */
const REMOVED = [
	...Array.from({ length: 0x20 }, (_, code) => code).filter((code) => code !== 0x09 && code !== 0x0a),
	...Array.from({ length: 0x21 }, (_, index) => 0x7f + index),
].map((code) => String.fromCharCode(code));
/** Characters that stay, chosen near the removed ones in UTF-8 (0xC2 leads, 0x80–0x9F continuations). */
const KEPT = [
	"a",
	"Z",
	"~",
	" ",
	"\t",
	"\n",
	"\u00a0",
	"\u00a9",
	"\u00bf",
	"\u00c2",
	"\u0100",
	"\u0142",
	"\u0800",
	"\u2028",
	"\u2014",
	"\u00e9",
	"\ufffd",
	"\ud83d\ude00",
	"\ud800",
	"\udfff",
	"\u{10ffff}",
];

function assertAgrees(text: string, label: string): void {
	const exact = stripTerminal(text) === text;
	const fast = encodeClean(text);
	assert.equal(fast !== undefined, exact, `${label}: encodeClean says ${fast ? "clean" : "needs stripping"}`);
	if (!fast) return;
	assert.ok(Buffer.from(fast.bytes).equals(Buffer.from(text)), `${label}: bytes`);
	assert.equal(fast.newlines, text.split("\n").length - 1, `${label}: newlines`);
}

describe("encoding and checking a large text once (encodeClean)", () => {
	test("agrees with stripTerminal on random texts: the same verdict, Buffer.from's bytes, every newline", () => {
		const random = seeded(20261203);
		const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
		for (const round of Array.from({ length: 4000 }, (_, index) => index)) {
			const length = Math.floor(random() * (round < 3000 ? 80 : 600));
			const chars = Array.from({ length }, () => pick(KEPT));
			// Half of the texts get one removed character somewhere (a few get two).
			const dirty = round % 2 === 0 ? 0 : random() < 0.9 ? 1 : 2;
			Array.from({ length: dirty }).forEach(() => {
				chars.splice(Math.floor(random() * (chars.length + 1)), 0, pick(REMOVED));
			});
			assertAgrees(chars.join(""), `round ${round}`);
		}
	});

	test("a removed character is found at every place, first to last, in a text of many lines; nothing else is", () => {
		const base = numberedLines(200, 60);
		const places = [0, 1, 14, 15, 16, 17, 31, 32, 4079, 4080, 4081, 8159, 8160, 8161, base.length - 17, base.length - 1];
		for (const place of places) {
			for (const removed of ["\x00", "\x1b", "\r", "\x7f", "\x80", "\x9b", "\x9f"]) {
				const text = `${base.slice(0, place)}${removed}${base.slice(place)}`;
				assert.equal(encodeClean(text), undefined, `${JSON.stringify(removed)} at ${place}`);
			}
			// A 0xC2 lead that starts a kept character (U+00A0, U+00BF) at the same places.
			assertAgrees(`${base.slice(0, place)}\u00a0\u00bf${base.slice(place)}`, `kept 0xC2 lead at ${place}`);
		}
	});

	test("counts every newline: 100,000 of them, and text of newlines only in every length up to 70", () => {
		assert.equal(encodeClean("\n".repeat(100_000))?.newlines, 100_000);
		for (const length of Array.from({ length: 71 }, (_, index) => index)) {
			assert.equal(encodeClean("\n".repeat(length))?.newlines, length, `${length} newlines`);
		}
	});

	test("a text over 1 Mi characters: a pair across the 1 Mi mark, a removed character after it", () => {
		const head = "y".repeat(1024 * 1024 - 1);
		assertAgrees(`${head}\ud83d\ude00 tail\n`, "pair across the cut");
		assertAgrees(`${head}\ud83d\ude00 tail\x1b[0m\n`, "escape in the second slice");
	});

	test("parts of one result: a clean large text, one that needs stripping and a small one go to the file in order", async () => {
		const { store } = await newStore();
		const clean = numberedLines(2000, 40);
		const coloured = `\x1b[1m${numberedLines(1500, 40)}\x1b[0m`;
		const small = "the end";
		const presented = await present(
			toolParts([
				{ type: "text", text: clean },
				{ type: "text", text: coloured },
				{ type: "text", text: small },
			]),
			store,
			"parts",
		);
		const expected = `${clean}\n${stripTerminal(coloured)}\n${small}`;
		assert.equal(await readFile(presented.info.overflowPath ?? "", "utf8"), expected);
		assert.equal(presented.info.truncated?.totalBytes, Buffer.byteLength(expected));
		assert.equal(presented.info.truncated?.totalLines, expected.split("\n").length);
		assert.equal(shownOf(presented), clean.slice(0, presented.info.truncated?.shownBytes));
	});

	test("a clean large text: the totals of its one encoding", async () => {
		const inProcess = await present(textParts("abc\n".repeat(100000)), (await newStore()).store, "clean");
		assert.deepEqual(inProcess.info.truncated, {
			shownBytes: 1999 * 4,
			totalBytes: 400000,
			shownLines: 1999,
			totalLines: 100000,
		});
	});
});
