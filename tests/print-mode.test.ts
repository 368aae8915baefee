/**
 * `/mcp` in print mode, through the real Pi 1.6 with the faux model: `/mcp prompt` waits for the model's
 * answer (print mode ends when the command returns), an unknown server names the closest, and a call the
 * `confirm` setting refuses is said on stderr for the user, not only to the model.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, test } from "node:test";
import { makeSandbox, runPiPrint, type Sandbox } from "./helpers/pi.ts";
import { FIXTURES } from "./helpers/servers.ts";

const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const sandboxes: Sandbox[] = [];
after(async () => {
	await Promise.all(sandboxes.map((sandbox) => sandbox.cleanup()));
});

async function withNotes(confirm?: unknown): Promise<Sandbox> {
	const sandbox = await makeSandbox();
	sandboxes.push(sandbox);
	const notes = { command: process.execPath, args: [join(FIXTURES, "user-server.mjs")], confirm };
	await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { notes } }));
	return sandbox;
}

test("pi -p '/mcp prompt …' prints the model's answer; an unknown server is named with the closest", async () => {
	const sandbox = await withNotes();
	const script = [{ text: "MODEL SAW: {{user}}" }];
	const run = await runPiPrint({
		sandbox,
		extensions: [EXTENSION],
		script,
		prompt: "/mcp prompt notes hello",
		timeoutMs: 60_000,
	});
	assert.equal(run.code, 0, run.stderr);
	assert.match(run.stdout, /MODEL SAW: Say hello to the fixture\./);
	const typo = await runPiPrint({
		sandbox,
		extensions: [EXTENSION],
		script,
		prompt: "/mcp prompt notse hello",
		timeoutMs: 60_000,
	});
	assert.match(typo.stderr, /unknown MCP server "notse"; configured: notes; did you mean "notes"\?/);
});

test("a call refused in print mode is said on stderr too", async () => {
	const sandbox = await withNotes("all");
	const call = { tool: "mcp", args: { action: "call", server: "notes", tool: "delete_note", args: { id: "n1" } } };
	const run = await runPiPrint({
		sandbox,
		extensions: [EXTENSION],
		script: [call, { text: "REFUSAL: {{last}}" }],
		prompt: "delete a note",
		timeoutMs: 60_000,
	});
	assert.equal(run.code, 0, run.stderr);
	assert.match(run.stdout, /REFUSAL: mcp call notes\/delete_note: not run\./);
	assert.match(
		run.stderr,
		/pi-mcp: refused the model's call of notes\/delete_note: MCP server "notes" has "confirm": "all", which print mode cannot ask; change "confirm" in \S+mcp\.json to allow it\./,
	);
});
