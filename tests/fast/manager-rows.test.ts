/**
 * The manager's rows and words, without Pi (fast): a long label keeps its end (where URIs differ), the tools
 * screen keeps the server's order with hidden tools greyed in place, their hints and descriptions shown, and
 * errors are worded with the manager's items from where they were made (no text parsed back); a form's Tab
 * takes a completion even while the answer to the last key is on its way.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Tool } from "@modelcontextprotocol/client";
import type { ServerStatus } from "../../src/contracts.ts";
import { SetupFailed } from "../../src/errors.ts";
import { formScreen } from "../../src/manager/form.ts";
import { rowList } from "../../src/manager/list.ts";
import { choiceRows, managerText, statusError, type Ui } from "../../src/manager/parts.ts";
import { toolRows } from "../../src/manager/tool-rows.ts";

const plain = (_color: string, text: string) => text;
const ui = { theme: { fg: plain } } as unknown as Ui;

test("a label too long for its column keeps its end: two long URIs stay apart", () => {
	const base = "notes://a-rather-long-host-name.example/collections/2026/";
	const rows = choiceRows(ui, [
		{ value: "a", label: `${base}first-note`, description: "one" },
		{ value: "b", label: `${base}second-note`, description: "two" },
	]);
	const [first, second] = rows.map((row) => row.text(78, false));
	assert.match(first ?? "", /…\S*first-note\s+one$/);
	assert.match(second ?? "", /…\S*second-note\s+two$/);
});

const tool = (name: string, description: string, annotations?: Tool["annotations"]): Tool =>
	({ name, description, inputSchema: { type: "object" }, annotations }) as Tool;

test("tools keep the server's order, hidden ones in place with their description; hints in words", () => {
	const listed = [
		tool("echo", "Echo"),
		tool("delete_file", "Delete a file", { destructiveHint: true }),
		tool("read_file", "Read", { readOnlyHint: true }),
	];
	const status = { hiddenTools: [{ field: "excludeTools", count: 1, names: ["delete_file"] }] } as unknown as ServerStatus;
	const visible = [listed[0], listed[2]] as Tool[];
	const all = toolRows(plain, visible, listed, status, "");
	assert.deepEqual(
		all.rows.map((row) => row.text(100, false).replace(/\s+/g, " ")),
		["echo Echo", "delete_file (hidden by excludeTools) [destructive] Delete a file", "read_file [read-only] Read"],
	);
	assert.deepEqual([...all.hidden], ["delete_file"]);
	// A query: the matching visible tools best first, then hidden tools whose name or description holds it.
	const found = toolRows(plain, [], listed, status, "delete");
	assert.deepEqual(
		found.rows.map((row) => row.value),
		["delete_file"],
	);
});

test("the tools list does not wrap when asked not to; others do", () => {
	const kb = { matches: (data: string, key: string) => data === key } as never;
	const rows = ["a", "b", "c"].map((value) => ({ value, text: () => value }));
	const style = { marker: (text: string) => text, info: (text: string) => text };
	const still = rowList(kb, style, rows, { pick: () => undefined, cancel: () => undefined, wrap: false });
	still.handleInput("tui.select.up");
	assert.equal(still.selected()?.value, "a");
	const wraps = rowList(kb, style, rows, { pick: () => undefined, cancel: () => undefined });
	wraps.handleInput("tui.select.up");
	assert.equal(wraps.selected()?.value, "c");
});

test("an error names the manager's item, made from its words, not parsed from Pi's", () => {
	const say = (words: { reconnect: (server: string) => string }) => `x failed.\nFix the cause, then run ${words.reconnect("x")}.`;
	const error = new SetupFailed(
		"x",
		say({ reconnect: (server) => `/mcp reconnect ${server}` }),
		{ kind: "reconnect", server: "x" },
		say,
	);
	assert.equal(managerText(error), "x failed.\nFix the cause, then run Reconnect.");
	assert.equal(managerText(new Error("plain")), "plain");
	const status = { error: error.message, errorIn: error.worded } as unknown as ServerStatus;
	assert.equal(statusError(status), "x failed.\nFix the cause, then run Reconnect.");
});

test("a form's Tab right after a key takes a completion that still fits, before the server's next answer", async () => {
	const answers: Array<(found: readonly string[]) => void> = [];
	const sent: Array<Readonly<Record<string, string>>> = [];
	const form = formScreen(
		{
			theme: { fg: plain, bold: (text: string) => text },
			kb: { matches: (data: string, key: string) => data === key },
			tui: { requestRender: () => undefined },
			view: {},
		} as unknown as Ui,
		{
			title: "notes: prompt review",
			action: "Send",
			fields: [{ name: "file", required: true }],
			complete: () => new Promise((resolve) => answers.push(resolve)),
			submit: (values) => sent.push(values),
		},
	);
	const settle = () => new Promise((resolve) => setImmediate(resolve));
	form.input("s");
	answers.at(-1)?.(["src/a.ts", "src/b.ts", "scripts/x.ts"]);
	await settle();
	assert.match(form.body(80, 20).join("\n"), /tab: src\/a\.ts · src\/b\.ts · scripts\/x\.ts/);
	// "/" typed: its answer is still on the way; the earlier completions that fit stay, and Tab takes one.
	form.input("r");
	form.input("c");
	form.input("/");
	assert.match(form.body(80, 20).join("\n"), /tab: src\/a\.ts · src\/b\.ts$/m);
	form.input("\t");
	assert.match(form.body(80, 20).join("\n"), /^→ file\*\s+src\/a\.ts/m);
	// An answer to a key typed before is not shown over a later one; moving to another row clears them.
	answers.at(-2)?.(["src/zzz"]);
	await settle();
	assert.doesNotMatch(form.body(80, 20).join("\n"), /zzz/);
	form.input("tui.select.down");
	assert.doesNotMatch(form.body(80, 20).join("\n"), /tab:/);
	form.input("tui.select.confirm");
	assert.deepEqual(sent, [{ file: "src/a.ts" }]);
});
