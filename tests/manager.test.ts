/**
 * The interactive TUI, driven like a person at a terminal: the real Pi 1.6 in tmux with pi-mcp,
 * typed keys, and assertions on what the screen shows (`tmux capture-pane`). Covers Enter running a
 * complete `/mcp` command at once, and the `/mcp` manager: servers, a server's actions, tools with
 * search and schema, reconnect with live state, stderr tail, last error, Escape back and close; with
 * the keyring, login (the link, the state turning "signed in" while open) and logout (asks first), and
 * "Set secret NAME" (a masked input, the value stored in the keyring and reaching the server, never shown).
 */
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { keyringStore } from "../src/auth/keyring.ts";
import { removeSecret } from "../src/auth/stored.ts";
import { loadConfig } from "../src/config.ts";
// @ts-expect-error -- plain ESM fixture without types
import { browse } from "./fixtures/oauth/as.mjs";
// @ts-expect-error -- plain ESM fixture without types
import { startProtectedMcp } from "./fixtures/oauth/rs.mjs";
import { makeSandbox, type Sandbox } from "./helpers/pi.ts";
import { CRASH, FIXTURES, HOSTILE, pidAlive, readWire, SERVER, startedPids } from "./helpers/servers.ts";
import { HAS_TMUX, type PiTui, startPiTui } from "./helpers/tmux.ts";

const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const SECRET_SERVER = join(FIXTURES, "secret-server.mjs");
const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
	for (const cleanup of cleanups.reverse()) await cleanup();
});

/** The editor's last line holds `text` and no completion menu is open (its rows start with "→"). */
const typed = (text: string) => (screen: string) => screen.includes(text) && !/^→ /m.test(screen);

type Entry = Readonly<{ command?: string; env?: Readonly<Record<string, string>> }> & Readonly<Record<string, unknown>>;

async function startTui(
	servers: Readonly<Record<string, Entry>>,
	options: Readonly<{ env?: Readonly<Record<string, string>>; size?: { cols: number; rows: number }; indent?: string }> = {},
) {
	const sandbox: Sandbox = await makeSandbox(options.env);
	cleanups.push(() => sandbox.cleanup());
	const log = join(sandbox.root, "wire.log");
	const withLog = Object.fromEntries(
		Object.entries(servers).map(([name, entry]) => [
			name,
			entry.command ? { ...entry, env: { ...entry.env, FIXTURE_LOG: log } } : entry,
		]),
	);
	const file = join(sandbox.agentDir, "mcp.json");
	await writeFile(file, JSON.stringify({ mcpServers: withLog }, null, options.indent));
	const tui = startPiTui(sandbox, [EXTENSION], options.size);
	cleanups.push(() => tui.kill());
	await tui.waitFor(/faux-1/, "Pi's footer");
	return { tui, log, sandbox, file };
}

/** Opens the manager from Pi's editor. */
async function openManager(tui: PiTui): Promise<string> {
	tui.type("/mcp");
	await tui.waitFor(/^→ mcp/m, "the command menu");
	tui.keys("Enter");
	return tui.waitFor(/MCP servers \(pi-mcp\)\n\n→ /, "the manager's server list");
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

test("the /mcp manager: servers, actions, Connect then Reconnect, tools with search and schema, stderr, last error, failed first in colour, Escape", {
	skip: !HAS_TMUX && "needs tmux",
}, async () => {
	const { tui, log } = await startTui({
		fixture: { command: process.execPath, args: [SERVER], description: "the fixture" },
		broken: { command: process.execPath, args: [CRASH] },
	});
	const servers = await openManager(tui);
	await tui.waitFor(/esc close/, "the manager's key hints");
	// A row names the state first and says what tells servers apart (the description); the one file is named
	// once; file order while nothing failed.
	assert.match(servers, /→ idle\s+fixture\s+stdio — the fixture\n/);
	assert.match(servers, /^\s+idle\s+broken\s+stdio\n/m);
	assert.match(servers, /^ {2}all in \/\S+\/agent\/mcp\.json$/m);

	tui.keys("Enter");
	const server = await tui.waitFor(/fixture {2}idle · stdio[\s\S]*^→ Tools/m, "the server screen");
	assert.match(server, /source: \/\S+\/agent\/mcp\.json/);
	for (const action of ["Tools", "Connect", "Disable", "Stderr tail", "Last error"])
		assert.match(server, new RegExp(`^.{2}${action}\\b`, "m"));
	assert.doesNotMatch(server, /Log in/, "no sign-in actions for a server without OAuth");
	// Connect for an idle server; once connected, the same screen shows the live state and offers Reconnect.
	assert.match(server, /^ {2}Connect\s+start it/m);
	assert.doesNotMatch(server, /Reconnect/);
	tui.keys("Down", "Enter");
	await tui.waitFor(/Connected: ready · stdio/, "the connect outcome");
	await tui.waitFor(/^→ Reconnect\s+close and connect again/m, "Reconnect once connected");
	await tui.waitFor(/fixture {2}ready · stdio · protocol \S+ · 13 tools/, "the live state on the server screen");

	tui.keys("Up", "Enter");
	const tools = await tui.waitFor(/→ echo\s+Echo the text back/, "the tool list");
	assert.match(tools, /^\s+add\s+Add two numbers/m);
	assert.match(tools, /search:/);
	tui.type("numbers");
	await tui.waitFor((screen) => /→ add\s+Add two numbers/.test(screen) && !/echo/.test(screen), "the search result");
	tui.keys("Enter");
	const schema = await tui.waitFor(/"required": \[/, "the schema");
	assert.match(schema, /fixture\/add/);
	assert.match(schema, /"a": \{\n\s+"type": "number"/);

	// Escape goes back step by step.
	tui.keys("Escape");
	await tui.waitFor(/search: numbers/, "back to the tools");
	tui.keys("Escape");
	await tui.waitFor(/→ Tools/, "back on the server screen");
	tui.keys("Escape");
	await tui.waitFor(/→ ready\s+fixture\s+stdio · protocol \S+ · 13 tools/, "the live state in the list");

	tui.keys("Down", "Enter");
	await tui.waitFor(/broken {2}idle · stdio/, "the broken server");
	tui.keys("Down", "Enter");
	const failed = await tui.waitFor(/broken {2}failed · stdio/, "the failure after connect");
	assert.match(failed, /error: MCP server "broken" failed to start/);
	// The failure once, whole, with its cause (the server's stderr); the outcome only says how it ended.
	const outcome = await tui.waitFor(/Connect failed\./, "the connect outcome");
	assert.match(outcome, /the server exited with code 3 before the MCP handshake/);
	assert.match(outcome, /fixture crash: missing API_KEY/);
	assert.equal(outcome.match(/failed to start/g)?.length, 1, outcome);
	assert.match(outcome, /^→ Reconnect/m);
	tui.keys("Down", "Down", "Enter");
	await tui.waitFor(/broken: stderr[\s\S]*fixture crash: missing API_KEY/, "the stderr tail");
	// One key at a time, each after the screen it acts on: a lone Escape is told from the start of
	// an escape sequence by what follows it.
	tui.keys("Escape");
	await tui.waitFor(/→ Stderr tail/, "back on the server screen");
	tui.keys("Down", "Enter");
	const error = await tui.waitFor(/broken: last error/, "the last error");
	assert.match(error, /exited with code 3 before the MCP handshake[\s\S]*fixture crash: missing API_KEY/);
	// The advice points at the manager's item, not at a command.
	assert.match(error, /then run Reconnect\./);
	assert.doesNotMatch(error, /\/mcp reconnect/);

	tui.keys("Escape");
	await tui.waitFor(/→ Last error/, "back on the server screen");
	tui.keys("Escape");
	const sorted = await tui.waitFor(/esc close/, "the server list");
	assert.match(sorted, /^→ failed\s+broken\s+stdio — MCP server "broken" failed to start[\s\S]*^ {2}ready\s+fixture/m);
	const coloured = tui.screen(true);
	const [fail, ready] = [styleOf(coloured, "failed"), styleOf(coloured, "ready")];
	assert.notEqual(fail, ready, "failed does not look like ready");
	assert.notEqual(JSON.parse(fail).fg, "default", "failed has a colour");
	tui.keys("Escape");
	await tui.waitFor((screen) => !screen.includes("MCP servers (pi-mcp)"), "the manager closed");
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
	// The invalid entry comes first (with the failed ones); hx is the next.
	assert.match(servers, /^→ invalid\s+evil/m);
	tui.keys("Down", "Enter");
	await tui.waitFor(/^→ Tools/m, "hx's actions");
	tui.keys("Enter");
	const tools = await tui.waitFor(/→ odd\\nname/, "the tool list");
	assert.ok(tools.includes(String.raw`odd\nname`), tools);
	assert.ok(tools.includes(String.raw`bidi\u202eevil\u2066x\u2069`), tools);
	assert.ok(tools.includes(String.raw`zw\u200bjoin\u{e0041}tag`), tools);
	tui.kill();
});

/** A fixture tool catalog: one tool with a long schema (128 lines as JSON), and 25 more tools. */
async function catalog(dir: string): Promise<string> {
	const path = join(dir, "catalog.json");
	const fields = Object.fromEntries(
		Array.from({ length: 30 }, (_, i) => [`field_${i}`, { type: "string", description: `field number ${i}` }]),
	);
	const more = Array.from({ length: 25 }, (_, i) => ({
		name: `tool_${String(i).padStart(2, "0")}`,
		description: `Tool ${i} does one thing, and its description is longer than a narrow terminal is wide`,
	}));
	await writeFile(
		path,
		JSON.stringify([
			{ name: "wide", description: "A tool with a long schema", inputSchema: { type: "object", properties: fields } },
			...more,
		]),
	);
	return path;
}

/**
 * The manager's frame is on the screen whole: its top border, the key hint `hint` with the bottom
 * border right under it, Pi's footer below; and every row of it that reaches the last column ends in "…".
 */
function assertFits(screen: string, hint: RegExp, cols: number): void {
	const lines = screen.split("\n");
	const bottom = lines.findIndex((line) => hint.test(line));
	assert.ok(bottom > 0, `the key hint ${hint} is on the screen:\n${screen}`);
	assert.match(lines[bottom + 1] ?? "", /^─+$/, `the bottom border under the hint:\n${screen}`);
	assert.ok(
		lines.slice(bottom + 2).some((line) => /faux-1/.test(line)),
		`Pi's footer under the manager:\n${screen}`,
	);
	const top = lines.slice(0, bottom).findLastIndex((line) => /^─+$/.test(line));
	assert.ok(top >= 0, `the top border:\n${screen}`);
	for (const line of lines.slice(top + 1, bottom)) {
		if ([...line].length >= cols) assert.ok(line.endsWith("…"), `a cut row ends in "…": ${JSON.stringify(line)}`);
	}
}

/** The index shown by a list's or a text's position line: `(n/m)` or `(a–b of m)`. */
const position = (screen: string): number => Number(/\((\d+)(?:\/\d+|–\d+ of \d+)\)/.exec(screen)?.[1] ?? 0);

// 80×24 only: the frame is laid out from the terminal's width and height, so a larger size repeats this run.
{
	const size = { cols: 80, rows: 24 };
	test(`the manager at ${size.cols}×${size.rows}: fits (hints, border, footer), cut rows end in …, PgUp/PgDn page the server list, tools and a long schema`, {
		skip: !HAS_TMUX && "needs tmux",
	}, async () => {
		const dir = await mkdtemp(join(tmpdir(), "pi-mcp-catalog-"));
		cleanups.push(() => rm(dir, { recursive: true, force: true }));
		const servers: Record<string, Entry> = {
			fixture: { command: process.execPath, args: [SERVER], env: { FIXTURE_CATALOG: await catalog(dir) } },
		};
		for (const n of Array.from({ length: 34 }, (_, i) => i)) {
			servers[`server-number-${n}-with-a-rather-long-name`] = { command: process.execPath, args: [SERVER] };
		}
		const { tui, log } = await startTui(servers, { size });
		const list = await openManager(tui);
		assertFits(list, /esc close/, size.cols);
		assert.match(list, /^→ idle\s+fixture/m);
		assert.match(list, /^ {2}idle\s+server-number-0-\S*…/m, "a cut name ends in …");
		assert.match(list, /\(1\/35\)/, "more servers than rows: the position line");

		// PgUp/PgDn reach the manager (not Pi's transcript): the selection moves a page and back.
		tui.keys("PageDown");
		const down = await tui.waitFor((screen) => position(screen) > 1, "the selection a page down");
		assert.doesNotMatch(down, /^→ idle\s+fixture/m);
		assertFits(down, /esc close/, size.cols);
		tui.keys("PageUp");
		await tui.waitFor((screen) => position(screen) === 1 && /^→ idle\s+fixture/m.test(screen), "back on the first row");

		tui.keys("Enter");
		await tui.waitFor(/^→ Tools/m, "the server screen");
		tui.keys("Enter");
		const tools = await tui.waitFor(/→ echo/, "the tool list");
		assertFits(tools, /enter schema/, size.cols);
		tui.keys("PageDown");
		const paged = await tui.waitFor((screen) => position(screen) > 1, "the tool list a page down");
		assert.doesNotMatch(paged, /→ echo/);
		tui.keys("PageUp");
		await tui.waitFor(/→ echo/, "the tool list back on top");

		tui.type("wide");
		await tui.waitFor(/→ wide/, "the search result");
		tui.keys("Enter");
		const schema = await tui.waitFor(/of 128\)/, "the long schema with its position");
		assertFits(schema, /PgUp PgDn scroll/, size.cols);
		assert.equal(position(schema), 1);
		tui.keys("PageDown");
		const next = await tui.waitFor((screen) => position(screen) > 1, "the schema a page down");
		assertFits(next, /PgUp PgDn scroll/, size.cols);
		assert.doesNotMatch(next, /A tool with a long schema/);
		tui.keys("PageUp");
		await tui.waitFor((screen) => position(screen) === 1 && /A tool with a long schema/.test(screen), "the schema's top again");
		await stop(tui, log);
	});
}

/** An SGR sequence: ESC [ parameters m. */
const SGR = new RegExp(`${"\u001b"}\\[([\\d;:]*)m`, "g");

/**
 * How `word` (its first occurrence as a word) is drawn, from a screen captured with escapes: the
 * foreground colour, bold and dim, replaying every SGR sequence before it (tmux writes only changes).
 */
function styleOf(screen: string, word: string): string {
	const at = new RegExp(`\\b${word}\\b`).exec(screen.replace(SGR, (sgr) => " ".repeat(sgr.length)))?.index;
	assert.ok(at !== undefined, `"${word}" is on the screen`);
	const style = { fg: "default", bold: false, dim: false };
	for (const sgr of screen.slice(0, at).matchAll(SGR)) {
		const params = (sgr[1] || "0").split(/[;:]/);
		for (let i = 0; i < params.length; i++) {
			const code = Number(params[i]);
			if (code === 0) Object.assign(style, { fg: "default", bold: false, dim: false });
			else if (code === 1) style.bold = true;
			else if (code === 2) style.dim = true;
			else if (code === 22) Object.assign(style, { bold: false, dim: false });
			else if (code === 39) style.fg = "default";
			else if ((code >= 30 && code <= 37) || (code >= 90 && code <= 97)) style.fg = String(code);
			else if (code === 38) {
				const length = params[i + 1] === "5" ? 3 : 5;
				style.fg = params.slice(i, i + length).join(";");
				i += length - 1;
			}
		}
	}
	return JSON.stringify(style);
}

test("the manager at 80×24: descriptions and invalid entries' problems tell servers apart; Disable and Enable edit the file and the session follows; Enter runs a complete /mcp command", {
	skip: !HAS_TMUX && "needs tmux",
}, async () => {
	const { tui, log, file } = await startTui(
		{
			fixture: { command: process.execPath, args: [SERVER] },
			other: { command: process.execPath, args: [SERVER] },
			alpha: { command: process.execPath, args: [SERVER], description: "Alpha's notes" },
			beta: { command: process.execPath, args: [SERVER], description: "Beta's tickets" },
			bad_one: { command: 5 } as unknown as Entry,
			bad_two: { url: "ftp://example.invalid/x" },
		},
		{ size: { cols: 80, rows: 24 }, indent: "\t" },
	);
	const before = await readFile(file, "utf8");
	// Rows show what tells servers apart: descriptions, not the one file again; an invalid entry's problem.
	const list = await openManager(tui);
	assert.match(list, /^ {2}idle\s+alpha\s+stdio — Alpha's notes$/m);
	assert.match(list, /^ {2}idle\s+beta\s+stdio — Beta's tickets$/m);
	assert.equal(list.match(/mcp\.json/g)?.length, 1, `the file is named once:\n${list}`);
	const invalid = list.split("\n").filter((line) => /invalid/.test(line));
	assert.equal(invalid.length, 2, list);
	for (const line of invalid) assert.doesNotMatch(line, /server "bad_|mcp\.json/, "the row shows the problem itself");
	assert.notEqual(invalid[0]?.replace(/bad_\w+/, ""), invalid[1]?.replace(/bad_\w+/, ""), "two problems differ");

	// The invalid entries sort first: fixture is the third row.
	tui.keys("Down", "Down");
	await tui.waitFor(/^→ idle\s+fixture/m, "fixture selected");
	tui.keys("Enter");
	await tui.waitFor(/^→ Tools/m, "the server screen");
	tui.keys("Down", "Down");
	await tui.waitFor(/^→ Disable/m, "Disable selected");
	tui.keys("Enter");
	const disabled = await tui.waitFor(/Disabled "fixture" in \S+mcp\.json\./, "the edit");
	assert.match(disabled, /fixture {2}disabled · stdio/, "the session applies it at once");
	assert.match(disabled, /^→ Enable/m);
	assert.doesNotMatch(disabled, /Connect|Tools/, "a disabled server offers neither");
	const edited = await readFile(file, "utf8");
	assert.equal(JSON.parse(edited).mcpServers.fixture.enabled, false);
	assert.equal(edited.replace(/,\n\t+"enabled": false/, ""), before, "only the one key was added, in the file's own indentation");

	tui.keys("Escape");
	await tui.waitFor(/^ {2}idle\s+other/m, "the list");
	assert.match(tui.screen(), /^→ disabled\s+fixture/m);
	tui.keys("Enter");
	await tui.waitFor(/^→ Enable/m, "the disabled server's screen");
	tui.keys("Enter");
	await tui.waitFor(/Enabled "fixture" in \S+mcp\.json\./, "the second edit");
	await tui.waitFor(/fixture {2}idle · stdio[\s\S]*^ {2}Connect/m, "enabled again, and connectable");
	assert.equal(await readFile(file, "utf8"), before, "enabling removed the key disabling added");
	tui.keys("Escape");
	await tui.waitFor(/esc close/, "the server list");
	tui.keys("Escape");
	await tui.waitFor((screen) => !screen.includes("MCP servers (pi-mcp)"), "the manager closed");

	// Enter runs a complete /mcp command at once: a subcommand, and a subcommand with a server.
	tui.type("/mcp status");
	await tui.waitFor(typed("/mcp status"), "the typed command without a completion menu");
	tui.keys("Enter");
	// Its end: the six servers' status scrolls its head off 24 rows.
	await tui.waitFor(
		/beta: idle · stdio — Beta's tickets[\s\S]*Files:\n\s+user: \S+mcp\.json \(loaded\)/,
		"the status after one Enter",
	);
	tui.type("/mcp tools fixture");
	await tui.waitFor(typed("/mcp tools fixture"), "the typed command without a completion menu");
	tui.keys("Enter");
	await tui.waitFor(/fixture: 13 tools\n\s+echo — Echo the text back/, "the tools after one Enter");
	await stop(tui, log);
});

test("with the keyring: the manager signs in (the link; the state turns signed in while open) and out (asks first); Set secret: needs secret API_KEY, a masked input, stored in the keyring; the server connects with it", {
	skip: !HAS_TMUX && "needs tmux",
}, async (t) => {
	if (!process.env.DBUS_SESSION_BUS_ADDRESS) {
		t.skip("needs a Secret Service: run under scripts/with-keyring.sh (npm test does)");
		return;
	}
	const value = `typed-${randomBytes(12).toString("hex")}`;
	const sha256 = createHash("sha256").update(value).digest("hex");
	const scripts = await mkdtemp(join(tmpdir(), "pi-mcp-script-"));
	cleanups.push(() => rm(scripts, { recursive: true, force: true }));
	const script = join(scripts, "script.json");
	// A unique server name: the keyring may be shared, and a stored secret is keyed by the server's identity.
	const name = `sec${process.pid}`;
	const args = { name: "API_KEY", sha256 };
	await writeFile(
		script,
		JSON.stringify([
			// A finished sign-in lets the agent continue: that turn comes first.
			{ text: "AFTER SIGN-IN" },
			{ tool: "mcp", args: { action: "call", server: name, tool: "check_env", args } },
			{ text: "CHECKED {{last}}" },
		]),
	);
	type Rs = { mcpUrl: URL; close(): Promise<void> };
	const rs = (await startProtectedMcp()) as Rs;
	cleanups.push(() => rs.close());
	// A unique server name: the keyring record is keyed by name + endpoint, and the keyring may be shared.
	const login = `tui${process.pid}`;
	const { tui, log, sandbox } = await startTui(
		{
			[login]: { url: rs.mcpUrl.href, auth: "oauth" },
			[name]: { command: process.execPath, args: [SECRET_SERVER], env: { API_KEY: "${secret:API_KEY}" } },
		},
		{ env: { DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS, PI_FAUX_SCRIPT: script } },
	);
	const snapshot = await loadConfig({ agentDir: sandbox.agentDir, cwd: sandbox.cwd, trusted: false, env: sandbox.env });
	const config = snapshot.servers.find((entry) => entry.name === name)?.config;
	assert.ok(config);
	cleanups.push(async () => void (await removeSecret(keyringStore(), config, "API_KEY")));
	const screens: string[] = [];
	const seen = async (text: string | Promise<string>) => {
		screens.push(await text);
		return screens.at(-1) ?? "";
	};

	await seen(openManager(tui));
	// Sign in and out first: the server needing sign-in sorts before the one needing its secret.
	await tui.waitFor(new RegExp(`→ needs sign-in\\s+${login}\\s+http`), "the server needing sign-in in the list");
	tui.keys("Enter");
	const server = await tui.waitFor(/credentials: not signed in/, "the credential state");
	assert.match(server, new RegExp(`${login} {2}needs sign-in · http`));
	assert.match(server, /Log in/);
	tui.keys("Down", "Down", "Down", "Enter");
	const screen = await tui.waitFor(/Open this link in your browser/, "the sign-in link");
	// The link may wrap at the screen's edge: join the wrapped rows back.
	const link = /https?:\/\/127\.0\.0\.1:\d+\/\S*auth[\s\S]*?(?=\n\s*\n|\n The link)/.exec(screen)?.[0]?.replace(/\n\s*/g, "");
	assert.ok(link, screen);
	const browsed = (await browse(link, { deliver: true })) as { response?: { status: number } };
	assert.equal(browsed.response?.status, 200);
	await tui.waitFor(/Credentials: signed in/, "the sign-in completing while the manager is open");

	tui.keys("Escape");
	await tui.waitFor(new RegExp(`${login} {2}idle · http[\\s\\S]*→ Log in`), "back on the server screen, signed in");
	tui.keys("Down", "Enter");
	const confirm = await tui.waitFor(/Sign out of MCP server/, "the question");
	assert.match(confirm, /→ No, keep the sign-in/);
	tui.keys("Down", "Enter");
	await tui.waitFor(new RegExp(`Signed out of "${login}"`), "the sign-out");
	await tui.waitFor(new RegExp(`${login} {2}needs sign-in[\\s\\S]*credentials: not signed in`), "the state after sign-out");
	tui.keys("Escape");
	await seen(tui.waitFor(new RegExp(`^→ needs sign-in\\s+${login}`, "m"), "the list"));
	tui.keys("Down");
	await seen(tui.waitFor(new RegExp(`→ needs secret API_KEY\\s+${name}`), "the server needing its secret"));
	tui.keys("Enter");
	await seen(tui.waitFor(/Set secret API_KEY/, "the server's Set secret item"));
	for (let step = 0; step < 12 && !/^→ Set secret API_KEY/m.test(tui.screen()); step++) tui.keys("Down");
	const item = await seen(tui.waitFor(/^→ Set secret API_KEY/m, "Set secret API_KEY selected"));
	assert.match(item, /not stored: type it \(hidden\)/);
	tui.keys("Enter");
	await seen(tui.waitFor(new RegExp(`${name}: set secret API_KEY`), "the masked input"));
	tui.type(value);
	const masked = await seen(tui.waitFor(new RegExp(`value: •{${value.length}}`), "one dot per typed character"));
	assert.ok(!masked.includes(value), masked);
	tui.keys("Enter");
	await seen(tui.waitFor(/Stored secret API_KEY in the OS keyring/, "the value stored"));
	for (let step = 0; step < 12 && !/^→ Connect/m.test(tui.screen()); step++) tui.keys("Up");
	await seen(tui.waitFor(/^→ Connect/m, "Connect selected"));
	tui.keys("Enter");
	await seen(tui.waitFor(new RegExp(`${name} {2}ready`), "the server connected with its secret"));
	// One Escape at a time: two sent together can reach Pi as one Alt+Escape on a loaded machine.
	tui.keys("Escape");
	await seen(tui.waitFor(/MCP servers \(pi-mcp\)/, "back on the list"));
	tui.keys("Escape");
	await seen(tui.waitFor((screen) => !screen.includes("MCP servers (pi-mcp)"), "the manager closed"));
	tui.type("go");
	tui.keys("Enter");
	// The fixture compares a hash of what it received, and never echoes the value.
	await seen(tui.waitFor(/CHECKED API_KEY matches/, "the value reaching the server"));
	for (const screen of [...screens, tui.screen()]) assert.ok(!screen.includes(value), `the value on the screen:\n${screen}`);
	await stop(tui, log);
});
