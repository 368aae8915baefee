/**
 * `confirm`: which of a server's tool calls wait for the user's yes, in a real Pi 1.6: the RPC dialog answered
 * no, yes once and yes for the session, closed by an abort and by shutdown; the refusal in print mode (nobody
 * to ask); and `pi-mcp call`, which asks nothing. A refused call never reaches the server (the fixture logs
 * every tool that runs). The field, the rule and the JSON mode's words: tests/fast/confirm*.test.ts.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { makeSandbox, type PiRpc, runPiPrint, type Sandbox, startPiRpc, toolResults, type UiRequest } from "./helpers/pi.ts";
import { FIXTURES, pidAlive, readWire, startedPids } from "./helpers/servers.ts";
import { shell } from "./helpers/shell.ts";

const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const USER_SERVER = join(FIXTURES, "user-server.mjs");
const REGISTER_EXT = join(FIXTURES, "register-ext.ts");

const sandboxes: Sandbox[] = [];
after(async () => {
	await Promise.all(sandboxes.map((sandbox) => sandbox.cleanup()));
});

/** A sandbox whose user file holds the `notes` fixture with `confirm`; the fixture's log path. */
async function sandboxWith(confirm: unknown, extra: Record<string, unknown> = {}): Promise<{ sandbox: Sandbox; log: string }> {
	const sandbox = await makeSandbox();
	sandboxes.push(sandbox);
	const log = join(sandbox.root, "wire.log");
	await writeNotes(sandbox, log, { confirm, ...extra });
	return { sandbox, log };
}

/** (Re)writes the user file: the `notes` fixture with `fields`. */
async function writeNotes(sandbox: Sandbox, log: string, fields: Record<string, unknown>): Promise<void> {
	const notes = { command: process.execPath, args: [USER_SERVER], env: { FIXTURE_LOG: log }, ...fields };
	await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { notes } }));
}

/** The tools that ran on the fixture, in order. */
const ran = (log: string): string[] =>
	readWire(log)
		.filter((line) => line.event === "call")
		.map((line) => (line as unknown as { tool: string }).tool);

const call = (tool: string, args: Record<string, string> = { id: "n1" }) => ({
	tool: "mcp",
	args: { action: "call", server: "notes", tool, args },
});

/** Resolves once every fixture process started so far has exited (a wait on real processes, bounded). */
async function allExited(log: string, what: string): Promise<void> {
	const deadline = Date.now() + 15_000;
	for (;;) {
		const alive = startedPids(readWire(log)).filter(pidAlive);
		if (alive.length === 0) return;
		if (Date.now() > deadline) throw new Error(`${what}: still running: ${alive.join(", ")}`);
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
}

/** Answers each dialog with the next wanted option, or leaves it open while `hold` is set. */
function answering(dialogs: UiRequest[], answers: string[], state: { hold: boolean }) {
	return (request: UiRequest) => {
		dialogs.push(request);
		if (state.hold) return undefined;
		const options = (request.options as string[] | undefined) ?? [];
		const wanted = answers.shift() ?? "Deny";
		const value = options.find((option) => option.startsWith(wanted));
		return value === undefined ? { cancelled: true as const } : { value };
	};
}

// One Pi in RPC mode for the whole describe: each test is one step of a session, run in order; what a
// step counts (dialogs, calls that ran) is counted from where the step began.
describe("confirm in a real Pi (one RPC session, in steps)", () => {
	const dialogs: UiRequest[] = [];
	const answers: string[] = [];
	const state = { hold: false };
	// Twelve keys, then a long text whose end says what it really does: the old dialog cut both.
	const long: Record<string, string> = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`key${i}`, `value ${i}`]));
	long.text = `${"harmless words ".repeat(200)}AND THEN rm -rf ~ \u001b[2J\u202e`;
	const box = {} as { sandbox: Sandbox; log: string; pi: PiRpc };
	before(async () => {
		const { sandbox, log } = await sandboxWith("writes", { excludeTools: ["add_*"] });
		const pi = await startPiRpc({
			sandbox,
			extensions: [EXTENSION, REGISTER_EXT],
			script: [
				// "delete a note"
				call("delete_note"),
				{ text: "after no: {{last}}" },
				// "work"
				call("delete_note", long),
				call("add_note"),
				call("no_such_tool"),
				call("read_note"),
				call("fetch_url"),
				call("fetch_url", { text: "again" }),
				{ text: "first done" },
				// "more", under a stricter entry
				call("fetch_url", { text: "stricter" }),
				{ tool: "mcp", args: { action: "read", server: "notes", uri: "notes://guide" } },
				call("add_note"),
				call("fetch_url", { text: "allowed for the session" }),
				call("fetch_url", { text: "still allowed" }),
				{ text: "second done" },
				// "again", under another command
				call("fetch_url", { text: "new command" }),
				{ text: "third done" },
				// aborted, then shut down: the abort ends the run, so the next prompt takes the next step
				call("delete_note"),
				call("delete_note"),
				{ text: "never" },
			],
			onDialog: answering(dialogs, answers, state),
			timeoutMs: 60_000,
		});
		Object.assign(box, { sandbox, log, pi });
	});
	after(() => box.pi?.kill());

	test("no refuses: nothing reaches the server, the early start's server is closed", async () => {
		answers.push("Deny");
		const first = await box.pi.prompt("delete a note");
		const refused = toolResults(first.events)[0];
		assert.equal(refused?.isError, true);
		assert.match(refused?.text ?? "", /the user declined this call .*Do not retry the same call/);
		assert.equal(dialogs.length, 1);
		const title = String(dialogs[0]?.title);
		assert.equal(dialogs[0]?.method, "select");
		assert.match(title, /MCP server "notes": the model wants to call delete_note/);
		assert.match(title, /Hints \(declared by the server, not guaranteed\): destructive\n/);
		assert.match(title, /"id": "n1"/);
		assert.deepEqual(dialogs[0]?.options, ["Allow once", "Allow notes/delete_note for this session", "Deny"]);
		assert.deepEqual(ran(box.log), [], "a declined call never reaches the server");
		// What the early start began only for the declined call is closed, as for a blocked call.
		await allExited(box.log, "the server started for the declined call");
	});

	test("yes once and yes for the session run; every argument whole before Allow; no dialog for a read-only, hidden or missing tool", async () => {
		answers.push("Allow once", "Allow notes/fetch_url");
		const first = toolResults((await box.pi.prompt("work")).events);
		assert.equal(dialogs.length, 3, dialogs.map((d) => String(d.title).split("\n")[0]).join(" / "));
		const title = String(dialogs[1]?.title);
		for (let i = 0; i < 12; i++) assert.ok(title.includes(`"key${i}": "value ${i}"`), `key${i} shown`);
		assert.ok(title.includes(`${"harmless words ".repeat(200)}AND THEN rm -rf ~ \\u001b[2J\\u202e"`), "the text whole");
		assert.doesNotMatch(title, /more lines|…/);
		assert.ok(!title.includes("\u001b") && !title.includes("\u202e"), "no escape or bidi character reaches the terminal");
		assert.match(String(dialogs[2]?.title), /fetch_url[\s\S]*open-world/);
		assert.deepEqual(
			first.map((result) => result.isError),
			[false, true, true, false, false, false],
			first.map((result) => result.text).join("\n"),
		);
		assert.match(first[1]?.text ?? "", /tool "add_note" on MCP server "notes" is hidden by "excludeTools"/);
		assert.match(first[2]?.text ?? "", /MCP server "notes" has no tool "no_such_tool"/);
		// read_note is read-only (no dialog); the second fetch_url was allowed for the session.
		assert.deepEqual(ran(box.log), ["delete_note", "read_note", "fetch_url", "fetch_url"]);
	});

	test("a yes for the session ends when the entry changes; all is tool calls only", async () => {
		const { sandbox, log, pi } = box;
		const ranBefore = ran(log).length;
		// A stricter confirm (read by mcp_servers_change, which an extension's registration fires): asked again.
		await writeNotes(sandbox, log, { confirm: "all", excludeTools: ["add_*"] });
		await pi.prompt("/register-late");
		answers.push("Deny", "Allow notes/fetch_url");
		const second = toolResults((await pi.prompt("more")).events);
		assert.equal(dialogs.length, 5, "fetch_url asked again under the new entry; read and the hidden add_note asked nothing");
		assert.deepEqual(
			second.map((result) => result.isError),
			[true, false, true, false, false],
			second.map((result) => result.text).join("\n"),
		);
		assert.match(second[0]?.text ?? "", /the user declined this call/);
		assert.match(second[1]?.text ?? "", /GUIDE-TEXT/, '"all" covers tool calls only: read ran without a dialog');
		assert.match(second[2]?.text ?? "", /tool "add_note" on MCP server "notes" is hidden by "excludeTools"/);
		assert.deepEqual(ran(log).slice(ranBefore), ["fetch_url", "fetch_url"]);

		// Another command for the same name: the yes for the session no longer holds.
		await writeNotes(sandbox, log, { confirm: "all", excludeTools: ["add_*"], args: [USER_SERVER, "--another"] });
		await pi.prompt("/register-late");
		answers.push("Deny");
		const third = toolResults((await pi.prompt("again")).events);
		assert.equal(dialogs.length, 6);
		assert.equal(third[0]?.isError, true);
		assert.deepEqual(ran(log).slice(ranBefore + 2), []);
	});

	test("a dialog closed by the call's abort or by shutdown refuses the call; nothing reaches the server", async () => {
		const { log, pi } = box;
		state.hold = true;
		const ranBefore = ran(log).length;
		const dialog = (after: number) =>
			pi.until("a dialog", (record) =>
				record.type === "extension_ui_request" && record.method === "select" && pi.records.indexOf(record) >= after
					? record
					: undefined,
			);
		const start = pi.records.length;
		pi.send({ type: "prompt", id: "p1", message: "delete" });
		await dialog(start);
		const aborted = await pi.request({ type: "abort" });
		assert.equal(aborted.success, true);
		const end = await pi.until("the aborted call's end", (record) =>
			record.type === "tool_execution_end" && pi.records.indexOf(record) >= start ? record : undefined,
		);
		assert.equal(end.isError, true);
		await pi.until("the run's end", (record) =>
			record.type === "agent_settled" && pi.records.indexOf(record) >= start ? record : undefined,
		);
		const seen = pi.records.length;
		pi.send({ type: "prompt", id: "p2", message: "delete again" });
		await dialog(seen);
		const closed = await pi.close();
		assert.equal(closed.code, 0, closed.stderr);
		assert.equal(ran(log).length, ranBefore, "neither call reached the server");
		await allExited(log, "the server after shutdown");
	});
});

describe("confirm with nobody to ask, and from the shell", () => {
	test("print mode: refused with where to change it, told on stderr too; nothing reaches the server", async () => {
		// The JSON mode's wording is in tests/fast/confirm-call.test.ts; the mode is Pi's, the words the same.
		const { sandbox, log } = await sandboxWith("all");
		const print = await runPiPrint({
			sandbox,
			extensions: [EXTENSION],
			prompt: "delete a note",
			script: [call("delete_note"), { text: "REFUSAL: {{last}}" }],
			timeoutMs: 60_000,
		});
		assert.equal(print.code, 0, print.stderr);
		const file = join(sandbox.agentDir, "mcp.json");
		assert.match(print.stdout, /REFUSAL: mcp call notes\/delete_note: not run\..*print mode cannot ask for/);
		assert.ok(print.stdout.includes(`The user can change "confirm" in ${file}`), print.stdout);
		assert.match(print.stderr, /pi-mcp: refused the model's call of notes\/delete_note: .*which print mode cannot ask/);
		assert.deepEqual(ran(log), []);
	});

	test("pi-mcp call is the user's own act: it asks nothing and runs", async () => {
		const { sandbox, log } = await sandboxWith(["delete_*"]);
		const run = await shell(sandbox, ["call", "notes", "delete_note", '{"id":"n9"}']);
		assert.equal(run.code, 0, run.stderr);
		assert.match(run.stdout, /delete_note ran with \{"id":"n9"\}/);
		assert.deepEqual(ran(log), ["delete_note"]);
	});
});
