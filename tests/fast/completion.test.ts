/**
 * Tab completion of `/mcp prompt` and `/mcp attach` (`completeUserCommand`), fast: a notes server like
 * tests/fixtures/user-server.mjs (prompts with a completable argument, a resource, a template with a
 * completable variable) in process over in-memory pairs, beside a server that fails to start. Tab in the
 * real Pi's TUI is in tests/user-tui.test.ts.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { completable, McpServer, ResourceTemplate } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { completeUserCommand } from "../../src/manager/conversation.ts";
import { memorySession } from "../helpers/memory.ts";

function notesServer(): McpServer {
	const server = new McpServer(
		{ name: "pi-mcp-user-fixture", version: "1.0.0" },
		{ capabilities: { resources: {}, prompts: {}, completions: {} } },
	);
	const file = completable(z.string(), (value: string) =>
		["src/a.ts", "src/b.ts", "README.md"].filter((f) => f.startsWith(value)),
	);
	server.registerPrompt(
		"review",
		{ description: "Review a file", argsSchema: z.object({ file, focus: z.string().optional() }) },
		async ({ file: name }) => ({ messages: [{ role: "user", content: { type: "text", text: `Please review ${name}.` } }] }),
	);
	server.registerPrompt("hello", { description: "Say hello" }, async () => ({
		messages: [{ role: "user", content: { type: "text", text: "Say hello to the fixture." } }],
	}));
	server.registerResource("guide", "notes://guide", { description: "The guide", mimeType: "text/plain" }, async (uri) => ({
		contents: [{ uri: uri.href, mimeType: "text/plain", text: "GUIDE-TEXT: be kind to fixtures" }],
	}));
	server.registerResource(
		"note",
		new ResourceTemplate("notes://note/{id}", {
			list: undefined,
			complete: { id: (value: string) => ["alpha", "beta"].filter((id) => id.startsWith(value)) },
		}),
		{ description: "One note by id", mimeType: "text/plain" },
		async (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: `note ${String(id)}` }] }),
	);
	return server;
}

const opened: (() => Promise<void>)[] = [];
after(async () => {
	for (const close of opened) await close();
});

test("Tab completion: servers' prompts, argument names and values, and resource URIs, from the named server only", async () => {
	const open = await memorySession({ notes: { command: "notes" }, broken: { command: "broken" } }, (command) => {
		if (command === "broken") throw new Error("spawn broken ENOENT");
		return notesServer;
	});
	opened.push(open.close);
	const { session } = open;
	const values = async (prefix: string) => (await completeUserCommand(session, prefix))?.map((item) => item.value);
	assert.deepEqual(await values("prompt notes "), ["prompt notes review", "prompt notes hello"]);
	assert.deepEqual(await values("prompt notes re"), ["prompt notes review"]);
	assert.deepEqual(await values("prompt notes review "), ["prompt notes review file=", "prompt notes review focus="]);
	assert.deepEqual(await values("prompt notes review file=src/"), [
		"prompt notes review file=src/a.ts",
		"prompt notes review file=src/b.ts",
	]);
	assert.deepEqual(await values('prompt notes review focus="a b" fi'), ['prompt notes review "focus=a b" file=']);
	assert.deepEqual(await values("attach notes notes://g"), ["attach notes notes://guide"]);
	assert.equal(await completeUserCommand(session, "prompt notes review"), null, "a whole name gets no menu: Enter runs it");
	assert.deepEqual(await values("attach notes notes://note/a"), ["attach notes notes://note/alpha"]);
	assert.equal(await completeUserCommand(session, "prompt nobody "), null);
	assert.equal(await completeUserCommand(session, "prompt broken "), null, "a failing server offers nothing");
	assert.deepEqual(
		session.runtime.status().map((status) => [status.name, status.state]),
		[
			["notes", "ready"],
			["broken", "failed"],
		],
	);
});
