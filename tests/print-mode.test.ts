/**
 * `/mcp` in print mode, through the real Pi 1.6 with the faux model, in one run of four messages: `/mcp status`
 * is plain text on stderr, a call the `confirm` setting refuses is said on stderr for the user (not only to the
 * model), an unknown server names the closest, and `/mcp prompt` waits for the model's answer (print mode ends
 * when the command returns).
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

test("one print run: /mcp status is plain text on stderr; a refused call is said on stderr too; an unknown server is named with the closest; pi -p '/mcp prompt …' prints the model's answer", async () => {
	const sandbox = await makeSandbox();
	sandboxes.push(sandbox);
	// "confirm" governs the model's calls only: the user's own /mcp prompt is not asked about.
	const notes = { command: process.execPath, args: [join(FIXTURES, "user-server.mjs")], confirm: "all" };
	await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { notes } }));
	const call = { tool: "mcp", args: { action: "call", server: "notes", tool: "delete_note", args: { id: "n1" } } };
	// Print mode runs its messages in order and prints the last answer: the prompt's answer comes last, so
	// stdout holds it only if `/mcp prompt` waited for the model (print mode ends when the command returns).
	const run = await runPiPrint({
		sandbox,
		extensions: [EXTENSION],
		script: [call, { text: "REFUSAL: {{last}}" }, { text: "MODEL SAW: {{user}}" }],
		prompt: "/mcp status",
		morePrompts: ["delete a note", "/mcp prompt notse hello", "/mcp prompt notes hello"],
		timeoutMs: 60_000,
	});
	assert.equal(run.code, 0, run.stderr);
	// Pi keeps stdout for the agent: the status is on stderr, plain (no manager outside the TUI).
	assert.match(run.stderr, /^MCP servers \(pi-mcp\):\n {2}notes: idle · stdio/m);
	assert.doesNotMatch(run.stdout, /MCP servers/);
	assert.match(
		run.stderr,
		/pi-mcp: refused the model's call of notes\/delete_note: MCP server "notes" has "confirm": "all", which print mode cannot ask; change "confirm" in \S+mcp\.json to allow it\./,
	);
	assert.match(run.stderr, /unknown MCP server "notse"; configured: notes; did you mean "notes"\?/);
	// What the model reads of a refused call, in print mode, is checked in tests/confirm.test.ts.
	assert.match(run.stdout, /^MODEL SAW: .*Say hello to the fixture\.\n$/s);
	assert.doesNotMatch(run.stdout, /REFUSAL/, "only the last answer is printed");
});
