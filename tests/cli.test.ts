/**
 * The `pi-mcp` shell command, run as a user would (`node bin/pi-mcp.mjs …` in its own process, the
 * same Node as Pi) against real fixture servers, the real OAuth fixtures and the real keyring
 * (Secret Service; npm test runs the suite inside scripts/with-keyring.sh).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
// @ts-expect-error -- plain ESM fixture without types
import { browse } from "./fixtures/oauth/as.mjs";
// @ts-expect-error -- plain ESM fixture without types
import { startProtectedMcp } from "./fixtures/oauth/rs.mjs";
import { makeSandbox, type Sandbox } from "./helpers/pi.ts";
import { CRASH, SERVER } from "./helpers/servers.ts";

const BIN = new URL("../bin/pi-mcp.mjs", import.meta.url).pathname;
const COMMANDS = ["list", "tools", "call", "login", "logout", "doctor"];

type Run = Readonly<{ code: number | null; stdout: string; stderr: string }>;
type Started = Readonly<{
	done: Promise<Run>;
	stdout: () => string;
	/** Resolves once stdout (so far or later) contains `pattern`; rejects if the process ends first. */
	printed: (pattern: RegExp) => Promise<string>;
	write: (text: string) => void;
}>;

/** Starts `pi-mcp <args>` in the sandbox; killed if it runs for more than a minute. */
function start(sandbox: Sandbox, args: readonly string[], env: Readonly<Record<string, string>> = {}): Started {
	const child = spawn(process.execPath, [BIN, ...args], {
		cwd: sandbox.cwd,
		// Overflow files the output names are kept for the user; here they go away with the sandbox.
		env: { ...sandbox.env, TMPDIR: sandbox.root, ...env },
		stdio: ["pipe", "pipe", "pipe"],
	});
	const out: Buffer[] = [];
	const err: Buffer[] = [];
	child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
	child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
	const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
	const done = new Promise<Run>((resolve) =>
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
		}),
	);
	const stdout = () => Buffer.concat(out).toString("utf8");
	const printed = (pattern: RegExp) =>
		new Promise<string>((resolve, reject) => {
			const check = () => {
				const found = pattern.exec(stdout())?.[0];
				if (found === undefined) return;
				child.stdout.off("data", check);
				resolve(found);
			};
			child.stdout.on("data", check);
			void done.then(() => {
				check();
				reject(new Error(`${pattern} never appeared on stdout: ${stdout()}`));
			});
			check();
		});
	return { done, stdout, printed, write: (text) => child.stdin.write(text) };
}

function run(sandbox: Sandbox, args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<Run> {
	const started = start(sandbox, args, env);
	return started.done;
}

/** The authorization link `pi-mcp login` printed, once it is there (woken by its output, no polling). */
function linkOf(login: Started): Promise<string> {
	return login.printed(/https?:\/\/127\.0\.0\.1:\d+\/\S*auth\S*/);
}

const state: { sandbox?: Sandbox } = {};
const sandbox = (): Sandbox => state.sandbox as Sandbox;

before(async () => {
	state.sandbox = await makeSandbox();
	const servers = {
		fixture: { command: process.execPath, args: [SERVER], description: "the fixture server" },
		broken: { command: process.execPath, args: [CRASH] },
		off: { command: process.execPath, args: [SERVER], enabled: false },
		bad: { command: 42 },
	};
	await writeFile(join(sandbox().agentDir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
	await mkdir(join(sandbox().cwd, ".pi"));
	const project = { mcpServers: { local: { command: process.execPath, args: [SERVER] } } };
	await writeFile(join(sandbox().cwd, ".pi", "mcp.json"), JSON.stringify(project));
});
after(() => state.sandbox?.cleanup());

describe("help and usage", () => {
	test("--help on the command and on every subcommand; unknown commands and options are usage errors (exit 2)", async () => {
		const main = await run(sandbox(), ["--help"]);
		assert.equal(main.code, 0);
		for (const command of COMMANDS) assert.match(main.stdout, new RegExp(`^  ${command}\\b`, "m"));
		for (const command of COMMANDS) {
			const help = await run(sandbox(), [command, "--help"]);
			assert.equal(help.code, 0, help.stderr);
			assert.match(help.stdout, new RegExp(`^Usage: pi-mcp ${command}\\b`), command);
			assert.match(help.stdout, /Exit codes: 0 ok, 1 failed, 2 usage/);
		}
		const unknown = await run(sandbox(), ["frobnicate"]);
		assert.equal(unknown.code, 2);
		assert.match(unknown.stderr, /unknown command "frobnicate"/);
		const option = await run(sandbox(), ["list", "--frob"]);
		assert.equal(option.code, 2);
		assert.match(option.stderr, /unknown option '--frob'/);
		const none = await run(sandbox(), []);
		assert.equal(none.code, 2);
		assert.match(none.stdout, /^pi-mcp: the MCP servers/);
	});
});

describe("list, tools, call against fixture servers", () => {
	test("list: every server with state and source, the files; the project file only with --approve; --json parses", async () => {
		const listed = await run(sandbox(), ["list"]);
		assert.equal(listed.code, 2, "an invalid entry (bad) makes list exit 2");
		assert.match(listed.stdout, /fixture: idle · stdio — the fixture server/);
		assert.match(listed.stdout, new RegExp(`source: ${join(sandbox().agentDir, "mcp.json")}`));
		assert.match(listed.stdout, /off: disabled/);
		assert.match(listed.stdout, /bad: invalid/);
		assert.match(listed.stdout, /error: server "bad" \(.*mcp\.json\): field "command"/);
		assert.match(listed.stdout, /project: .*\.pi\/mcp\.json \(not read: project not trusted\)/);
		assert.doesNotMatch(listed.stdout, /local:/);

		const approved = await run(sandbox(), ["--approve", "list", "--json"]);
		assert.equal(approved.code, 2, approved.stderr);
		const json = JSON.parse(approved.stdout) as { agentDir: string; servers: { name: string; state: string }[] };
		assert.equal(json.agentDir, sandbox().agentDir);
		assert.deepEqual(
			json.servers.map((server) => `${server.name}:${server.state}`),
			["fixture:idle", "broken:idle", "off:disabled", "bad:invalid", "local:idle"],
		);
	});

	test("tools: lists with descriptions, searches with a query, --json gives schemas; unknown server → exit 2", async () => {
		const tools = await run(sandbox(), ["tools", "fixture"]);
		assert.equal(tools.code, 0, tools.stderr);
		assert.match(tools.stdout, /^echo — Echo the text back$/m);
		assert.match(tools.stdout, /^add — Add two numbers$/m);
		assert.doesNotMatch(tools.stdout, /app-only/, "app-only tools stay hidden");
		assert.equal(tools.stdout.includes("\u001b"), false, "escapes stripped from descriptions");

		const found = await run(sandbox(), ["tools", "--json", "fixture", "numbers"]);
		assert.equal(found.code, 0, found.stderr);
		const json = JSON.parse(found.stdout) as { tools: { name: string; inputSchema: { properties: object } }[] };
		assert.equal(json.tools[0]?.name, "add");
		assert.deepEqual(Object.keys(json.tools[0]?.inputSchema.properties ?? {}), ["a", "b"]);

		const unknown = await run(sandbox(), ["tools", "nope"]);
		assert.equal(unknown.code, 2);
		assert.match(
			unknown.stderr,
			/unknown MCP server "nope"; configured: fixture, broken, off, bad \(the project file is read only with --approve\)/,
		);
		const local = await run(sandbox(), ["tools", "--approve", "local"]);
		assert.equal(local.code, 0, local.stderr);
		assert.match(local.stdout, /^local: \d+ tools/);
	});

	test("call: result on stdout, progress on stderr, tool errors exit 1, bad JSON exit 2, long output cut into a kept file, images saved", async () => {
		const echo = await run(sandbox(), ["call", "fixture", "echo", '{"text":"hello from the shell"}']);
		assert.equal(echo.code, 0, echo.stderr);
		assert.match(echo.stdout, /^\[\w+\] hello from the shell\n$/);

		const json = await run(sandbox(), ["call", "--json", "fixture", "add", '{"a":2,"b":3}']);
		assert.equal(json.code, 0, json.stderr);
		assert.deepEqual(JSON.parse(json.stdout), {
			server: "fixture",
			tool: "add",
			isError: false,
			content: [{ type: "text", text: "5" }],
		});

		const slow = await run(sandbox(), ["call", "fixture", "slow", '{"ms":1500,"steps":3}']);
		assert.equal(slow.code, 0, slow.stderr);
		assert.match(slow.stderr, /^pi-mcp: calling fixture\/slow…$/m, "a call taking more than a second says so");
		assert.match(slow.stderr, /fixture\/slow: \d+% · step \d/, "progress on stderr");
		assert.equal(slow.stdout.includes("pi-mcp:"), false, "progress never on stdout");

		const failed = await run(sandbox(), ["call", "fixture", "fail", '{"message":"nope"}']);
		assert.equal(failed.code, 1);
		assert.match(failed.stdout, /nope/);

		const bad = await run(sandbox(), ["call", "fixture", "echo", "{text:"]);
		assert.equal(bad.code, 2);
		assert.match(bad.stderr, /not valid JSON/);

		const kept = join(sandbox().root, "kept");
		const big = await run(sandbox(), ["call", "--out", kept, "fixture", "big", '{"bytes":120000}']);
		assert.equal(big.code, 0, big.stderr);
		const path = /Full output: (\S+?)\]/.exec(big.stdout)?.[1];
		assert.ok(path && existsSync(path), `the overflow file named in the output exists: ${big.stdout.slice(-300)}`);
		assert.equal((await readFile(path)).length, 120_000);

		const images = await run(sandbox(), ["call", "--out", kept, "fixture", "images", '{"count":1}']);
		assert.equal(images.code, 0, images.stderr);
		const image = /\[image\/png, \d+ B saved to (\S+)\]/.exec(images.stdout)?.[1];
		assert.ok(image?.startsWith(`${kept}/`) && image.endsWith(".png") && existsSync(image), images.stdout);
		assert.deepEqual([...(await readFile(image as string)).subarray(1, 4)], [...Buffer.from("PNG")]);
		assert.match(images.stderr, /files named above are kept in /);

		// Without --out an image is not written at all (a path to a file removed at exit names nothing), and it says so.
		const gone = await run(sandbox(), ["call", "fixture", "images", '{"count":1}']);
		assert.match(gone.stdout, /\[image\/png, \d+ B: not kept; pass --out <dir> to save it\]/);
		assert.doesNotMatch(gone.stdout, /saved to/);
	});

	test("a broken server: call exits 1 naming it; doctor reports it and still checks the others (exit 1)", async () => {
		const call = await run(sandbox(), ["call", "broken", "echo", "{}"]);
		assert.equal(call.code, 1);
		assert.match(call.stderr, /"broken"/);
		assert.match(call.stderr, /fixture crash: missing API_KEY/);
		assert.equal(call.stderr.includes("\u001b"), false);
		// The shared message's "run /mcp reconnect broken" is said the shell's way.
		assert.match(call.stderr, /Fix the cause, then run pi-mcp doctor\./);
		assert.doesNotMatch(call.stderr, /\/mcp /);

		const doctor = await run(sandbox(), ["doctor"]);
		assert.equal(doctor.code, 1, doctor.stdout);
		assert.match(doctor.stdout, new RegExp(`ok   node: ${process.version.replace(/\./g, "\\.")}`));
		assert.match(doctor.stdout, /ok {3}user file: .*mcp\.json: loaded/);
		assert.match(doctor.stdout, /ok {3}project file: .*not read \(pass --approve/);
		assert.match(doctor.stdout, /ok {3}fixture: ready · stdio · era \S+ · protocol \S+ · \d+ tools/);
		assert.match(
			doctor.stdout,
			/FAIL broken: failed — MCP server "broken" failed to start[^\n]*\n +stderr[^\n]*\n +fixture crash: missing API_KEY/,
		);
		assert.match(doctor.stdout, /ok {3}off: disabled/);
		assert.match(doctor.stdout, /FAIL bad: invalid — /);
		assert.match(doctor.stderr, /connecting to 2 servers…/);
		assert.doesNotMatch(doctor.stdout, /\/mcp /, "no Pi command in the shell's report");

		const json = await run(sandbox(), ["doctor", "--json"]);
		const report = JSON.parse(json.stdout) as { ok: boolean; servers: { name: string; ok: boolean }[] };
		assert.equal(report.ok, false);
		assert.deepEqual(
			report.servers.map((server) => `${server.name}:${server.ok}`),
			["fixture:true", "broken:false", "off:true", "bad:false"],
		);
	});
});

describe("sign-in with the real keyring", () => {
	type Rs = { mcpUrl: URL; tokensSeen: string[]; close(): Promise<void> };
	const oauth: { rs?: Rs; sandbox?: Sandbox } = {};
	after(async () => {
		await oauth.rs?.close();
		await oauth.sandbox?.cleanup();
	});

	test("login prints the link and waits; the browser's return stores the record; call works; logout; call → exit 3", async (t) => {
		if (!process.env.DBUS_SESSION_BUS_ADDRESS) {
			t.skip("needs a Secret Service: run under scripts/with-keyring.sh (npm test does)");
			return;
		}
		oauth.rs = (await startProtectedMcp()) as Rs;
		const box = await makeSandbox({ DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS });
		oauth.sandbox = box;
		// A unique server name: the keyring record is keyed by name + endpoint, and the keyring may be shared.
		const server = `cli${process.pid}`;
		const servers = {
			[server]: { url: oauth.rs.mcpUrl.href, auth: "oauth" },
			plain: { command: process.execPath, args: [SERVER] },
		};
		await writeFile(join(box.agentDir, "mcp.json"), JSON.stringify({ mcpServers: servers }));

		const before = await run(box, ["call", server, "whoami"]);
		assert.equal(before.code, 3, before.stderr);
		assert.match(before.stderr, new RegExp(`needs sign-in: run pi-mcp login ${server}`));

		const login = start(box, ["login", server]);
		const url = await linkOf(login);
		const browsed = (await browse(url, { deliver: true })) as { response?: { status: number; body: string } };
		assert.equal(browsed.response?.status, 200, browsed.response?.body);
		const done = await login.done;
		assert.equal(done.code, 0, done.stderr);
		assert.match(done.stdout, new RegExp(`Signed in to MCP server "${server}"`));

		const listed = await run(box, ["list"]);
		assert.match(listed.stdout, /credentials: signed in/);
		const whoami = await run(box, ["call", server, "whoami"]);
		assert.equal(whoami.code, 0, whoami.stderr);
		assert.match(whoami.stdout, /"sub":"alice"/);
		for (const token of oauth.rs.tokensSeen) {
			for (const output of [done.stdout, done.stderr, listed.stdout, whoami.stdout, whoami.stderr]) {
				assert.equal(output.includes(token), false, "no token in any output");
			}
		}

		const notOauth = await run(box, ["logout", "plain"]);
		assert.equal(notOauth.code, 2);
		assert.match(notOauth.stderr, /MCP server "plain" does not use OAuth sign-in/);
		const logout = await run(box, ["logout", server]);
		assert.equal(logout.code, 0, logout.stderr);
		assert.equal(logout.stdout, `Signed out of MCP server "${server}".\n`);
		const again = await run(box, ["logout", "--json", server]);
		assert.deepEqual(JSON.parse(again.stdout), { server, deleted: false });
		const after = await run(box, ["call", server, "whoami"]);
		assert.equal(after.code, 3, after.stderr);

		// The browser on another machine: the address it ended on is pasted into pi-mcp login.
		const pasting = start(box, ["login", server]);
		const redirect = ((await browse(await linkOf(pasting), { deliver: false })) as { redirect: URL }).redirect;
		pasting.write(`${redirect.href}\n`);
		const pasted = await pasting.done;
		assert.equal(pasted.code, 0, pasted.stderr);
		assert.match(pasted.stdout, new RegExp(`Signed in to MCP server "${server}"`));
		assert.equal((await run(box, ["call", server, "whoami"])).code, 0);
		assert.equal((await run(box, ["logout", server])).code, 0);
	});
});

describe("hostile names (issue #13, item 3)", () => {
	test("an unknown server name is shown escaped", async () => {
		const unknown = await run(sandbox(), ["tools", "nope\u001b[2J\u202e"]);
		assert.equal(unknown.code, 2);
		assert.ok(unknown.stderr.includes(String.raw`unknown MCP server "nope\u001b[2J\u202e"; configured: fixture`), unknown.stderr);
		assert.equal(unknown.stderr.includes("\u001b") || unknown.stderr.includes("\u202e"), false, JSON.stringify(unknown.stderr));
	});
});

test("a message's next step is data, worded by each front end: Pi's /mcp, the shell's pi-mcp, no paste hint in the shell", async () => {
	const { SHELL_WORDS } = await import("../src/cli/main.ts");
	const { PI_WORDS } = await import("../src/errors.ts");
	const { notices, linkText } = await import("../src/login.ts");
	const { missingVariable } = await import("../src/auth/record.ts");
	const config = { name: "fx" } as Parameters<typeof missingVariable>[0];
	for (const [words, reconnect, login] of [
		[PI_WORDS, "/mcp reconnect fx", "/mcp login fx"],
		[SHELL_WORDS, "pi-mcp doctor", "pi-mcp login fx"],
	] as const) {
		const missing = missingVariable(config, "bearerTokenEnv", "TOKEN", words);
		assert.deepEqual(missing.hint, { kind: "reconnect", server: "fx" });
		assert.ok(missing.message.endsWith(`then run ${reconnect}.`), missing.message);
		assert.match(notices.failed("fx", "boom", words), new RegExp(`Run ${login} for a new link\\.$`));
		const link = linkText((_config, text) => text, config, { reason: "login", url: "https://as.example/a" } as never, words);
		assert.equal(link.includes("can be pasted with"), words === PI_WORDS, link);
	}
});

test("one version: the one servers see in clientInfo and pi-mcp --version prints is package.json's", async () => {
	const { VERSION } = await import("../src/session.ts");
	const { version } = await import("../src/cli/context.ts");
	const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
	assert.equal(VERSION, pkg.version);
	assert.equal(version(), VERSION);
});
