/**
 * TUI rendering of `mcp` calls and results (src/render.ts): one-line call, collapsed and expanded
 * results, and no terminal escape from arguments or server text surviving into the terminal.
 *   node --import tsx --test tests/fast/render.test.ts
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { Theme } from "@earendil-works/pi-coding-agent";
import { visibleWidth } from "@earendil-works/pi-tui";
import { present, toolResultParts } from "../../src/output/content.ts";
import { escapeName, formatBytes } from "../../src/output/text.ts";
import { createOverflowStore, INLINE_MAX_BYTES } from "../../src/output.ts";
import { callLine, type McpArgs, type McpDetails, renderCall, renderResult, resultSummary } from "../../src/render.ts";

/** A theme that adds nothing, so whatever reaches the output came from the inputs or pi-tui itself. */
const theme = { fg: (_colour: string, text: string) => text, bold: (text: string) => text } as unknown as Theme;

const WIDTHS = [1, 2, 5, 10, 20, 33, 40, 80, 120, 300];

/** pi-tui's own reset after an ellipsis, the only escape sequence allowed in rendered output. */
const RESET = "\x1b[0m";
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

function assertNoEscapes(lines: readonly string[], what: string): void {
	for (const line of lines) {
		const found = CONTROL.exec(line.split(RESET).join(""));
		assert.equal(found, null, `${what}: U+${found?.[0].charCodeAt(0).toString(16).padStart(4, "0")} in ${JSON.stringify(line)}`);
	}
}

function assertOneLine(lines: readonly string[], width: number, what: string): void {
	assert.equal(lines.length, 1, `${what}: ${lines.length} lines`);
	const [line = ""] = lines;
	assert.ok(!line.includes("\n") && !line.includes("\r"), `${what}: line break inside ${JSON.stringify(line)}`);
	assert.ok(visibleWidth(line) <= width, `${what}: width ${visibleWidth(line)} > ${width} in ${JSON.stringify(line)}`);
}

const ESCAPES = [
	"\x1b[31m",
	"\x1b[2J",
	"\x1b[?1049h",
	"\x1b]0;title\x07",
	"\x1b]8;;https://evil.example/\x1b\\",
	"\x1b]52;c;Y3VybA==\x07",
	"\x1bP$qm\x1b\\",
	"\x1b_Gf=100;AAAA\x1b\\",
	"\x9b31m",
	"\x9d0;t\x9c",
	"\x1b", // a lone ESC: followed by a control, not by a character it would consume
	"\x07",
	"\b",
	"\x00",
	"\x7f",
].join("");

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
	for (const cleanup of cleanups.reverse()) await cleanup();
});

// ---------------------------------------------------------------------------------------------

describe("callLine", () => {
	const cases: readonly (readonly [McpArgs, string])[] = [
		[{ action: "call", server: "jira", tool: "search_issues", args: { q: "x" } }, 'mcp call jira/search_issues {"q":"x"}'],
		[{ action: "call", server: "jira", tool: "search_issues" }, "mcp call jira/search_issues"],
		[
			{ action: "call", server: "jira", tool: "create", args: { fields: { summary: "s", labels: ["a", "b"] } } },
			'mcp call jira/create {"fields":{"summary":"s","labels":["a","b"]}}',
		],
		[{ action: "call", server: "fs", tool: "read", args: "path=/tmp\n\tand more" }, "mcp call fs/read path=/tmp and more"],
		[
			{ action: "call", server: "fs", tool: "write", args: { text: "line 1\nline 2" } },
			'mcp call fs/write {"text":"line 1\\nline 2"}',
		],
		[{ action: "tools", server: "jira", query: "issue" }, 'mcp tools jira "issue"'],
		[{ action: "tools", server: "jira" }, "mcp tools jira"],
		[{ action: "tools" }, "mcp tools"],
		[{ action: "status" }, "mcp status"],
		[{ action: "describe", server: "jira", tool: "search_issues" }, "mcp describe jira/search_issues"],
		[{ action: "resources", server: "docs" }, "mcp resources docs"],
		[{ action: "status", query: "ignored", args: { ignored: true } }, "mcp status"],
		[{}, "mcp …"],
	];
	for (const [args, expected] of cases) {
		test(`${JSON.stringify(args)} → ${expected}`, () => {
			assert.equal(callLine(args), expected);
		});
	}

	test("escapes in server, tool, string args, JSON args and query do not survive", () => {
		const line = callLine({ action: "call", server: `s${ESCAPES}`, tool: `t${ESCAPES}`, args: `a${ESCAPES}b` });
		assertNoEscapes([line], "names");
		// Names are shown escaped (item 3 of issue #13), arguments stripped.
		assert.equal(line, `mcp call ${escapeName(`s${ESCAPES}`)}/${escapeName(`t${ESCAPES}`)} ab`);
		assert.ok(line.startsWith(String.raw`mcp call s\u001b[31m\u001b[2J`), line);
		const json = callLine({ action: "call", server: "s", tool: "t", args: { k: `v${ESCAPES}` } });
		assertNoEscapes([json], "JSON args");
		assert.ok(json.startsWith('mcp call s/t {"k":"v'), json);
		assert.equal(callLine({ action: "tools", server: "s", query: `q${ESCAPES}` }), 'mcp tools s "q"');
	});

	test("escapes in the action itself do not survive (the model's arguments are rendered before validation)", () => {
		const line = callLine({ action: `call${ESCAPES}`, server: "s" });
		assertNoEscapes([line], "action");
		assert.equal(line, "mcp call s");
		assert.equal(
			callLine({ action: `tools${ESCAPES}`, server: "s", query: "q" }),
			'mcp tools s "q"',
			"the stripped action is the action",
		);
	});

	test("newlines in the action and query are flattened to one line; in names they are shown escaped", () => {
		assert.equal(callLine({ action: "call\ninjected", server: "s" }), "mcp call injected s");
		assert.equal(callLine({ action: "call", server: "s", tool: "t\ninjected" }), String.raw`mcp call s/t\ninjected`);
		assert.equal(callLine({ action: "call", server: "s\r\ninjected" }), String.raw`mcp call s\r\ninjected`);
		assert.equal(callLine({ action: "tools", server: "s", query: "a\nb" }), 'mcp tools s "a b"');
	});
});

test("bidi controls, zero-width and tag characters in names are shown escaped", () => {
	const line = callLine({ action: "call", server: "s\u202e", tool: "a\u2066b\u200bc\u{e0041}d" });
	assert.equal(line, String.raw`mcp call s\u202e/a\u2066b\u200bc\u{e0041}d`);
	assert.equal(callLine({ action: "read", server: "s", uri: "x://a\u202eb" }), String.raw`mcp read s/x://a\u202eb`);
	assert.equal(
		callLine({ action: "call", server: "翻訳", tool: "翻訳する" }),
		"mcp call 翻訳/翻訳する",
		"other text is unchanged",
	);
});

describe("renderCall", () => {
	const samples: readonly (readonly [string, McpArgs])[] = [
		["short", { action: "call", server: "jira", tool: "search_issues", args: { q: "x" } }],
		["long JSON args", { action: "call", server: "jira", tool: "search_issues", args: { q: "x".repeat(500), n: 1 } }],
		["long string args with newlines and tabs", { action: "call", server: "s", tool: "t", args: "a\nb\tc\r\n".repeat(100) }],
		["wide characters", { action: "call", server: "翻訳", tool: "翻訳する", args: { text: "日本語のテキスト😀".repeat(30) } }],
		["combining marks", { action: "call", server: "s", tool: "t", args: "e\u0301".repeat(200) }],
		["tools query", { action: "tools", server: "github", query: "pull request ".repeat(40) }],
		["escapes everywhere", { action: "call", server: `s${ESCAPES}`, tool: `t${ESCAPES}`, args: { v: ESCAPES.repeat(20) } }],
		["escapes in string args", { action: "call", server: "s", tool: "t", args: ESCAPES.repeat(20) }],
		["no action", {}],
	];
	for (const [name, args] of samples) {
		test(`exactly one line no wider than the width, no escapes: ${name}`, () => {
			const component = renderCall(args, theme);
			for (const width of WIDTHS) {
				const lines = component.render(width);
				assertOneLine(lines, width, `${name} @${width}`);
				assertNoEscapes(lines, `${name} @${width}`);
			}
		});
	}

	test("a line that fits is the call line itself", () => {
		const args = { action: "call", server: "jira", tool: "search_issues", args: { q: "x" } };
		assert.deepEqual(renderCall(args, theme).render(80), [callLine(args)]);
	});

	test("a line that does not fit is cut with an ellipsis", () => {
		const [line = ""] = renderCall(
			{ action: "call", server: "jira", tool: "search_issues", args: { q: "x".repeat(200) } },
			theme,
		).render(30);
		assert.ok(line.startsWith("mcp call jira/search_issues"), line);
		assert.ok(line.includes("..."), line);
		assert.ok(visibleWidth(line) <= 30);
	});

	test("a newline in the action, server, tool or query (from the model's arguments) still renders one line", () => {
		for (const [args, expected] of [
			[{ action: "call", server: "s", tool: "t\ninjected" }, String.raw`mcp call s/t\ninjected`],
			[{ action: "call", server: "s\ninjected" }, String.raw`mcp call s\ninjected`],
			[{ action: "tools", server: "s", query: "a\nb" }, 'mcp tools s "a b"'],
			[{ action: "call\ninjected", server: "s" }, "mcp call injected s"],
		] as const) {
			const lines = renderCall(args, theme).render(80);
			assertOneLine(lines, 80, JSON.stringify(args));
			assert.deepEqual(lines, [expected], JSON.stringify(args));
		}
	});
});

// ---------------------------------------------------------------------------------------------

describe("resultSummary", () => {
	test("size only", () => {
		assert.equal(
			resultSummary({ action: "call", output: { textBytes: 2048, images: 0, saved: [] } }, "ignored", false),
			"2.0 KiB",
		);
		assert.equal(resultSummary(undefined, "héllo", false), "6 B", "falls back to the text's bytes");
	});

	test("images, singular and plural; details.images as a fallback", () => {
		assert.equal(resultSummary({ action: "call", output: { textBytes: 10, images: 1, saved: [] } }, "", false), "10 B · 1 image");
		assert.equal(
			resultSummary({ action: "call", output: { textBytes: 10, images: 3, saved: [] } }, "", false),
			"10 B · 3 images",
		);
		assert.equal(resultSummary({ action: "call", images: 2 }, "abc", false), "3 B · 2 images");
	});

	test("truncation, overflow path and other saved files", () => {
		const details: McpDetails = {
			action: "call",
			output: {
				textBytes: 50 * 1024 * 1024,
				images: 4,
				truncated: { shownBytes: 50_160, totalBytes: 50 * 1024 * 1024, shownLines: 627, totalLines: 655_360 },
				overflowPath: "/tmp/pi-mcp-1/001-big.txt",
				saved: ["/tmp/pi-mcp-1/002-a.png", "/tmp/pi-mcp-1/001-big.txt", "/tmp/pi-mcp-1/003-b.wav"],
			},
		};
		assert.equal(
			resultSummary(details, "", false),
			"50.0 MiB · 4 images · truncated to 49.0 KiB · full: /tmp/pi-mcp-1/001-big.txt · 2 files saved",
		);
		const one: McpDetails = { action: "call", output: { textBytes: 5, images: 0, saved: ["/tmp/x/001-a.wav"] } };
		assert.equal(resultSummary(one, "", false), "5 B · 1 file saved");
	});

	test("truncated without an overflow file (session cap reached)", () => {
		const details: McpDetails = {
			action: "call",
			output: {
				textBytes: 60_000,
				images: 0,
				truncated: { shownBytes: INLINE_MAX_BYTES - 1024, totalBytes: 60_000, shownLines: 1, totalLines: 1 },
				saved: [],
			},
		};
		assert.equal(resultSummary(details, "", false), "58.6 KiB · truncated to 49.0 KiB");
	});

	test("error: the first line of the error, stripped, else of the text", () => {
		assert.equal(resultSummary({ action: "call", error: "\x1b[31mboom\x1b[0m: bad\nstack trace" }, "text", true), "boom: bad");
		assert.equal(resultSummary({ action: "call" }, "\x1b]0;t\x07failed\nmore", true), "failed");
		assert.equal(resultSummary(undefined, "only text", true), "only text");
	});

	test("error with empty text still says something: 'error'", () => {
		assert.equal(resultSummary({ action: "call", error: "" }, "", true), "error");
		assert.equal(resultSummary(undefined, "", true), "error");
		assert.equal(resultSummary(undefined, "\nsecond line", true), "error");
		assert.equal(
			resultSummary({ action: "call", error: "\x1b[31m\x1b[0m \t" }, "text", true),
			"error",
			"only escapes and blanks",
		);
	});

	test("from a real present(): truncation and the overflow path", async () => {
		const base = await mkdtemp(join(tmpdir(), "pi-mcp-render-test-"));
		const store = createOverflowStore({ baseDir: base });
		cleanups.push(() => rm(base, { recursive: true, force: true }));
		cleanups.push(() => store.dispose());
		const presented = await present(
			toolResultParts({
				content: [
					{ type: "text", text: "r".repeat(INLINE_MAX_BYTES + 100) },
					{ type: "image", data: Buffer.from("png").toString("base64"), mimeType: "image/png" },
					{ type: "audio", data: Buffer.from("wav").toString("base64"), mimeType: "audio/wav" },
				],
			}),
			store,
			"summary",
		);
		const path = presented.info.overflowPath;
		assert.ok(path);
		assert.ok(presented.info.textBytes > INLINE_MAX_BYTES + 100, "the text plus the audio's line");
		assert.equal(presented.info.truncated?.shownBytes, INLINE_MAX_BYTES - 1024, "the head budget leaves 1 KiB for the notice");
		assert.equal(
			resultSummary({ action: "call", output: presented.info }, presented.text, false),
			`${formatBytes(presented.info.textBytes)} · 1 image · truncated to 49.0 KiB · full: ${path} · 1 file saved`,
		);
	});
});

// ---------------------------------------------------------------------------------------------

describe("renderResult", () => {
	const collapsed = { expanded: false, isPartial: false } as const;
	const expanded = { expanded: true, isPartial: false } as const;

	const details: McpDetails = {
		action: "call",
		output: {
			textBytes: 60_000,
			images: 1,
			truncated: { shownBytes: 50_000, totalBytes: 60_000, shownLines: 10, totalLines: 12 },
			overflowPath: "/tmp/pi-mcp-9/001-x.txt",
			saved: ["/tmp/pi-mcp-9/001-x.txt"],
		},
	};
	const seen = "first line\n\tsecond line\nthird line";
	const result = { content: [{ type: "text", text: seen }, { type: "image" }], details };

	test("collapsed: one line, the summary (size, images, truncation, overflow path)", () => {
		const lines = renderResult(result, collapsed, theme, false).render(200);
		assert.deepEqual(lines, [resultSummary(details, seen, false)]);
		assert.equal(lines[0], "58.6 KiB · 1 image · truncated to 48.8 KiB · full: /tmp/pi-mcp-9/001-x.txt");
	});

	test("collapsed: one line no wider than the width, at every width", () => {
		const component = renderResult(result, collapsed, theme, false);
		for (const width of WIDTHS) assertOneLine(component.render(width), width, `@${width}`);
	});

	test("collapsed error: the first line of the error text", () => {
		const error = {
			content: [{ type: "text", text: "Tool failed: \x1b[31mnot found\x1b[0m\ndetails" }],
			details: { action: "call" },
		};
		assert.deepEqual(renderResult(error, collapsed, theme, true).render(200), ["Tool failed: not found"]);
		const withDetail = { ...error, details: { action: "call", error: "server said no\nmore" } };
		assert.deepEqual(renderResult(withDetail, collapsed, theme, true).render(200), ["server said no"]);
		for (const width of WIDTHS)
			assertOneLine(renderResult(error, collapsed, theme, true).render(width), width, `error @${width}`);
	});

	test("expanded: the text the model saw, line for line", () => {
		const lines = renderResult(result, expanded, theme, false).render(80);
		assert.deepEqual(
			lines.map((line) => line.trimEnd()),
			["first line", "   second line", "third line"],
		);
		for (const line of lines) assert.ok(visibleWidth(line) <= 80);
	});

	test("expanded: long lines wrap within the width and keep all the text", () => {
		const long = "word ".repeat(100).trim();
		const lines = renderResult({ content: [{ type: "text", text: long }] }, expanded, theme, false).render(40);
		assert.ok(lines.length > 1);
		for (const line of lines) assert.ok(visibleWidth(line) <= 40);
		assert.equal(lines.map((line) => line.trim()).join(" "), long);
	});

	test("expanded error: the whole error text", () => {
		const lines = renderResult({ content: [{ type: "text", text: "line 1\nline 2" }] }, expanded, theme, true).render(40);
		assert.deepEqual(
			lines.map((line) => line.trimEnd()),
			["line 1", "line 2"],
		);
	});

	test("escapes in the content do not survive, collapsed or expanded, error or not", () => {
		const hostile = {
			content: [{ type: "text", text: `a${ESCAPES}b\nc${ESCAPES}d` }],
			details: { action: "call", error: `e${ESCAPES}` },
		};
		for (const isError of [false, true]) {
			for (const options of [collapsed, expanded]) {
				for (const width of WIDTHS)
					assertNoEscapes(
						renderResult(hostile, options, theme, isError).render(width),
						`${isError} ${options.expanded} @${width}`,
					);
			}
		}
		const lines = renderResult(hostile, expanded, theme, false)
			.render(80)
			.map((line) => line.trimEnd());
		assert.deepEqual(lines, ["ab", "cd"]);
		assert.deepEqual(renderResult(hostile, collapsed, theme, true).render(80), ["e"]);
	});

	test("escapes in an overflow path shown collapsed do not survive", () => {
		const odd: McpDetails = { action: "call", output: { textBytes: 1, images: 0, overflowPath: `/tmp/x${ESCAPES}`, saved: [] } };
		assertNoEscapes(renderResult({ content: [], details: odd }, collapsed, theme, false).render(200), "path");
	});

	test("partial: the progress text on one line, or 'Working…'", () => {
		assert.deepEqual(renderResult({ content: [] }, { expanded: false, isPartial: true }, theme, false).render(80), ["Working…"]);
		const progress = { content: [{ type: "text", text: `40% · ${ESCAPES}indexing` }] };
		const lines = renderResult(progress, { expanded: true, isPartial: true }, theme, false).render(80);
		assert.deepEqual(lines, ["40% · indexing"]);
		for (const width of WIDTHS)
			assertOneLine(renderResult(progress, { expanded: false, isPartial: true }, theme, false).render(width), width, `@${width}`);
	});

	test("partial: a progress text with a newline still renders one line", () => {
		for (const expanded of [false, true]) {
			const lines = renderResult(
				{ content: [{ type: "text", text: "50%\nmore\r\n\tstill" }] },
				{ expanded, isPartial: true },
				theme,
				false,
			).render(80);
			assertOneLine(lines, 80, `progress, expanded ${expanded}`);
			assert.deepEqual(lines, ["50% more still"], `progress, expanded ${expanded}`);
		}
	});
});
