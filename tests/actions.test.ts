/**
 * The `mcp` tool's actions against real fixture servers in both protocol eras: what the model
 * receives for calls, resources, templates, prompts and completions, and what never gets through.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { runAction } from "../src/catalog/actions.ts";
import type { Params } from "../src/catalog/requests.ts";
import type { Session } from "../src/contracts.ts";
import { textOf } from "./helpers/output.ts";
import { count, LEGACY_EXIT, readWire, SERVER, waitForWire } from "./helpers/servers.ts";
import { openSession, type TestSession } from "./helpers/session.ts";

const opened: TestSession[] = [];
after(async () => {
	for (const { close } of opened) await close();
});

/** A session over `servers`, closed after the file's tests. */
async function sessionOver(servers: Readonly<Record<string, unknown>>, prefix: string): Promise<Session & { dir: string }> {
	const open = await openSession(servers, prefix);
	opened.push(open);
	return { ...open.session, dir: open.dir };
}

async function makeSession(): Promise<Session & { dir: string }> {
	return sessionOver(
		{
			modern: { command: process.execPath, args: [SERVER, "stdio"] },
			legacy: { command: process.execPath, args: [SERVER, "stdio"], protocolVersion: "legacy" },
			plain: { command: process.execPath, args: [LEGACY_EXIT] },
			noisy: {
				command: process.execPath,
				args: [SERVER, "stdio"],
				env: { FIXTURE_STDERR_BANNER: "\u001b]0;title\u0007banner \u001b[31mred\u001b[0m\u001b]52;c;eA==\u0007" },
			},
		},
		"pi-mcp-actions-",
	);
}

const run = (session: Session, params: Params) => runAction(session, params, undefined, undefined);
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("actions in both eras", async () => {
	const session = await makeSession();

	for (const server of ["modern", "legacy"]) {
		test(`${server}: resources, templates, read, prompts, prompt, complete`, async () => {
			const resources = textOf(await run(session, { action: "resources", server }));
			assert.match(resources, new RegExp(`^${server}: 3 resources\\n`));
			assert.match(resources, /fixture:\/\/readme — readme \(text\/plain; The fixture readme\)/);
			assert.doesNotMatch(resources, /ui:\/\//, "MCP App resources are omitted");

			const templates = textOf(await run(session, { action: "templates", server }));
			assert.match(templates, /fixture:\/\/items\/\{id\} — item/);

			assert.equal(textOf(await run(session, { action: "read", server, uri: "fixture://readme" })), `readme (${server})`);
			assert.equal(textOf(await run(session, { action: "read", server, uri: "fixture://items/apple" })), "item apple");
			const logo = await run(session, { action: "read", server, uri: "fixture://logo.png" });
			assert.deepEqual(
				logo.content.map((block) => block.type),
				["image"],
			);
			const data = textOf(await run(session, { action: "read", server, uri: "fixture://data.bin" }));
			const saved = /saved to (\S+)\]/.exec(data)?.[1];
			assert.ok(saved, data);
			assert.deepEqual([...readFileSync(saved)], [0, 1, 2, 3]);
			await assert.rejects(run(session, { action: "read", server, uri: "ui://fixture/view.html" }), /MCP App resource/);

			assert.match(textOf(await run(session, { action: "prompts", server })), /greet\(name\): Greet someone/);
			assert.equal(
				textOf(await run(session, { action: "prompt", server, prompt: "greet", args: { name: "Ada" } })),
				`user:\nPlease greet Ada (${server}).`,
			);
			assert.equal(
				textOf(await run(session, { action: "complete", server, prompt: "greet", argument: "name", value: "A" })),
				"2 completions\nAda\nAlan",
			);
			assert.equal(
				textOf(await run(session, { action: "complete", server, uri: "fixture://items/{id}", argument: "id", value: "ap" })),
				"2 completions\napple\napricot",
			);
		});
	}

	test("a server without resources or prompts gets a clear message, not an exception", async () => {
		await assert.rejects(run(session, { action: "resources", server: "plain" }), {
			message: 'MCP server "plain" does not offer resources',
		});
		await assert.rejects(run(session, { action: "prompts", server: "plain" }), /MCP server "plain" does not offer prompts/);
		await assert.rejects(
			run(session, { action: "complete", server: "plain", prompt: "x", argument: "y" }),
			/MCP server "plain" does not offer completions/,
		);
		assert.equal(textOf(await run(session, { action: "call", server: "plain", tool: "hello" })), "hello from legacy");
	});

	test("lists are bounded and paged with a cursor", async () => {
		const first = textOf(await run(session, { action: "tools", server: "modern", limit: 5 }));
		// 5 tools, the header, the server's instructions (2 lines: given with the first listing) and the paging line.
		assert.equal(first.split("\n").length, 9, first);
		assert.match(first, /… 8 more: cursor 5$/);
		const second = textOf(await run(session, { action: "tools", server: "modern", limit: 5, cursor: "5" }));
		assert.match(second, /… 3 more: cursor 10$/);
		assert.notEqual(first.split("\n")[1], second.split("\n")[1]);
	});

	test("images: 6 → 4 inline + 2 described and saved; unsupported type and oversize described", async () => {
		const six = await run(session, { action: "call", server: "modern", tool: "images", args: { count: 6 } });
		assert.equal(six.content.filter((block) => block.type === "image").length, 4);
		const described = textOf(six).match(/\[image image\/png, [^\]]*more than 4 images in one result: saved to (\S+)\]/g) ?? [];
		assert.equal(described.length, 2, textOf(six));
		const bmp = await run(session, {
			action: "call",
			server: "modern",
			tool: "images",
			args: { count: 1, mimeType: "image/bmp" },
		});
		assert.equal(bmp.content.filter((block) => block.type === "image").length, 0);
		assert.match(textOf(bmp), /\[image image\/bmp, \d+ B, type not shown inline: saved to \S+\]/);
		const big = await run(session, {
			action: "call",
			server: "modern",
			tool: "images",
			args: { count: 1, padBytes: 2 * 1024 * 1024 },
		});
		assert.equal(big.content.filter((block) => block.type === "image").length, 0);
		assert.match(textOf(big), /\[image image\/png, 2\.0 MiB, larger than 2\.0 MiB of base64: saved to (\S+)\]/);
	});

	test("audio, resource links, embedded resources and structured content", async () => {
		const mixed = textOf(await run(session, { action: "call", server: "modern", tool: "mixed" }));
		assert.match(mixed, /^mixed content\n\[audio audio\/wav, 13 B: saved to \S+\.wav\]\n/);
		assert.match(mixed, /\[resource link: readme <fixture:\/\/readme> \(text\/plain\)\]/);
		assert.match(mixed, /embedded text$/);
		const structured = await run(session, { action: "call", server: "modern", tool: "structured" });
		assert.equal(textOf(structured), '{"temperature":21,"conditions":"sunny"}');
	});

	test("escapes never survive: content, tool descriptions, error text, stderr tails", async () => {
		const content = textOf(await run(session, { action: "call", server: "modern", tool: "escapes" }));
		assert.equal(CONTROL.test(content), false, JSON.stringify(content));
		assert.match(content, /^safe red link clip c1 doneoverx$/);
		const tools = textOf(await run(session, { action: "tools", server: "modern", query: "escapes" }));
		assert.equal(CONTROL.test(tools), false, JSON.stringify(tools));
		const describeText = textOf(await run(session, { action: "describe", server: "modern", tool: "escapes" }));
		assert.equal(CONTROL.test(describeText), false);
		const failure = await run(session, {
			action: "call",
			server: "modern",
			tool: "fail",
			args: { message: "bad\u001b[2J\u001b]0;x\u0007 thing" },
		});
		assert.equal(failure.isError, true);
		assert.equal(textOf(failure), "bad thing");
		await run(session, { action: "call", server: "noisy", tool: "echo", args: { text: "x" } });
		const tail = session.runtime.status().find((status) => status.name === "noisy")?.stderrTail ?? "";
		assert.equal(tail, "banner red");
	});

	test("a 5 MiB result is cut to 50 KiB inline with the full text in a 0600 file in a 0700 directory", async () => {
		const bytes = 5 * 1024 * 1024;
		const result = await run(session, { action: "call", server: "modern", tool: "big", args: { bytes } });
		const text = textOf(result);
		assert.ok(Buffer.byteLength(text) <= 50 * 1024, `inline is ${Buffer.byteLength(text)} bytes`);
		const path = /Full output: (\S+)\]$/.exec(text)?.[1];
		assert.ok(path && existsSync(path), text.slice(-300));
		assert.equal(statSync(path).size, bytes);
		assert.equal(statSync(path).mode & 0o777, 0o600);
		assert.equal(statSync(join(path, "..")).mode & 0o777, 0o700);
		assert.match(
			text,
			/\[Output truncated: showing 13\d\d of 14\d{4} lines \(\d\d\.\d KiB of 5\.0 MiB; \d+ bytes not shown\)\. Full output: /,
		);
		await session.overflow.dispose();
		assert.equal(existsSync(path), false, "overflow files are removed at shutdown");
	});
});

// ---------------------------------------------------------------------------------------------
// Hostile listings and names (issue #13, items 2 and 3)

/** Every character a name must never carry raw: controls, bidi, zero-width, tags, separators. */

describe("the model's cancel reaches every request, not only tool calls", async () => {
	const logDir = await mkdtemp(join(tmpdir(), "pi-mcp-cancel-log-"));
	after(() => rm(logDir, { recursive: true, force: true }));
	const log = join(logDir, "wire.log");
	const session = await sessionOver(
		{ fx: { command: process.execPath, args: [SERVER, "stdio"], env: { FIXTURE_LOG: log }, protocolVersion: "legacy" } },
		"pi-mcp-cancel-",
	);

	test("a read the model cancels ends at once, and the server is told", async () => {
		// fixture://items/slow answers after 30 s: a read that ignored the cancel would wait for it.
		const controller = new AbortController();
		const reading = runAction(
			session,
			{ action: "read", server: "fx", uri: "fixture://items/slow" },
			controller.signal,
			undefined,
		);
		await waitForWire(log, (lines) => count(lines, "resources/read") === 1, "the read");
		controller.abort();
		await assert.rejects(reading, (error: Error & { reason?: string }) => {
			assert.equal(error.message, 'reading fixture://items/slow on MCP server "fx" was cancelled');
			assert.equal(error.reason, "cancelled");
			return true;
		});
		await waitForWire(log, (lines) => lines.some((line) => line.event === "slow-aborted"), "the server's cancel");
		assert.equal(count(readWire(log), "notifications/cancelled"), 1);
		const read = await run(session, { action: "read", server: "fx", uri: "fixture://items/apple" });
		assert.equal(textOf(read), "item apple", "the session goes on");
	});

	test("so does a prompt, a completion or a listing cancelled before it is sent", async () => {
		const controller = new AbortController();
		controller.abort();
		for (const params of [
			{ action: "prompt", server: "fx", prompt: "greet", args: { name: "Ada" } },
			{ action: "complete", server: "fx", prompt: "greet", argument: "name", value: "A" },
			{ action: "prompts", server: "fx" },
		] as const) {
			await assert.rejects(runAction(session, params, controller.signal, undefined), /was cancelled/, params.action);
		}
	});
});
