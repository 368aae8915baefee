/**
 * The interactive TUI, driven like a person at a terminal: the real Pi 1.6 in tmux with pi-mcp,
 * typed keys, and assertions on what the screen shows (`tmux capture-pane`). Covers Enter running a
 * complete `/mcp` command at once, and the `/mcp` manager: servers, a server's actions, tools with
 * search and schema, reconnect with live state, stderr tail, last error, Escape back and close; with
 * the keyring, login (the link, the state turning "signed in" while open) and logout (asks first).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
// @ts-expect-error -- plain ESM fixture without types
import { browse } from "./fixtures/oauth/as.mjs";
// @ts-expect-error -- plain ESM fixture without types
import { startProtectedMcp } from "./fixtures/oauth/rs.mjs";
import { makeSandbox, type Sandbox } from "./helpers/pi.ts";
import { CRASH, HOSTILE, pidAlive, readWire, SERVER, startedPids } from "./helpers/servers.ts";
import { HAS_TMUX, type PiTui, startPiTui } from "./helpers/tmux.ts";

const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
	for (const cleanup of cleanups.reverse()) await cleanup();
});

/** The editor's last line holds `text` and no completion menu is open (its rows start with "→"). */
const typed = (text: string) => (screen: string) => screen.includes(text) && !/^→ /m.test(screen);

async function startTui(servers: Record<string, unknown>, env: Readonly<Record<string, string>> = {}) {
	const sandbox: Sandbox = await makeSandbox(env);
	cleanups.push(() => sandbox.cleanup());
	const log = join(sandbox.root, "wire.log");
	const withLog = Object.fromEntries(
		Object.entries(servers).map(([name, entry]) => [
			name,
			"command" in (entry as object) ? { ...(entry as object), env: { FIXTURE_LOG: log } } : entry,
		]),
	);
	await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: withLog }));
	const tui = startPiTui(sandbox, [EXTENSION]);
	cleanups.push(() => tui.kill());
	await tui.waitFor(/faux-1/, "Pi's footer");
	return { tui, log };
}

/** Kills Pi (tmux hangs up its terminal) and waits until every fixture server it started is gone. */
async function stop(tui: PiTui, log: string): Promise<void> {
	tui.kill();
	const deadline = Date.now() + 15_000;
	while (startedPids(readWire(log)).some(pidAlive) && Date.now() < deadline) {
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
	assert.deepEqual(startedPids(readWire(log)).filter(pidAlive), [], "no server process survives Pi");
}

test("Enter runs a complete /mcp command at once: a subcommand, and a subcommand with a server", {
	skip: !HAS_TMUX && "needs tmux",
}, async () => {
	const { tui, log } = await startTui({ fixture: { command: process.execPath, args: [SERVER] } });
	tui.type("/mcp status");
	await tui.waitFor(typed("/mcp status"), "the typed command without a completion menu");
	tui.keys("Enter");
	await tui.waitFor(/MCP servers \(pi-mcp\):\n\s+fixture: idle · stdio/, "the status after one Enter");

	tui.type("/mcp tools fixture");
	await tui.waitFor(typed("/mcp tools fixture"), "the typed command without a completion menu");
	tui.keys("Enter");
	await tui.waitFor(/fixture: 13 tools\n\s+echo — Echo the text back/, "the tools after one Enter");
	await stop(tui, log);
});

test("the /mcp manager: servers, actions, tools with search and schema, reconnect, stderr, last error, Escape", {
	skip: !HAS_TMUX && "needs tmux",
}, async () => {
	const { tui, log } = await startTui({
		fixture: { command: process.execPath, args: [SERVER], description: "the fixture" },
		broken: { command: process.execPath, args: [CRASH] },
	});
	tui.type("/mcp");
	await tui.waitFor(/^→ mcp/m, "the command menu");
	tui.keys("Enter");
	const servers = await tui.waitFor(/esc close/, "the manager");
	assert.match(servers, /MCP servers \(pi-mcp\)/);
	assert.match(servers, /→ fixture\s+idle · stdio — \/\S+\/agent\/mcp\.json/);
	assert.match(servers, /^\s+broken\s+idle · stdio/m);

	tui.keys("Enter");
	const server = await tui.waitFor(/fixture {2}idle · stdio/, "the server screen");
	assert.match(server, /source: \/\S+\/agent\/mcp\.json/);
	for (const action of ["Tools", "Reconnect", "Stderr tail", "Last error"])
		assert.match(server, new RegExp(`^.{2}${action}\\b`, "m"));
	assert.doesNotMatch(server, /Log in/, "no sign-in actions for a server without OAuth");

	tui.keys("Enter");
	const tools = await tui.waitFor(/→ echo\s+Echo the text back/, "the tool list");
	assert.match(tools, /^\s+add\s+Add two numbers/m);
	assert.match(tools, /search:/);
	tui.type("numbers");
	await tui.waitFor((screen) => /→ add\s+Add two numbers/.test(screen) && !/echo/.test(screen), "the search result");
	tui.keys("Enter");
	const schema = await tui.waitFor(/"required": \[/, "the schema");
	assert.match(schema, /fixture\/add/);
	assert.match(schema, /"a": \{\n\s+"type": "number"/);

	// Escape goes back step by step; the state connected meanwhile shows without reopening.
	tui.keys("Escape");
	await tui.waitFor(/search: numbers/, "back to the tools");
	tui.keys("Escape");
	await tui.waitFor(/fixture {2}ready · stdio · protocol \S+ · 13 tools/, "the live state on the server screen");
	tui.keys("Escape");
	await tui.waitFor(/→ fixture\s+ready · stdio · protocol \S+ · 13 tools/, "the live state in the list");

	tui.keys("Down", "Enter");
	await tui.waitFor(/broken {2}idle · stdio/, "the broken server");
	tui.keys("Down", "Enter");
	const failed = await tui.waitFor(/broken {2}failed · stdio/, "the failure after reconnect");
	assert.match(failed, /error: MCP server "broken" failed to start/);
	// The outcome names the cause, not the state twice ("Reconnect failed (failed)").
	await tui.waitFor(
		/MCP server "broken" failed to start: the server exited with code 3 before the MCP handshake; see Last error/,
		"the reconnect outcome",
	);
	tui.keys("Down", "Enter");
	await tui.waitFor(/broken: stderr[\s\S]*fixture crash: missing API_KEY/, "the stderr tail");
	// One key at a time, each after the screen it acts on: a lone Escape is told from the start of
	// an escape sequence by what follows it.
	tui.keys("Escape");
	await tui.waitFor(/→ Stderr tail/, "back on the server screen");
	tui.keys("Down", "Enter");
	const error = await tui.waitFor(/broken: last error/, "the last error");
	assert.match(error, /exited with code 3 before the MCP handshake[\s\S]*fixture crash: missing API_KEY/);

	tui.keys("Escape");
	await tui.waitFor(/→ Last error/, "back on the server screen");
	tui.keys("Escape");
	await tui.waitFor(/esc close/, "the server list");
	tui.keys("Escape");
	await tui.waitFor((screen) => !screen.includes("MCP servers (pi-mcp)"), "the manager closed");
	await stop(tui, log);
});

test("the manager signs in (the link; the state turns signed in while open) and out (asks first)", {
	skip: !HAS_TMUX && "needs tmux",
}, async (t) => {
	if (!process.env.DBUS_SESSION_BUS_ADDRESS) {
		t.skip("needs a Secret Service: run under scripts/with-keyring.sh (npm test does)");
		return;
	}
	type Rs = { mcpUrl: URL; close(): Promise<void> };
	const rs = (await startProtectedMcp()) as Rs;
	cleanups.push(() => rs.close());
	// A unique server name: the keyring record is keyed by name + endpoint, and the keyring may be shared.
	const name = `tui${process.pid}`;
	const { tui, log } = await startTui(
		{ [name]: { url: rs.mcpUrl.href, auth: "oauth" } },
		{ DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS },
	);
	tui.type("/mcp");
	await tui.waitFor(/^→ mcp/m, "the command menu");
	tui.keys("Enter");
	await tui.waitFor(new RegExp(`→ ${name}\\s+needs sign-in · http`), "the server needing sign-in in the list");
	tui.keys("Enter");
	const server = await tui.waitFor(/credentials: not signed in/, "the credential state");
	assert.match(server, new RegExp(`${name} {2}needs sign-in · http`));
	assert.match(server, /Log in/);
	tui.keys("Down", "Down", "Enter");
	const screen = await tui.waitFor(/Open this link in your browser/, "the sign-in link");
	// The link may wrap at the screen's edge: join the wrapped rows back.
	const link = /https?:\/\/127\.0\.0\.1:\d+\/\S*auth[\s\S]*?(?=\n\s*\n|\n The link)/.exec(screen)?.[0]?.replace(/\n\s*/g, "");
	assert.ok(link, screen);
	const browsed = (await browse(link, { deliver: true })) as { response?: { status: number } };
	assert.equal(browsed.response?.status, 200);
	await tui.waitFor(/Credentials: signed in/, "the sign-in completing while the manager is open");

	tui.keys("Escape");
	await tui.waitFor(new RegExp(`${name} {2}idle · http[\\s\\S]*→ Log in`), "back on the server screen, signed in");
	tui.keys("Down", "Enter");
	const confirm = await tui.waitFor(/Sign out of MCP server/, "the question");
	assert.match(confirm, /→ No, keep the sign-in/);
	tui.keys("Down", "Enter");
	await tui.waitFor(new RegExp(`Signed out of "${name}"`), "the sign-out");
	await tui.waitFor(new RegExp(`${name} {2}needs sign-in[\\s\\S]*credentials: not signed in`), "the state after sign-out");
	await stop(tui, log);
});

test("hostile names in the TUI: the call line, the manager's server list and tool list show them escaped", {
	skip: !HAS_TMUX && "needs tmux",
}, async () => {
	const scripts = await mkdtemp(join(tmpdir(), "pi-mcp-script-"));
	cleanups.push(() => rm(scripts, { recursive: true, force: true }));
	const script = join(scripts, "script.json");
	const sandbox: Sandbox = await makeSandbox({ PI_FAUX_SCRIPT: script });
	cleanups.push(() => sandbox.cleanup());
	await writeFile(
		script,
		JSON.stringify([{ tool: "mcp", args: { action: "call", server: "hx", tool: "odd\nname\u202e" } }, { text: "DONE-MARK" }]),
	);
	await writeFile(
		join(sandbox.agentDir, "mcp.json"),
		JSON.stringify({
			mcpServers: {
				hx: { command: process.execPath, args: [HOSTILE] },
				"evil\u001b[2J\u001b]0;pwned\u0007\u202e": { command: process.execPath, args: [HOSTILE] },
			},
		}),
	);
	const tui = startPiTui(sandbox, [EXTENSION]);
	cleanups.push(() => tui.kill());
	await tui.waitFor(/faux-1/, "Pi's footer");
	tui.type("go");
	tui.keys("Enter");
	const call = await tui.waitFor(/DONE-MARK/, "the model's answer after the call");
	assert.ok(call.includes(String.raw`mcp call hx/odd\nname\u202e`), call);

	tui.type("/mcp");
	await tui.waitFor(/^→ mcp/m, "the command menu");
	tui.keys("Enter");
	const servers = await tui.waitFor(/esc close/, "the manager");
	// The list cuts long names to its column.
	assert.ok(servers.includes(String.raw`evil\u001b[2J\u001b]0;pwned`), servers);
	assert.ok(!servers.includes("\u202e"), "no raw bidi override on the screen");
	tui.keys("Enter", "Enter");
	const tools = await tui.waitFor(/→ odd\\nname/, "the tool list");
	assert.ok(tools.includes(String.raw`odd\nname`), tools);
	assert.ok(tools.includes(String.raw`bidi\u202eevil\u2066x\u2069`), tools);
	assert.ok(tools.includes(String.raw`zw\u200bjoin\u{e0041}tag`), tools);
	tui.kill();
});
