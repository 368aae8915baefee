/**
 * The user's own prompts and resources: `/mcp prompt` (the prompt's messages become the user's message and
 * the model answers it), `/mcp attach` (a resource becomes context the model sees on its next turn), their
 * errors, and `pi-mcp prompt` and `pi-mcp read`; in a real Pi 1.6 (RPC mode) and from the shell, against a real
 * fixture server. Tab completion through the server's lists and `completion/complete` is in
 * tests/fast/completion.test.ts (in memory) and tests/user-tui.test.ts (Tab in the real TUI).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type JsonEvent, makeSandbox, type PiRpc, type Sandbox, startPiRpc } from "./helpers/pi.ts";
import { FIXTURES, readWire, startedPids } from "./helpers/servers.ts";

const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const BIN = new URL("../bin/pi-mcp.mjs", import.meta.url).pathname;
const USER_SERVER = join(FIXTURES, "user-server.mjs");

const sandboxes: Sandbox[] = [];
after(async () => {
	await Promise.all(sandboxes.map((sandbox) => sandbox.cleanup()));
});

async function sandboxWithNotes(): Promise<{ sandbox: Sandbox; log: string }> {
	const sandbox = await makeSandbox();
	sandboxes.push(sandbox);
	const log = join(sandbox.root, "wire.log");
	const notes = { command: process.execPath, args: [USER_SERVER], env: { FIXTURE_LOG: log } };
	const other = { command: process.execPath, args: [USER_SERVER], env: { FIXTURE_LOG: `${log}.other` } };
	await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { notes, other } }));
	return { sandbox, log };
}

const notices = (records: readonly JsonEvent[]) =>
	records
		.filter((record) => record.type === "extension_ui_request" && record.method === "notify")
		.map((record) => String(record.message));

const finals = (records: readonly JsonEvent[]) =>
	records.flatMap((record) => {
		const message = record.message as { role?: string; content?: { type: string; text?: string }[] } | undefined;
		return record.type === "message_end" && message?.role === "assistant"
			? [(message.content ?? []).map((block) => block.text ?? "").join("")]
			: [];
	});

describe("/mcp prompt and /mcp attach in a real Pi (RPC)", () => {
	// One Pi for both: the prompt's run, then attachments for the next turn (each check reads only what came after it).
	const shared = {} as { pi: PiRpc; log: string };
	before(async () => {
		const { sandbox, log } = await sandboxWithNotes();
		const script = [{ text: "MODEL SAW: {{user}}" }, { text: "MODEL SAW: {{user}}" }];
		shared.pi = await startPiRpc({ sandbox, extensions: [EXTENSION], script, timeoutMs: 60_000 });
		shared.log = log;
	});
	after(async () => {
		await shared.pi?.close();
	});

	test("a prompt's messages are the user's message the model answers; a missing argument is named", async () => {
		const { pi, log } = shared;
		assert.equal(readWire(log).length, 0, "nothing connects at start-up");
		const missing = await pi.prompt("/mcp prompt notes review focus=style");
		assert.equal((missing.response.data as { disposition?: string } | undefined)?.disposition, "handled");
		assert.ok(
			notices(missing.uiRequests).some((text) =>
				text.includes('prompt "review" of MCP server "notes" needs the argument "file": give file=<value>'),
			),
			notices(missing.uiRequests).join("\n"),
		);
		assert.equal(finals(pi.records).length, 0, "a missing argument starts no turn");
		const settled = pi.until("the prompt's run", (record) => (record.type === "agent_settled" ? record : undefined));
		await pi.prompt('/mcp prompt notes review file=src/a.ts focus="error handling"');
		await settled;
		const [answer] = finals(pi.records);
		assert.match(answer ?? "", /MODEL SAW: .*Please review src\/a\.ts for error handling\.\ncontents of src\/a\.ts/s);
		assert.equal(existsSync(`${log}.other`), false, "only the named server connects");
	});

	test("an attached resource is context the model sees on its next turn; long text is cut to a file, images stay", async () => {
		const { pi, log } = shared;
		const earlier = finals(pi.records).length;
		const attached = await pi.prompt("/mcp attach notes notes://guide");
		assert.ok(
			notices(attached.uiRequests).some((text) =>
				/^Attached notes:\/\/guide \(.*\); the model sees it on its next turn\.$/.test(text),
			),
			notices(attached.uiRequests).join("\n"),
		);
		const big = await pi.prompt("/mcp attach notes notes://big");
		const saved = /the rest is in (\S+)\)/.exec(notices(big.uiRequests).join("\n"))?.[1];
		assert.ok(saved && readFileSync(saved, "utf8").length === 17 * 4000, notices(big.uiRequests).join("\n"));
		await pi.prompt("/mcp attach notes notes://note/beta");
		await pi.prompt("/mcp attach notes notes://pixel.png");
		const wrong = await pi.prompt("/mcp attach notes notes://nothing");
		assert.ok(notices(wrong.uiRequests).some((text) => /notes:\/\/nothing/.test(text)));
		assert.equal(finals(pi.records).length, earlier, "attaching starts no turn");
		await pi.prompt("what do they say?");
		const answer = finals(pi.records).slice(earlier)[0];
		assert.match(answer ?? "", /\[MCP resource notes:\/\/guide from server "notes"\]\nGUIDE-TEXT: be kind to fixtures/);
		assert.match(answer ?? "", /\[Output truncated: .*Full output: /);
		assert.match(answer ?? "", /note beta\n\[MCP resource notes:\/\/pixel\.png from server "notes"\]\[image:image\/png\]/);
		assert.match(answer ?? "", /\[image:image\/png\]\nwhat do they say\?$/);
		assert.equal(startedPids(readWire(log)).length > 0, true);
	});
});

describe("pi-mcp prompt and pi-mcp read", () => {
	const cli = (sandbox: Sandbox, ...args: string[]) =>
		spawnSync(process.execPath, [BIN, ...args], {
			cwd: sandbox.cwd,
			env: { ...sandbox.env, TMPDIR: sandbox.root },
			encoding: "utf8",
			timeout: 60_000,
		});

	test("print a prompt's messages and a resource; binary goes to a named file; --json for both", async () => {
		const { sandbox } = await sandboxWithNotes();
		const prompt = cli(sandbox, "prompt", "notes", "review", "file=src/a.ts", "focus=error handling");
		assert.equal(prompt.status, 0, prompt.stderr);
		assert.equal(prompt.stdout, "user: Please review src/a.ts for error handling.\nuser: contents of src/a.ts\n");
		const missing = cli(sandbox, "prompt", "notes", "review");
		assert.equal(missing.status, 2);
		assert.match(missing.stderr, /needs the argument "file": give file=<value>/);
		const json = JSON.parse(cli(sandbox, "prompt", "--json", "notes", "hello").stdout) as { messages: unknown[] };
		assert.deepEqual(json.messages, [{ role: "user", content: { type: "text", text: "Say hello to the fixture." } }]);
		const read = cli(sandbox, "read", "notes", "notes://guide");
		assert.equal(read.status, 0, read.stderr);
		assert.equal(read.stdout, "GUIDE-TEXT: be kind to fixtures\n");
		const out = join(sandbox.root, "out");
		const binary = cli(sandbox, "read", "--out", out, "notes", "notes://data.bin");
		assert.equal(binary.status, 0, binary.stderr);
		const path = /saved to (\S+)\]/.exec(binary.stdout)?.[1] ?? "";
		assert.deepEqual([...readFileSync(path)], [0, 1, 2, 3]);
		const readJson = JSON.parse(cli(sandbox, "read", "--json", "notes", "notes://note/alpha").stdout) as { contents: unknown[] };
		assert.deepEqual(readJson.contents, [{ uri: "notes://note/alpha", mimeType: "text/plain", text: "note alpha" }]);
	});
});
