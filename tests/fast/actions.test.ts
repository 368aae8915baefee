/**
 * The `mcp` tool's listings and names through the output rules, fast: the hostile fixture server in process
 * over in-memory pairs (no process). Odd names escaped, no forged line, bounded listings, `limit`. The same
 * server over real stdio, and the actions in both eras, are in tests/actions.test.ts.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { after, describe, test } from "node:test";
import { runAction } from "../../src/catalog/actions.ts";
import type { Params } from "../../src/catalog/requests.ts";
import { modelStatus, userStatus } from "../../src/catalog/status.ts";
import type { Session } from "../../src/contracts.ts";
import { parameters } from "../../src/tool/definition.ts";
import { hostileServer } from "../fixtures/hostile-server.mjs";
import { memorySession } from "../helpers/memory.ts";
import { textOf } from "../helpers/output.ts";

const opened: (() => Promise<void>)[] = [];
after(async () => {
	for (const close of opened) await close();
});

const run = (session: Session, params: Params) => runAction(session, params, undefined, undefined);
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|\udb40[\udc00-\udc7f]/u;
const TITLE = "\u001b]0;pwned\u0007";

async function hostileSession(): Promise<Session> {
	const open = await memorySession(
		{
			hx: { command: "hx" },
			big: { command: "big" },
			[`evil\u001b[2J${TITLE}\u202e\u200b`]: { command: "hx" },
		},
		(command) => () => hostileServer(command === "big" ? 500 : 3),
	);
	opened.push(open.close);
	return open.session;
}

describe("listings go through the output rules", async () => {
	const session = await hostileSession();

	for (const action of ["resources", "templates", "prompts"] as const) {
		test(`${action}: no escape, no invisible character, one line per item`, async () => {
			const text = textOf(await run(session, { action, server: "hx" }));
			assert.doesNotMatch(text, INVISIBLE, JSON.stringify(text));
			const count = action === "templates" ? 1 : 3;
			assert.equal(text.split("\n").length, 1 + count, text);
		});
	}

	test("a 200 KB listing is cut to the inline bound with the full listing in a file", async () => {
		for (const action of ["resources", "prompts"] as const) {
			const result = await run(session, { action, server: "big", limit: 200 });
			const text = textOf(result);
			assert.ok(Buffer.byteLength(text) <= 50 * 1024, `${action}: inline is ${Buffer.byteLength(text)} bytes`);
			assert.doesNotMatch(text, INVISIBLE);
			const path = /Full output: (\S+)\]$/.exec(text)?.[1];
			assert.ok(path && existsSync(path), text.slice(-300));
			const full = readFileSync(path, "utf8");
			assert.match(full, new RegExp(`^big: 500 ${action === "resources" ? "resources" : "prompts"}\\n`));
			assert.match(full, /… 300 more: cursor 200$/);
			assert.equal(full.split("\n").length, 202);
			assert.doesNotMatch(full, INVISIBLE);
		}
	});

	test("tools and describe: descriptions and schemas lose bidi controls and tag characters", async () => {
		const HIDDEN = /[\u200e\u200f\u202a-\u202e\u2066-\u2069]|\udb40[\udc00-\udc7f]/u;
		const listing = textOf(await run(session, { action: "tools", server: "hx" }));
		assert.match(listing, /Tool odd-newline with a hostile name/, listing);
		assert.doesNotMatch(listing, HIDDEN, JSON.stringify(listing));
		const described = textOf(await run(session, { action: "describe", server: "hx", tool: "odd\nname" }));
		assert.match(described, /"description":"a path"/, described);
		assert.doesNotMatch(described, HIDDEN, JSON.stringify(described));
	});

	test('"limit" has a maximum of 200', async () => {
		for (const action of ["resources", "templates", "prompts", "tools"] as const) {
			await assert.rejects(run(session, { action, server: "hx", limit: 201 }), {
				message: `mcp ${action}: "limit" is at most 200`,
			});
		}
		assert.equal((parameters.properties.limit as { maximum?: number }).maximum, 200, "the schema says so");
	});
});

describe("names are shown escaped", async () => {
	const session = await hostileSession();
	const EVIL = String.raw`evil\u001b[2J\u001b]0;pwned\u0007\u202e\u200b`;

	test("the tools listing: odd names escaped, no forged line", async () => {
		const text = textOf(await run(session, { action: "tools", server: "hx" }));
		assert.doesNotMatch(text, INVISIBLE, JSON.stringify(text));
		assert.equal(text.split("\n").length, 6, text);
		const names = text
			.split("\n")
			.slice(1)
			.map((line) => line.split(" — ")[0]);
		assert.deepEqual(names, [
			String.raw`odd\nname`,
			String.raw`esc\u001b[2J\u001b]0;title\u0007tool`,
			String.raw`bidi\u202eevil\u2066x\u2069`,
			String.raw`zw\u200bjoin\u{e0041}tag`,
			"plain",
		]);
	});

	test("a tool with an odd name is called by its exact name, or by the escaped form the listing shows", async () => {
		const calls = [
			["odd\nname", "odd-newline"],
			[String.raw`odd\nname`, "odd-newline"],
			["esc\u001b[2J\u001b]0;title\u0007tool", "odd-escapes"],
			[String.raw`esc\u001b[2J\u001b]0;title\u0007tool`, "odd-escapes"],
			["bidi\u202eevil\u2066x\u2069", "odd-bidi"],
			["zw\u200bjoin\u{e0041}tag", "odd-invisible"],
			[String.raw`zw\u200bjoin\u{e0041}tag`, "odd-invisible"],
		];
		for (const [tool = "", label] of calls) {
			const result = await run(session, { action: "call", server: "hx", tool });
			assert.equal(textOf(result), `called ${label}`, JSON.stringify(tool));
		}
		const described = textOf(await run(session, { action: "describe", server: "hx", tool: "odd\nname" }));
		assert.match(described, /^hx\/odd\\nname\n/);
	});

	test("arguments that are not a JSON object: the error names the call, the tool escaped", async () => {
		await assert.rejects(run(session, { action: "call", server: "hx", tool: "odd\nname", args: "{oops" }), {
			message: /^mcp call hx\/odd\\nname: "args" is not valid JSON \(/,
		});
		await assert.rejects(run(session, { action: "call", server: "hx", tool: "plain", args: [1, 2] }), {
			message: 'mcp call hx/plain: "args" must be a JSON object of arguments',
		});
		await assert.rejects(run(session, { action: "prompt", server: "hx", prompt: "p\u202e", args: "7" }), {
			message: 'mcp prompt hx/p\\u202e: "args" must be a JSON object of arguments',
		});
		assert.equal(textOf(await run(session, { action: "call", server: "hx", tool: "plain", args: " " })), "called plain");
	});

	test("an unknown tool: the error shows the asked and available names escaped", async () => {
		const error = await run(session, { action: "call", server: "hx", tool: "nope\u202e\n" }).catch((e: Error) => e);
		assert.ok(error instanceof Error);
		assert.doesNotMatch(error.message, INVISIBLE, JSON.stringify(error.message));
		assert.match(error.message, /has no tool "nope\\u202e\\n"; available: odd\\nname, esc\\u001b\[2J/);
	});

	test("status: an invalid configured name is an error that shows it escaped", () => {
		const status = textOf(runStatus(session));
		assert.doesNotMatch(status, INVISIBLE, JSON.stringify(status));
		assert.ok(status.includes(`${EVIL}: invalid`), status);
		assert.ok(status.includes(`error: server "${EVIL}" (`), status);
		assert.match(status, /server names may use letters, digits, - and _ only/);
		const user = userStatus(session);
		assert.doesNotMatch(user, INVISIBLE, JSON.stringify(user));
		assert.ok(user.includes(`  ${EVIL}: invalid`), user);
	});

	test('"unknown MCP server … configured: …" shows both escaped', async () => {
		const error = await run(session, { action: "tools", server: "nope\u001b[2J\u2066" }).catch((e: Error) => e);
		assert.ok(error instanceof Error);
		assert.doesNotMatch(error.message, INVISIBLE, JSON.stringify(error.message));
		assert.equal(error.message, String.raw`unknown MCP server "nope\u001b[2J\u2066"; configured: hx, big, ` + EVIL);
	});
});

function runStatus(session: Session) {
	return { content: [{ type: "text", text: modelStatus(session.runtime.status()) }] };
}
