/**
 * The `pi-mcp` shell against real parts, run in process (`main()`, tests/helpers/shell.ts; only the
 * servers are processes): the stdio fixture server (listing, a call, progress, a long result over a
 * real pipe), a server that crashes and one that hangs (none left behind), `doctor` over real
 * connections and the keyring, and sign-in against the real OAuth fixtures and keyring (Secret Service;
 * npm test runs the suite inside scripts/with-keyring.sh), whose pasted address goes through the binary's
 * stdin. The wording over in-memory servers: tests/fast/shell-*.test.ts; the binary: tests/cli-bin.test.ts.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
// @ts-expect-error -- plain ESM fixture without types
import { browse } from "./fixtures/oauth/as.mjs";
// @ts-expect-error -- plain ESM fixture without types
import { startProtectedMcp } from "./fixtures/oauth/rs.mjs";
import { processesWith } from "./helpers/processes.ts";
import { CRASH, HANG, SERVER } from "./helpers/servers.ts";
import { type ShellBox, type ShellStarted, shell, shellBox, startShell } from "./helpers/shell.ts";
import { startBin } from "./helpers/shell-bin.ts";

const state: { box?: ShellBox } = {};
const box = (): ShellBox => state.box as ShellBox;

before(async () => {
	state.box = await shellBox();
	const instructions = join(box().root, "instructions.txt");
	await writeFile(instructions, "Use the fixture for tests.\nSecond line of the instructions.\nThird line.\n");
	// One era, so each connection is one process: the `auto` era's probe sibling is proven by
	// tests/auto-era.test.ts, and its sweep by tests/cli-bin.test.ts.
	const servers = {
		fixture: {
			command: process.execPath,
			args: [SERVER],
			env: { FIXTURE_INSTRUCTIONS: instructions },
			protocolVersion: "legacy",
		},
		broken: { command: process.execPath, args: [CRASH], protocolVersion: "legacy" },
		off: { command: process.execPath, args: [SERVER], enabled: false },
		bad: { command: 42 },
	};
	await writeFile(box().userFile, JSON.stringify({ mcpServers: servers }));
});
after(() => state.box?.cleanup());

// The sign-in and the fixture servers share nothing: they run side by side (each part waits on its own servers).
describe("the shell against real parts", { concurrency: true }, () => {
	describe("the stdio fixture server", () => {
		test("tools lists it; call gives the result on stdout and progress on stderr; a long result is cut into a kept file", async () => {
			const tools = await shell(box(), ["tools", "fixture"]);
			assert.equal(tools.code, 0, tools.stderr);
			assert.match(tools.stdout, /^echo — Echo the text back$/m);
			assert.doesNotMatch(tools.stdout, /app-only/, "app-only tools stay hidden");
			assert.equal(tools.stdout.includes("\u001b"), false, "escapes stripped from descriptions");

			const echo = await shell(box(), ["call", "fixture", "echo", '{"text":"hello from the shell"}']);
			assert.equal(echo.code, 0, echo.stderr);
			assert.match(echo.stdout, /^\[\w+\] hello from the shell\n$/);

			const slow = await shell(box(), ["call", "fixture", "slow", '{"ms":1500,"steps":3}']);
			assert.equal(slow.code, 0, slow.stderr);
			assert.match(slow.stderr, /^pi-mcp: calling fixture\/slow…$/m, "a call taking more than a second says so");
			assert.match(slow.stderr, /fixture\/slow: \d+% · step \d/, "progress on stderr");
			assert.equal(slow.stdout.includes("pi-mcp:"), false, "progress never on stdout");

			const kept = join(box().root, "kept");
			const big = await shell(box(), ["call", "--out", kept, "fixture", "big", '{"bytes":120000}']);
			assert.equal(big.code, 0, big.stderr);
			const path = /Full output: (\S+?)\]/.exec(big.stdout)?.[1];
			assert.ok(path && existsSync(path), `the overflow file named in the output exists: ${big.stdout.slice(-300)}`);
			assert.equal((await readFile(path)).length, 120_000);
		});

		test("a broken server: call exits 1 naming it and its stderr; doctor reports it and still checks the others (exit 1)", async () => {
			const call = await shell(box(), ["call", "broken", "echo", "{}"]);
			assert.equal(call.code, 1);
			assert.match(call.stderr, /"broken"/);
			assert.match(call.stderr, /fixture crash: missing API_KEY/);
			assert.equal(call.stderr.includes("\u001b"), false);
			// The shared message's "run /mcp reconnect broken" is said the shell's way.
			assert.match(call.stderr, /Fix the cause, then run pi-mcp doctor\./);
			assert.doesNotMatch(call.stderr, /\/mcp /);

			const doctor = await shell(box(), ["doctor"]);
			assert.equal(doctor.code, 1, doctor.stdout);
			assert.match(doctor.stdout, new RegExp(`ok   node: ${process.version.replace(/\./g, "\\.")}`));
			assert.match(doctor.stdout, /ok {3}keyring: /);
			assert.match(doctor.stdout, /ok {3}user file: .*mcp\.json: loaded/);
			assert.match(doctor.stdout, /ok {3}project file: .*missing/);
			assert.match(doctor.stdout, /ok {3}fixture: ready · stdio · era \S+ · protocol \S+ · \d+ tools/);
			assert.match(doctor.stdout, /instructions: Use the fixture for tests\. \(2 more lines: --verbose\)\n/);
			assert.doesNotMatch(doctor.stdout, /Second line/);
			assert.match(
				doctor.stdout,
				/FAIL broken: failed — MCP server "broken" failed to start[^\n]*\n +stderr[^\n]*\n +fixture crash: missing API_KEY/,
			);
			assert.match(doctor.stdout, /ok {3}off: disabled/);
			assert.match(doctor.stdout, /FAIL bad: invalid — /);
			assert.match(doctor.stderr, /connecting to 2 servers…/);
			assert.doesNotMatch(doctor.stdout, /\/mcp /, "no Pi command in the shell's report");

			const verbose = await shell(box(), ["doctor", "--verbose", "--json"]);
			const report = JSON.parse(verbose.stdout) as { ok: boolean; servers: { name: string; ok: boolean; detail: string }[] };
			assert.equal(report.ok, false);
			assert.deepEqual(
				report.servers.map((server) => `${server.name}:${server.ok}`),
				["fixture:true", "broken:false", "off:true", "bad:false"],
			);
			const text = await shell(box(), ["doctor", "--verbose"]);
			assert.match(text.stdout, /instructions: Use the fixture for tests\.\n +Second line of the instructions\.\n +Third line\./);
		});

		test("--timeout bounds connecting to a server that never answers, and leaves no process behind", async () => {
			const hung = await shellBox();
			try {
				const log = join(hung.root, "hang.log");
				const servers = { hang: { command: process.execPath, args: [HANG], env: { FIXTURE_LOG: log } } };
				await writeFile(hung.userFile, JSON.stringify({ mcpServers: servers }));
				const bounded = await shell(hung, ["--timeout", "1", "tools", "hang"]);
				assert.equal(bounded.code, 1, bounded.stderr);
				assert.match(bounded.stderr, /hang/);
				assert.ok(existsSync(log), "the server was started");
				assert.deepEqual(processesWith(log), [], "no server left");
			} finally {
				await hung.cleanup();
			}
		});
	});

	describe("sign-in with the real keyring", () => {
		type Rs = { mcpUrl: URL; tokensSeen: string[]; close(): Promise<void> };
		const oauth: { rs?: Rs; box?: ShellBox } = {};
		after(async () => {
			await oauth.rs?.close();
			await oauth.box?.cleanup();
		});

		/** The authorization link `pi-mcp login` printed, once it is there (woken by its output, no polling). */
		const linkOf = (login: Pick<ShellStarted, "printed">) => login.printed(/https?:\/\/127\.0\.0\.1:\d+\/\S*auth\S*/);

		test("login prints the link and waits; the browser's return stores the record; call works; logout; call → exit 3", async (t) => {
			if (!process.env.DBUS_SESSION_BUS_ADDRESS) {
				t.skip("needs a Secret Service: run under scripts/with-keyring.sh (npm test does)");
				return;
			}
			oauth.rs = (await startProtectedMcp()) as Rs;
			const signIn = await shellBox();
			oauth.box = signIn;
			// A unique server name: the keyring record is keyed by name + endpoint, and the keyring may be shared.
			const server = `cli${process.pid}`;
			const servers = {
				[server]: { url: oauth.rs.mcpUrl.href, auth: "oauth" },
				plain: { command: process.execPath, args: [SERVER] },
			};
			await writeFile(signIn.userFile, JSON.stringify({ mcpServers: servers }));

			const before = await shell(signIn, ["call", server, "whoami"]);
			assert.equal(before.code, 3, before.stderr);
			assert.match(before.stderr, new RegExp(`needs sign-in: run pi-mcp login ${server}`));

			const login = startShell(signIn, ["login", server]);
			const url = await linkOf(login);
			const browsed = (await browse(url, { deliver: true })) as { response?: { status: number; body: string } };
			assert.equal(browsed.response?.status, 200, browsed.response?.body);
			const done = await login.done;
			assert.equal(done.code, 0, done.stderr);
			assert.match(done.stdout, new RegExp(`Signed in to MCP server "${server}"`));

			const listed = await shell(signIn, ["list"]);
			assert.match(listed.stdout, /credentials: signed in/);
			const whoami = await shell(signIn, ["call", server, "whoami"]);
			assert.equal(whoami.code, 0, whoami.stderr);
			assert.match(whoami.stdout, /"sub":"alice"/);
			for (const token of oauth.rs.tokensSeen) {
				for (const output of [done.stdout, done.stderr, listed.stdout, whoami.stdout, whoami.stderr]) {
					assert.equal(output.includes(token), false, "no token in any output");
				}
			}

			const notOauth = await shell(signIn, ["logout", "plain"]);
			assert.equal(notOauth.code, 2);
			assert.match(notOauth.stderr, /MCP server "plain" does not use OAuth sign-in/);
			const logout = await shell(signIn, ["logout", server]);
			assert.equal(logout.code, 0, logout.stderr);
			assert.equal(logout.stdout, `Signed out of MCP server "${server}".\n`);
			const again = await shell(signIn, ["logout", "--json", server]);
			assert.deepEqual(JSON.parse(again.stdout), { server, deleted: false });
			const after = await shell(signIn, ["call", server, "whoami"]);
			assert.equal(after.code, 3, after.stderr);

			// The browser on another machine: the address it ended on is pasted into the binary's stdin (a pipe).
			const env = { DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS };
			// 120 s, not the default 60: on a loaded machine the link alone took over 6 s, and the whole login 60.
			const pasting = startBin(signIn, ["login", server], env, 120_000);
			const redirect = ((await browse(await linkOf(pasting), { deliver: false })) as { redirect: URL }).redirect;
			pasting.child.stdin?.write(`${redirect.href}\n`);
			const pasted = await pasting.done;
			assert.equal(pasted.code, 0, pasted.stderr);
			assert.match(pasted.stdout, new RegExp(`Signed in to MCP server "${server}"`));
			assert.equal((await shell(signIn, ["call", server, "whoami"])).code, 0);
			assert.equal((await shell(signIn, ["logout", server])).code, 0);
		});
	});
});
