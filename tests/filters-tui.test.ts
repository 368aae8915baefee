/**
 * The `/mcp` manager's tool screen turns a tool off and on for the model: the real Pi 1.6 in tmux, keys
 * typed as a person would. Tab writes `excludeTools` in the file that defines the entry (the rest of the
 * text kept), the hidden tool stays listed, greyed, and Tab shows it again. The server screen shows the
 * server's instructions.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, test } from "node:test";
import { makeSandbox } from "./helpers/pi.ts";
import { pidAlive, readWire, SERVER, startedPids } from "./helpers/servers.ts";
import { HAS_TMUX, startPiTui } from "./helpers/tmux.ts";

const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
	for (const cleanup of cleanups.reverse()) await cleanup();
});

test("the manager's tools: Tab hides a tool (excludeTools, greyed) and shows it again", {
	skip: !HAS_TMUX && "needs tmux",
}, async () => {
	const sandbox = await makeSandbox();
	cleanups.push(() => sandbox.cleanup());
	const log = join(sandbox.root, "wire.log");
	const file = join(sandbox.agentDir, "mcp.json");
	const instructions = join(sandbox.root, "instructions.txt");
	await writeFile(instructions, "Read before you delete.");
	const env = { FIXTURE_LOG: log, FIXTURE_HINT_TOOLS: "1", FIXTURE_INSTRUCTIONS: instructions };
	const entry = { command: process.execPath, args: [SERVER], env };
	const text = `${JSON.stringify({ mcpServers: { fx: entry, other: { command: "x", enabled: false } } }, null, "\t")}\n`;
	await writeFile(file, text);
	const tui = startPiTui(sandbox, [EXTENSION]);
	cleanups.push(() => tui.kill());
	await tui.waitFor(/faux-1/, "Pi's footer");

	tui.type("/mcp");
	await tui.waitFor(/^→ mcp/m, "the command menu");
	tui.keys("Enter");
	await tui.waitFor(/MCP servers \(pi-mcp\)\n\n→ /, "the manager's server list");
	tui.keys("Enter");
	await tui.waitFor(/fx {2}idle · stdio/, "the server screen");
	tui.keys("Enter");
	const listed = await tui.waitFor(/→ echo\s+Echo the text back/, "the tool list");
	// The hints the server declares, beside each tool; the footer whole.
	assert.match(listed, /^ {2}delete_file\s+\[destructive\] Delete a file for good/m);
	assert.match(listed, /^ {2}read_file\s+\[read-only, idempotent\] Read a file's text/m);
	assert.match(listed, /tab hide\/show · esc back/);
	// Up on the first row stays there (no wrap to the last): Down then goes to the second row.
	tui.keys("Up");
	tui.keys("Down");
	await tui.waitFor((screen) => /^→ /m.test(screen) && !/^→ echo/m.test(screen), "the second row");
	tui.keys("Up");
	await tui.waitFor(/^→ echo/m, "the first row again");
	tui.type("delete_file");
	await tui.waitFor(/→ delete_file\s+\[destructive\] Delete a file for good/, "the search result");

	tui.keys("Tab");
	const hidden = await tui.waitFor(
		/→ delete_file\s+\(hidden by excludeTools\) \[destructive\] Delete a file for good/,
		"the tool, hidden and greyed, with its description",
	);
	assert.doesNotMatch(hidden, /no tool matches/, "a hidden row matches: no note says none does");
	assert.match(hidden, /Hidden: "delete_file" \(excludeTools in \S+mcp\.json\)\./);
	const edited = JSON.parse(await readFile(file, "utf8"));
	assert.deepEqual(edited.mcpServers.fx.excludeTools, ["delete_file"]);
	assert.deepEqual(edited.mcpServers.other, { command: "x", enabled: false });
	// Greyed: the row is drawn dim (SGR 2) or in the theme's dim colour, not as a plain row.
	const row = tui
		.screen(true)
		.split("\n")
		.find((line) => line.includes("(hidden by excludeTools)"));
	assert.ok(row?.includes("\u001b["), "the hidden row is styled");
	// Without a query, the hidden tool keeps its place in the server's order (before delete_dir), not the bottom.
	tui.keys(..."delete_file".split("").map(() => "BSpace"));
	const all = await tui.waitFor(
		// The search runs apart from the keys: the empty query can show before its rows do (echo is in no earlier result).
		(screen) =>
			/search: \n|search:\s*type to filter/.test(screen) && /^.{2}echo\s/m.test(screen) && /^.{2}delete_dir\s/m.test(screen),
		"the whole list again",
	);
	const at = (name: string) => all.split("\n").findIndex((line) => new RegExp(`^.{2}${name}\\s`).test(line));
	assert.ok(at("delete_file") >= 0 && at("delete_file") < at("delete_dir"), all);
	assert.match(all, /delete_file\s+\(hidden by excludeTools\)/);

	tui.type("delete_file");
	await tui.waitFor(/→ delete_file\s+\(hidden by/, "the hidden tool found");
	tui.keys("Tab");
	await tui.waitFor(/→ delete_file\s+\[destructive\] Delete a file for good/, "the tool, shown again");
	assert.equal(await readFile(file, "utf8"), text, "the file is as it was");

	// The server screen shows what the server tells the model, in its header and as an item.
	tui.keys("Escape");
	const server = await tui.waitFor(/instructions: Read before you delete\./, "the instructions on the server screen");
	assert.doesNotMatch(server, /Shown:|Hidden:/, "the tools screen's message stays there");
	await tui.waitFor(/^ {2}Instructions\s+what the server tells the model/m, "the instructions item");

	tui.kill();
	const deadline = Date.now() + 15_000;
	while (startedPids(readWire(log)).some(pidAlive) && Date.now() < deadline) {
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
	assert.deepEqual(startedPids(readWire(log)).filter(pidAlive), [], "no server process survives Pi");
});
