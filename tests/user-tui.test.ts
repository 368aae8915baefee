/**
 * The user's controls in the interactive TUI, driven like a person at a terminal (real Pi 1.6 in tmux):
 * the `confirm` dialog (Escape refuses, nothing reaches the server; allow once runs), `/mcp prompt` with
 * Tab completion and the question for a missing argument, and the manager's Prompts and Resources screens.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { makeSandbox, type Sandbox } from "./helpers/pi.ts";
import { FIXTURES, pidAlive, readWire, startedPids } from "./helpers/servers.ts";
import { HAS_TMUX, type PiTui, startPiTui } from "./helpers/tmux.ts";

const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const USER_SERVER = join(FIXTURES, "user-server.mjs");
const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
	for (const cleanup of cleanups.reverse()) await cleanup();
});

/** Pi in tmux with the `notes` fixture (`confirm` as given) and a faux script; the fixture's log. */
async function startTui(confirm: unknown, script: readonly unknown[]): Promise<{ tui: PiTui; log: string; sandbox: Sandbox }> {
	const sandbox = await makeSandbox();
	cleanups.push(() => sandbox.cleanup());
	const scriptFile = join(sandbox.root, "script.json");
	await writeFile(scriptFile, JSON.stringify(script));
	const log = join(sandbox.root, "wire.log");
	const notes = { command: process.execPath, args: [USER_SERVER], env: { FIXTURE_LOG: log }, confirm };
	await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { notes } }));
	const tui = startPiTui({ ...sandbox, env: { ...sandbox.env, PI_FAUX_SCRIPT: scriptFile } }, [EXTENSION]);
	cleanups.push(() => tui.kill());
	await tui.waitFor(/faux-1/, "Pi's footer");
	return { tui, log, sandbox };
}

const ran = (log: string) => readWire(log).filter((line) => line.event === "call").length;

async function stop(tui: PiTui, log: string): Promise<void> {
	tui.kill();
	const deadline = Date.now() + 15_000;
	while (startedPids(readWire(log)).some(pidAlive) && Date.now() < deadline) {
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
	assert.deepEqual(startedPids(readWire(log)).filter(pidAlive), [], "no server process survives Pi");
}

const callDelete = (id: string) => ({
	tool: "mcp",
	args: { action: "call", server: "notes", tool: "delete_note", args: { id } },
});

describe("the user's controls in one TUI session", { skip: !HAS_TMUX && "needs tmux" }, () => {
	// One Pi for the three walks, in order; each waits only for text its own step puts on the screen.
	const shared = {} as { tui: PiTui; log: string };
	before(async () => {
		const script = [
			callDelete("first"),
			{ text: "ANSWER-1 {{last}}" },
			callDelete("second"),
			{ text: "ANSWER-2 {{last}}" },
			{ text: "MODEL SAW: {{user}}" },
			{ text: "SECOND SAW: {{user}}" },
			{ text: "THIRD SAW: {{user}}" },
		];
		Object.assign(shared, await startTui("writes", script));
		assert.equal(readWire(shared.log).length, 0, "nothing connects at start-up");
	});
	after(async () => {
		if (shared.tui) await stop(shared.tui, shared.log);
	});

	test("the confirm dialog: Escape refuses and nothing runs; Allow once runs the call", async () => {
		const { tui, log } = shared;
		tui.type("delete it");
		tui.keys("Enter");
		const dialog = await tui.waitFor(/Deny/, "the confirm dialog");
		assert.match(dialog, /MCP server "notes": the model wants to call delete_note/);
		assert.match(dialog, /Hints \(declared by the server, not guaranteed\): destructive/);
		assert.match(dialog, /"id": "first"/);
		assert.match(dialog, /→ Allow once\n\s+Allow notes\/delete_note for this session\n\s+Deny/);
		tui.keys("Escape");
		await tui.waitFor(/ANSWER-1 mcp call notes\/delete_note: the user declined this call/, "the refusal the model read");
		assert.equal(ran(log), 0, "nothing reached the server");

		tui.type("again");
		tui.keys("Enter");
		await tui.waitFor(/"id": "second"/, "the second dialog");
		tui.keys("Enter");
		await tui.waitFor(/ANSWER-2 delete_note ran with \{"id":"second"\}/, "the call's result");
		assert.equal(ran(log), 1);
	});

	test("/mcp prompt with Tab completion; a missing argument is asked for; the model answers the prompt", async () => {
		const { tui } = shared;
		tui.type("/mcp prompt notes re");
		await tui.waitFor(/→ review\s+Review a file/, "the prompt names from the server");
		tui.keys("Tab");
		await tui.waitFor(/\/mcp prompt notes review(?!\S)/, "the completed prompt name");
		tui.keys("Enter");
		await tui.waitFor(/review: file/, "the question for the missing argument");
		tui.type("src/b.ts");
		tui.keys("Enter");
		await tui.waitFor(
			/MODEL SAW: [\s\S]*Please review src\/b\.ts\.\s+contents of src\/b\.ts/,
			"the model's answer to the prompt",
		);

		tui.type("/mcp");
		await tui.waitFor(/^→ mcp/m, "the command menu");
		tui.keys("Enter");
		await tui.waitFor(/esc close/, "the manager");
		tui.keys("Enter");
		await tui.waitFor(/^→ Tools/m, "the server's actions");
		tui.keys("Up", "Enter");
		await tui.waitFor(/notes: resources[\s\S]*notes:\/\/guide\s+The guide/, "the resources screen");
		tui.keys("Enter");
		await tui.waitFor(/Attached notes:\/\/guide \(\d+ B\); the model sees it on its next turn\./, "the attachment");
		tui.keys("Escape");
		await tui.waitFor(/→ Resources/m, "back on the server screen");
		tui.keys("Up", "Enter");
		await tui.waitFor(/notes: prompts[\s\S]*hello\s+\(\) Say hello/, "the prompts screen");
		tui.keys("Down", "Enter");
		await tui.waitFor(
			/SECOND SAW: .*GUIDE-TEXT: be kind to fixtures\n?.*Say hello to the fixture\./s,
			"the picked prompt, with the attachment as context",
		);
		await tui.waitFor((screen) => !screen.includes("MCP servers (pi-mcp)"), "the manager closed on picking");
	});

	test("/mcp: Tab after a space completes; an unknown server gets a did-you-mean; the manager's forms fill a template and every prompt argument, with completion", async () => {
		const { tui } = shared;
		tui.type("/mcp tools ");
		// Tab after the space offers the servers (before, Pi's editor looked for file paths). Usually the space
		// closes the menu; on a loaded machine the answer for an earlier key can open the servers' menu already,
		// where Tab takes the one server just the same.
		await tui.waitFor(
			(screen) => screen.includes("/mcp tools") && (!/^→ /m.test(screen) || /^→ notes\s/m.test(screen)),
			"the typed space",
		);
		tui.keys("Tab");
		await tui.waitFor(/\/mcp tools notes(?!\S)/, "the one server, completed on Tab");
		tui.keys("Enter");
		await tui.waitFor(/notes: \d+ tools/, "the tools");

		tui.type("/mcp prompt notse hello");
		await tui.waitFor(/\/mcp prompt notse hello/, "the typed command");
		tui.keys("Enter");
		await tui.waitFor(/unknown MCP server "notse"; configured: notes; did you mean "notes"\?/, "the did-you-mean");

		tui.type("/mcp");
		await tui.waitFor(/^→ mcp/m, "the command menu");
		tui.keys("Enter");
		await tui.waitFor(/esc close/, "the manager");
		tui.keys("Enter");
		await tui.waitFor(/^→ Tools/m, "the server's actions");
		tui.keys("Up", "Enter");
		await tui.waitFor(/notes:\/\/note\/\{id\}\s+template: fill it in/, "the resources with the template");
		tui.keys("Up", "Enter");
		await tui.waitFor(/^→ id\*/m, "the template's form");
		tui.type("a");
		await tui.waitFor(/tab: alpha/, "the server's completion for the variable");
		tui.keys("Tab");
		await tui.waitFor(/^→ id\*\s+alpha/m, "the completion taken");
		tui.keys("Enter", "Enter");
		await tui.waitFor(/Attached notes:\/\/note\/alpha \(\d+ B\)/, "the filled template attached");

		tui.keys("Escape");
		await tui.waitFor(/^→ Resources/m, "back on the server screen");
		tui.keys("Up", "Enter");
		await tui.waitFor(/notes: prompts[\s\S]*→ review/, "the prompts");
		tui.keys("Enter");
		const form = await tui.waitFor(/^→ file\*/m, "the prompt's form");
		assert.match(form, /^ {2}focus\s+\(optional\)/m, "the optional argument is offered, marked");
		tui.type("src/");
		await tui.waitFor(/tab: src\/a\.ts · src\/b\.ts/, "the server's completions for the argument");
		tui.keys("Tab");
		await tui.waitFor(/^→ file\*\s+src\/a\.ts/m, "the completion taken");
		tui.keys("Down");
		tui.type("style");
		await tui.waitFor(/^→ focus\s+style/m, "the optional argument typed");
		tui.keys("Down", "Enter");
		await tui.waitFor(/THIRD SAW: [\s\S]*Please review src\/a\.ts for style\./, "the prompt sent with both arguments");
	});
});
