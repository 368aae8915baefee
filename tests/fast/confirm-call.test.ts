/**
 * `confirm` at call time, fast (src/tool/confirm.ts over an in-memory session): the refusal when nobody can be
 * asked (JSON and print modes: to the model and on stderr), and the dialog's words and answers. The dialog in
 * a real Pi over RPC and the print mode's refusal in a real Pi are in tests/confirm.test.ts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, mock, test } from "node:test";
import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import type { Session } from "../../src/contracts.ts";
import { type CallUi, confirmCall } from "../../src/tool/confirm.ts";
import { memorySession } from "../helpers/memory.ts";

const closes: (() => Promise<void>)[] = [];
after(async () => {
	for (const close of closes) await close();
});

function notes(): McpServer {
	const server = new McpServer({ name: "notes", version: "1.0.0" }, { capabilities: { tools: {} } });
	const ran = (name: string) => async () => ({ content: [{ type: "text" as const, text: `${name} ran` }] });
	const input = { inputSchema: z.object({ id: z.string().optional() }) };
	server.registerTool("read_note", { ...input, annotations: { readOnlyHint: true } }, ran("read_note"));
	server.registerTool(
		"delete_note",
		{ ...input, annotations: { destructiveHint: true, readOnlyHint: false } },
		ran("delete_note"),
	);
	return server;
}

async function session(confirm: unknown): Promise<{ session: Session; dir: string; sent: string[] }> {
	const open = await memorySession({ notes: { command: "notes", protocolVersion: "legacy", confirm } }, () => notes);
	closes.push(open.close);
	return open;
}

/** A UI without dialogs (Pi's JSON and print modes). */
const headless = (mode: "json" | "print"): CallUi => ({ hasUI: false, mode, ui: undefined as unknown as CallUi["ui"] });

const textOf = (result: { content: readonly { type: string; text?: string }[] } | undefined) =>
	result?.content.map((block) => block.text ?? "").join("") ?? "";

describe("nobody to ask", () => {
	for (const mode of ["json", "print"] as const) {
		test(`${mode} mode: refused, naming the setting and the file to change it in, on stderr too; nothing is sent`, async (t) => {
			const { session: open, dir, sent } = await session("all");
			const written: string[] = [];
			t.mock.method(process.stderr, "write", (text: string) => written.push(text) > 0);
			const refused = await confirmCall(headless(mode), open, "notes", "read_note", { id: "n1" }, undefined);
			t.mock.restoreAll();
			const file = join(dir, "mcp.json");
			assert.equal(refused?.isError, true);
			assert.equal(
				textOf(refused),
				`mcp call notes/read_note: not run. MCP server "notes" has "confirm": "all", so this call needs the user's confirmation, which ${mode} mode cannot ask for. The user can change "confirm" in ${file}. Do not retry this call in this mode.`,
			);
			assert.deepEqual(written, [
				`pi-mcp: refused the model's call of notes/read_note: MCP server "notes" has "confirm": "all", which ${mode} mode cannot ask; change "confirm" in ${file} to allow it.\n`,
			]);
			assert.equal(sent.includes("tools/call"), false);
		});
	}

	test('"writes" asks nothing for a read-only tool, so headless runs it; a call without a UI (the shell) asks nothing', async () => {
		const { session: open } = await session("writes");
		assert.equal(await confirmCall(headless("json"), open, "notes", "read_note", {}, undefined), undefined);
		assert.equal(await confirmCall(undefined, open, "notes", "delete_note", {}, undefined), undefined);
	});
});

describe("the dialog", () => {
	test("every argument whole and stripped, the hints in words; allow once, allow for the session, deny", async () => {
		const { session: open } = await session("writes");
		const asked: { title: string; options: readonly string[] }[] = [];
		const answers = ["Allow once", "Allow notes/delete_note for this session"];
		const select = mock.fn(async (title: string, options: string[]) => {
			asked.push({ title, options });
			return answers.shift();
		});
		const ui = { hasUI: true, mode: "rpc", ui: { select } } as unknown as CallUi;
		const long = { id: `${"word ".repeat(300)}END \u001b[2J\u202e` };
		assert.equal(await confirmCall(ui, open, "notes", "delete_note", long, undefined), undefined, "allowed once");
		const [first] = asked;
		assert.match(first?.title ?? "", /^MCP server "notes": the model wants to call delete_note\n/);
		assert.match(first?.title ?? "", /\nHints \(declared by the server, not guaranteed\): destructive\n/);
		assert.ok(first?.title.includes(`${"word ".repeat(300)}END \\u001b[2J\\u202e"`), "the argument whole, escaped");
		assert.ok(!first?.title.includes("\u001b") && !first?.title.includes("\u202e"));
		assert.deepEqual(first?.options, ["Allow once", "Allow notes/delete_note for this session", "Deny"]);
		// Allowed for the session: asked once more, then no longer.
		assert.equal(await confirmCall(ui, open, "notes", "delete_note", {}, undefined), undefined);
		assert.equal(await confirmCall(ui, open, "notes", "delete_note", {}, undefined), undefined);
		assert.equal(asked.length, 2);
		assert.equal(await confirmCall(ui, open, "notes", "read_note", {}, undefined), undefined, "read-only: no dialog");
		assert.equal(asked.length, 2);
	});

	test("deny, or a dialog closed without an answer, refuses the call", async () => {
		const { session: open, sent } = await session("all");
		const ui = (answer: string | undefined) =>
			({ hasUI: true, mode: "rpc", ui: { select: async () => answer } }) as unknown as CallUi;
		for (const answer of ["Deny", undefined]) {
			const refused = await confirmCall(ui(answer), open, "notes", "read_note", {}, undefined);
			assert.equal(refused?.isError, true);
			assert.match(textOf(refused), /the user declined this call .*It was not run\. Do not retry the same call/);
		}
		assert.equal(sent.includes("tools/call"), false);
	});
});
