/**
 * `confirm`: which of a server's tool calls wait for the user's yes. The field's values and errors, the
 * annotation rule, and in a real Pi 1.6: the RPC dialog answered no, yes once and yes for the session,
 * the refusal in JSON and print modes (nobody to ask), and `pi-mcp call`, which asks nothing. A refused
 * call never reaches the server (the fixture logs every tool that runs).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { writes } from "../src/schema/confirm.ts";
import { globMatch as globMatches } from "../src/schema/tool-filter.ts";
import { expectBad, expectOk } from "./helpers/config.ts";
import { makeSandbox, runPiJson, runPiPrint, type Sandbox, startPiRpc, toolResults, type UiRequest } from "./helpers/pi.ts";
import { FIXTURES, pidAlive, readWire, startedPids } from "./helpers/servers.ts";

const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const BIN = new URL("../bin/pi-mcp.mjs", import.meta.url).pathname;
const USER_SERVER = join(FIXTURES, "user-server.mjs");

const sandboxes: Sandbox[] = [];
after(async () => {
	await Promise.all(sandboxes.map((sandbox) => sandbox.cleanup()));
});

/** A sandbox whose user file holds the `notes` fixture with `confirm`; the fixture's log path. */
async function sandboxWith(confirm: unknown): Promise<{ sandbox: Sandbox; log: string }> {
	const sandbox = await makeSandbox();
	sandboxes.push(sandbox);
	const log = join(sandbox.root, "wire.log");
	const notes = { command: process.execPath, args: [USER_SERVER], env: { FIXTURE_LOG: log }, confirm };
	await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { notes } }));
	return { sandbox, log };
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

describe("the confirm field", () => {
	test("accepts none, writes, all and a list of patterns; anything else is a named error", async () => {
		assert.equal((await expectOk({ command: "x" })).confirm, "none");
		assert.equal((await expectOk({ command: "x", confirm: "writes" })).confirm, "writes");
		assert.deepEqual((await expectOk({ command: "x", confirm: ["delete_*", "drop?"] })).confirm, ["delete_*", "drop?"]);
		const message = 'field "confirm" must be "none", "writes", "all" or a list of tool name patterns (non-empty strings)';
		await expectBad({ command: "x", confirm: "sometimes" }, message);
		await expectBad({ command: "x", confirm: ["ok", ""] }, message);
		await expectBad({ command: "x", confirm: true }, message);
	});

	test("writes follows Pi's documented rule; patterns match * and ? on the whole name", () => {
		assert.equal(writes({ readOnlyHint: true }), false);
		assert.equal(writes({ readOnlyHint: true, destructiveHint: true }), true);
		assert.equal(writes(undefined), true, "no hints: may destroy and reach out");
		assert.equal(writes({ readOnlyHint: false, destructiveHint: false, openWorldHint: false }), false);
		assert.equal(writes({ destructiveHint: false, openWorldHint: true }), true);
		assert.equal(writes({ destructiveHint: false }), true, "openWorldHint missing counts as true");
		assert.equal(globMatches("delete_*", "delete_note"), true);
		assert.equal(globMatches("delete_*", "undelete_note"), false);
		assert.equal(globMatches("a?c", "abc"), true);
		assert.equal(globMatches("a?c", "abbc"), false);
		assert.equal(globMatches("a.c", "abc"), false, "other characters stand for themselves");
	});
});

describe("confirm in a real Pi", () => {
	test("RPC: no refuses (nothing reaches the server, the early start's server is closed); yes once and yes for the session run", async () => {
		const { sandbox, log } = await sandboxWith("writes");
		const dialogs: UiRequest[] = [];
		const answers: string[] = [];
		const pi = await startPiRpc({
			sandbox,
			extensions: [EXTENSION],
			script: [
				call("delete_note"),
				{ text: "after no: {{last}}" },
				call("read_note"),
				call("delete_note", { id: "n2" }),
				call("fetch_url", { text: "https://example.invalid/" }),
				call("fetch_url", { text: "again" }),
				{ text: "done" },
			],
			onDialog: (request) => {
				dialogs.push(request);
				const options = (request.options as string[] | undefined) ?? [];
				const wanted = answers.shift() ?? "Deny";
				const value = options.find((option) => option.startsWith(wanted));
				return value === undefined ? { cancelled: true } : { value };
			},
			timeoutMs: 60_000,
		});
		try {
			answers.push("Deny");
			const first = await pi.prompt("delete a note");
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
			assert.deepEqual(ran(log), [], "a declined call never reaches the server");
			// What the early start began only for the declined call is closed, as for a blocked call.
			await allExited(log, "the server started for the declined call");

			answers.push("Allow once", "Allow notes/fetch_url");
			const second = await pi.prompt("now work");
			const results = toolResults(second.events);
			assert.deepEqual(
				results.map((result) => result.isError),
				[false, false, false, false],
				results.map((result) => result.text).join("\n"),
			);
			assert.deepEqual(ran(log), ["read_note", "delete_note", "fetch_url", "fetch_url"]);
			// read_note is read-only (no dialog); the second fetch_url was allowed for the session.
			assert.equal(dialogs.length, 3);
			assert.match(String(dialogs[2]?.title), /fetch_url[\s\S]*open-world/);
		} finally {
			await pi.close();
		}
	});

	test("RPC: a dialog closed by the call's abort or by shutdown refuses the call; nothing reaches the server", async () => {
		const { sandbox, log } = await sandboxWith("all");
		const pi = await startPiRpc({
			sandbox,
			extensions: [EXTENSION],
			// The abort ends the first run, so the second prompt takes the second step.
			script: [call("delete_note"), call("delete_note"), { text: "never" }],
			timeoutMs: 60_000,
		});
		const dialog = (after: number) =>
			pi.until("a dialog", (record) =>
				record.type === "extension_ui_request" && record.method === "select" && pi.records.indexOf(record) >= after
					? record
					: undefined,
			);
		pi.send({ type: "prompt", id: "p1", message: "delete" });
		await dialog(0);
		const aborted = await pi.request({ type: "abort" });
		assert.equal(aborted.success, true);
		const end = await pi.until("the aborted call's end", (record) => (record.type === "tool_execution_end" ? record : undefined));
		assert.equal(end.isError, true);
		await pi.until("the run's end", (record) => (record.type === "agent_settled" ? record : undefined));
		const seen = pi.records.length;
		pi.send({ type: "prompt", id: "p2", message: "delete again" });
		await dialog(seen);
		const closed = await pi.close();
		assert.equal(closed.code, 0, closed.stderr);
		assert.deepEqual(ran(log), [], "neither call reached the server");
		await allExited(log, "the server after shutdown");
	});

	test("JSON and print modes: refused with where to change it; nothing reaches the server", async () => {
		const { sandbox, log } = await sandboxWith("all");
		const json = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			prompt: "read a note",
			script: [call("read_note"), { text: "ok" }],
			timeoutMs: 60_000,
		});
		assert.equal(json.code, 0, json.stderr);
		const [result] = toolResults(json.events);
		assert.equal(result?.isError, true);
		const file = join(sandbox.agentDir, "mcp.json");
		assert.match(result?.text ?? "", /MCP server "notes" has "confirm": "all", so this call needs the user's confirmation/);
		assert.ok(result?.text.includes(`which json mode cannot ask for. The user can change "confirm" in ${file}`), result?.text);
		const print = await runPiPrint({
			sandbox,
			extensions: [EXTENSION],
			prompt: "delete a note",
			script: [call("delete_note"), { text: "REFUSAL: {{last}}" }],
			timeoutMs: 60_000,
		});
		assert.equal(print.code, 0, print.stderr);
		assert.match(print.stdout, /REFUSAL: mcp call notes\/delete_note: not run\..*print mode cannot ask for/);
		assert.deepEqual(ran(log), []);
	});

	test("pi-mcp call is the user's own act: it asks nothing and runs", async () => {
		const { sandbox, log } = await sandboxWith(["delete_*"]);
		const run = spawnSync(process.execPath, [BIN, "call", "notes", "delete_note", '{"id":"n9"}'], {
			cwd: sandbox.cwd,
			env: { ...sandbox.env, TMPDIR: sandbox.root },
			encoding: "utf8",
			timeout: 60_000,
		});
		assert.equal(run.status, 0, run.stderr);
		assert.match(run.stdout, /delete_note ran with \{"id":"n9"\}/);
		assert.deepEqual(ran(log), ["delete_note"]);
	});
});
