/**
 * Stored secrets (issue 48) and the one rule for configured secrets (48 item 5, 47 item 7): `${secret:NAME}`
 * in env and headers, read from the real Secret Service (npm test runs under scripts/with-keyring.sh) when a
 * server connects and given only to the identity it was stored for; `pi-mcp secret set|list|remove|move` and
 * `import --move-secrets` as a user runs them; a server echoing its secret in every place the model reads,
 * through the runtime and through a real Pi; no keyring; no file holding a value.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { keyringStore } from "../src/auth/keyring.ts";
import { removeSecret, storeSecret } from "../src/auth/stored.ts";
import { createAuth } from "../src/auth.ts";
import { loadConfig } from "../src/config.ts";
import type { Auth } from "../src/contracts.ts";
import { SecretRequired } from "../src/errors.ts";
import { createLoginService } from "../src/login/receiver.ts";
import { createRuntime } from "../src/runtime.ts";
import type { ServerConfig } from "../src/schema.ts";
import { makeSandbox, runPiJson, type Sandbox, toolResults } from "./helpers/pi.ts";
import { FIXTURES } from "./helpers/servers.ts";
import { shell } from "./helpers/shell.ts";

const SECRET_SERVER = join(FIXTURES, "secret-server.mjs");
const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const DBUS = process.env.DBUS_SESSION_BUS_ADDRESS;

/** A value no test text holds by chance; each run its own. */
const fresh = (label: string) => `${label}-${randomBytes(12).toString("hex")}`;
const sha = (value: string) => createHash("sha256").update(value).digest("hex");

const sandboxes: Sandbox[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
	for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
	await Promise.all(sandboxes.map((sandbox) => sandbox.cleanup()));
});

async function sandboxWith(servers: Record<string, unknown>): Promise<Sandbox> {
	const sandbox = await makeSandbox(DBUS ? { DBUS_SESSION_BUS_ADDRESS: DBUS } : {});
	sandboxes.push(sandbox);
	await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: servers }, null, 2));
	return sandbox;
}

type Run = Readonly<{ code: number | null; stdout: string; stderr: string }>;

/** `pi-mcp <args>` in this process, `input` piped to its stdin (the keyring is this process's bus). */
const cli = (sandbox: Sandbox, args: readonly string[], input = ""): Promise<Run> => shell(sandbox, args, { stdin: input });

/** Runs `main()` of each [args, stdin] in turn and prints their results as one JSON line (see withoutBus). */
const RUN_EACH = `
import { Readable } from "node:stream";
import { main } from ${JSON.stringify(new URL("../src/cli/main.ts", import.meta.url).pathname)};
const results = [];
for (const [args, input] of JSON.parse(process.env.RUN_EACH)) {
	const out = [];
	const err = [];
	const io = { out: (t) => out.push(t), err: (t) => err.push(t), stdin: Readable.from([input]), env: process.env, cwd: process.cwd() };
	const code = await main(args, io);
	results.push({ code, stdout: out.join(""), stderr: err.join("") });
}
process.stdout.write(JSON.stringify(results));
`;

/**
 * `pi-mcp` commands in one process of their own without a session bus (no Secret Service to reach):
 * that process's keyring is what must fail, so it cannot be this one's. One process for all of them.
 */
async function withoutBus(sandbox: Sandbox, commands: readonly (readonly [readonly string[], string])[]): Promise<Run[]> {
	const env: Record<string, string | undefined> = { ...sandbox.env, TMPDIR: sandbox.root, RUN_EACH: JSON.stringify(commands) };
	delete env.DBUS_SESSION_BUS_ADDRESS;
	const child = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), "--input-type=module", "-e", RUN_EACH], {
		cwd: sandbox.cwd,
		env,
		stdio: ["ignore", "pipe", "pipe"],
	});
	const out: Buffer[] = [];
	const err: Buffer[] = [];
	child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
	child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
	const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
	const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
	clearTimeout(timer);
	assert.equal(code, 0, Buffer.concat(err).toString("utf8"));
	return JSON.parse(Buffer.concat(out).toString("utf8"));
}

/** Every file under `dir` whose bytes hold `value` (plain or as JSON would escape it); links are not followed. */
function filesHolding(dir: string, value: string): readonly string[] {
	const found: string[] = [];
	const walk = (path: string) => {
		const info = lstatSync(path, { throwIfNoEntry: false });
		if (!info) return;
		if (info.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
		else if (info.isFile() && readFileSync(path).includes(value)) found.push(path);
	};
	walk(dir);
	return found;
}

async function configOf(sandbox: Sandbox, name: string, trusted = false): Promise<ServerConfig> {
	const snapshot = await loadConfig({ agentDir: sandbox.agentDir, cwd: sandbox.cwd, trusted, env: sandbox.env });
	const config = snapshot.servers.find((entry) => entry.name === name)?.config;
	assert.ok(config, `server ${name}: ${JSON.stringify(snapshot.servers)}`);
	return config;
}

function realAuth(env: Readonly<Record<string, string | undefined>>, lockDir: string): Auth {
	const login = createLoginService({});
	const auth = createAuth({ env, store: keyringStore(), login, lockDir, notify: () => undefined });
	cleanups.push(async () => {
		auth.dispose();
		await login.dispose();
	});
	return auth;
}

before(() => {
	assert.ok(DBUS, "no session bus: run under scripts/with-keyring.sh (npm test does)");
});

describe("the value reaching the server, and nothing else (real keyring)", () => {
	test("a stored secret reaches the server's env; every place the model reads shows [redacted]", async () => {
		const value = fresh("sk-live");
		const sandbox = await sandboxWith({
			s: { command: process.execPath, args: [SECRET_SERVER], env: { API_KEY: "${secret:API_KEY}", ECHO_VAR: "API_KEY" } },
		});
		const config = await configOf(sandbox, "s");
		const store = keyringStore();
		await storeSecret(store, config, "API_KEY", value);
		cleanups.push(() => removeSecret(store, config, "API_KEY"));
		const snapshot = await loadConfig({ agentDir: sandbox.agentDir, cwd: sandbox.cwd, trusted: false, env: sandbox.env });
		const runtime = createRuntime({
			servers: snapshot.servers,
			env: sandbox.env,
			clientInfo: { name: "secrets-test", version: "0" },
			auth: realAuth(sandbox.env, join(sandbox.root, "locks")),
		});
		try {
			const check = await runtime.call("s", "check_env", { name: "API_KEY", sha256: sha(value) });
			assert.deepEqual(check.content, [{ type: "text", text: "API_KEY matches" }]);
			const seen = [
				await runtime.call("s", "echo", {}),
				await runtime.call("s", "echo_error", {}),
				await runtime.call("s", "echo_structured", {}),
				await runtime.request("s", "read", "resources", (client, options) =>
					client.readResource({ uri: "fixture://key" }, options),
				),
				await runtime.request("s", "prompt", "prompts", (client, options) =>
					client.getPrompt({ name: "leak", arguments: { topic: "t" } }, options),
				),
				await runtime.request("s", "complete", "completions", (client, options) =>
					client.complete({ ref: { type: "ref/prompt", name: "leak" }, argument: { name: "topic", value: "" } }, options),
				),
				runtime.status(),
			];
			const text = JSON.stringify(seen);
			assert.equal(text.includes(value), false, text);
			for (const where of [
				"the key is [redacted]",
				"failed with key [redacted]",
				'"key":"[redacted]"',
				"resource key [redacted]",
				"About t: [redacted]",
				"key-[redacted]",
				"Use the key [redacted] with care.",
				"starting; the key is [redacted]",
			]) {
				assert.ok(text.includes(where), `${where} in ${text}`);
			}
		} finally {
			await runtime.dispose();
		}
		assert.deepEqual([...filesHolding(sandbox.root, value), ...filesHolding(sandbox.home, value)], []);
	});

	test("binding: the same name with other args, or a project entry shadowing it, gets nothing and is told why", async () => {
		const value = fresh("bound");
		const sandbox = await sandboxWith({ s: { command: process.execPath, args: [SECRET_SERVER], env: { K: "${secret:K}" } } });
		const stored = await configOf(sandbox, "s");
		const store = keyringStore();
		await storeSecret(store, stored, "K", value);
		cleanups.push(() => removeSecret(store, stored, "K"));
		// The same name now runs the fixture with another argument.
		await writeFile(
			join(sandbox.agentDir, "mcp.json"),
			JSON.stringify({
				mcpServers: { s: { command: process.execPath, args: [SECRET_SERVER, "--other"], env: { K: "${secret:K}" } } },
			}),
		);
		await mkdir(join(sandbox.cwd, ".pi"), { recursive: true });
		const snapshot = await loadConfig({ agentDir: sandbox.agentDir, cwd: sandbox.cwd, trusted: false, env: sandbox.env });
		const runtime = createRuntime({
			servers: snapshot.servers,
			env: sandbox.env,
			clientInfo: { name: "secrets-test", version: "0" },
			auth: realAuth(sandbox.env, join(sandbox.root, "locks")),
		});
		try {
			const error = await runtime.call("s", "check_env", { name: "K", sha256: sha(value) }).then(
				() => assert.fail("the secret must not be given"),
				(e: unknown) => e,
			);
			assert.ok(error instanceof SecretRequired, String(error));
			assert.match(
				error.message,
				/^MCP server "s" needs secret K, which was stored for another command \(user:s, which runs .*secret-server\.mjs\), not for this one \(user:s, which runs .*secret-server\.mjs --other\)\. A stored secret is given only to the command it was stored for; to give it to this one, store it with: pi-mcp secret set s K$/,
			);
			assert.equal(error.message.includes(value), false);
			assert.equal(runtime.status()[0]?.state, "idle", "a missing secret does not latch");
		} finally {
			await runtime.dispose();
		}
		// A project entry of the same name, same command: another identity too.
		await writeFile(
			join(sandbox.cwd, ".pi", "mcp.json"),
			JSON.stringify({ mcpServers: { s: { command: process.execPath, args: [SECRET_SERVER], env: { K: "${secret:K}" } } } }),
		);
		await writeFile(
			join(sandbox.agentDir, "mcp.json"),
			JSON.stringify({ mcpServers: { s: { command: process.execPath, args: [SECRET_SERVER], env: { K: "${secret:K}" } } } }),
		);
		const listed = await cli(sandbox, ["secret", "list", "s", "--approve", "--json"]);
		assert.equal(listed.code, 0, listed.stderr);
		assert.deepEqual(JSON.parse(listed.stdout), { server: "s", secrets: [{ name: "K", stored: false, state: "other" }] });
		const user = await cli(sandbox, ["secret", "list", "--json", "s"]);
		assert.deepEqual(JSON.parse(user.stdout), { server: "s", secrets: [{ name: "K", stored: true, state: "stored" }] });
	});

	test("a missing secret fails before anything starts, names the secret and the command; status says needs secret", async () => {
		const sandbox = await sandboxWith({ s: { command: "/nonexistent/never-started", env: { K: "${secret:MISSING_ONE}" } } });
		const call = await cli(sandbox, ["call", "s", "x"]);
		assert.match(
			call.stderr,
			/^pi-mcp: MCP server "s" needs secret MISSING_ONE, which is not stored in the OS keyring; store it with: pi-mcp secret set s MISSING_ONE$/m,
		);
		assert.equal(/not found|never-started/.test(call.stderr), false, "nothing was started");
		const list = await cli(sandbox, ["list"]);
		assert.match(list.stdout, /credentials: needs secret MISSING_ONE/);
	});
});

describe("pi-mcp secret (real keyring)", () => {
	test("set from a pipe, list, remove; no value printed; other arguments refused", async () => {
		const value = fresh("piped");
		const sandbox = await sandboxWith({
			s: { command: process.execPath, args: [SECRET_SERVER], env: { A: "${secret:A}", B: "x-${secret:B}" } },
		});
		const set = await cli(sandbox, ["secret", "set", "s", "A"], `${value}\n`);
		assert.equal(set.code, 0, set.stderr);
		assert.match(set.stdout, /^Stored secret A for MCP server "s" \(user:s\) in the OS keyring\.\n$/);
		const listed = await cli(sandbox, ["secret", "list", "s"]);
		assert.equal(
			listed.stdout,
			'Secrets of MCP server "s" (user:s):\n  A: stored\n  B: not stored (run pi-mcp secret set s B)\n',
		);
		const check = await cli(sandbox, ["secret", "set", "s", "B"], "b-value-123");
		assert.equal(check.code, 0);
		const called = await cli(sandbox, ["call", "s", "check_env", JSON.stringify({ name: "A", sha256: sha(value) })]);
		assert.match(called.stdout, /A matches/);
		const inArgs = await cli(sandbox, ["secret", "set", "s", "A", value]);
		assert.equal(inArgs.code, 2);
		assert.match(inArgs.stderr, /never given as an argument/);
		const removed = await cli(sandbox, ["secret", "remove", "s", "A"]);
		assert.equal(removed.stdout, 'Removed secret A of MCP server "s".\n');
		const again = await cli(sandbox, ["secret", "remove", "s", "A"]);
		assert.equal(again.stdout, 'No secret A was stored for MCP server "s".\n');
		await cli(sandbox, ["secret", "remove", "s", "B"]);
		for (const run of [set, listed, check, called, inArgs, removed]) {
			assert.equal(`${run.stdout}${run.stderr}`.includes(value), false);
		}
		assert.deepEqual([...filesHolding(sandbox.root, value)], []);
	});

	test("move takes literal secrets into the keyring and rewrites the entry with references; import --move-secrets too", async () => {
		const key = fresh("moved-key");
		const token = fresh("moved-token");
		const sandbox = await sandboxWith({
			s: {
				command: process.execPath,
				args: [SECRET_SERVER],
				env: { API_KEY: key, MODE: "fast" },
			},
			h: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: `Bearer ${token}` } },
		});
		const moved = await cli(sandbox, ["secret", "move", "s"]);
		assert.equal(moved.code, 0, moved.stderr);
		assert.match(
			moved.stdout,
			/^Moved 1 secret of MCP server "s" into the OS keyring:\n {2}env\.API_KEY → "\$\{secret:API_KEY\}"\n/,
		);
		const movedH = await cli(sandbox, ["secret", "move", "h", "--json"]);
		assert.deepEqual(JSON.parse(movedH.stdout), {
			server: "h",
			moved: [{ field: "headers.Authorization", secret: "AUTHORIZATION", now: "Bearer ${secret:AUTHORIZATION}" }],
		});
		const file = JSON.parse(await readFile(join(sandbox.agentDir, "mcp.json"), "utf8"));
		assert.deepEqual(file.mcpServers.s.env, { API_KEY: "${secret:API_KEY}", MODE: "fast" });
		assert.deepEqual(file.mcpServers.h.headers, { Authorization: "Bearer ${secret:AUTHORIZATION}" });
		const called = await cli(sandbox, ["call", "s", "check_env", JSON.stringify({ name: "API_KEY", sha256: sha(key) })]);
		assert.match(called.stdout, /API_KEY matches/);
		const nothing = await cli(sandbox, ["secret", "move", "s"]);
		assert.match(nothing.stdout, /has no literal secret in its env or headers; nothing was moved/);

		// import --move-secrets, from another client's file.
		const imported = fresh("imported");
		const other = join(sandbox.root, "claude.json");
		await writeFile(
			other,
			JSON.stringify({
				mcpServers: { i: { command: process.execPath, args: [SECRET_SERVER], env: { GITHUB_TOKEN: imported } } },
			}),
		);
		const run = await cli(sandbox, ["import", "claude-desktop", other, "--move-secrets"]);
		assert.equal(run.code, 0, run.stderr);
		assert.match(
			run.stderr,
			/Moved 1 secret of MCP server "i" into the OS keyring:\n {2}env\.GITHUB_TOKEN → "\$\{secret:GITHUB_TOKEN\}"/,
		);
		const after = JSON.parse(await readFile(join(sandbox.agentDir, "mcp.json"), "utf8"));
		assert.deepEqual(after.mcpServers.i.env, { GITHUB_TOKEN: "${secret:GITHUB_TOKEN}" });
		for (const each of [moved, movedH, called, nothing, run]) {
			for (const value of [key, token, imported]) assert.equal(`${each.stdout}${each.stderr}`.includes(value), false);
		}
		for (const value of [key, token])
			assert.deepEqual([...filesHolding(sandbox.agentDir, value), ...filesHolding(sandbox.home, value)], []);
		for (const [server, name] of [
			["s", "API_KEY"],
			["h", "AUTHORIZATION"],
			["i", "GITHUB_TOKEN"],
		] as const) {
			await cli(sandbox, ["secret", "remove", server, name]);
		}
	});

	test("no keyring: set fails clearly and writes nothing; move leaves the file as it was; a connection needing a secret fails the same way", async () => {
		const value = fresh("nokeyring");
		const sandbox = await sandboxWith({
			s: { command: process.execPath, args: [SECRET_SERVER], env: { API_KEY: value, K: "${secret:K_NO_KEYRING}" } },
		});
		const before = await readFile(join(sandbox.agentDir, "mcp.json"), "utf8");
		const [set, move, call] = await withoutBus(sandbox, [
			[["secret", "set", "s", "K_NO_KEYRING"], "some-value-123"],
			[["secret", "move", "s"], ""],
			[["call", "s", "echo"], ""],
		]);
		assert.equal(set?.code, 1);
		assert.match(
			set?.stderr ?? "",
			/^pi-mcp: MCP server "s": secret K_NO_KEYRING was not stored: the OS keyring \(Secret Service\) is unavailable/,
		);
		assert.match(set?.stderr ?? "", /never in a file.*\$\{VAR\}/s);
		assert.equal(move?.code, 1);
		assert.equal(await readFile(join(sandbox.agentDir, "mcp.json"), "utf8"), before, "the file is untouched");
		assert.match(
			call?.stderr ?? "",
			/MCP server "s": secret K_NO_KEYRING cannot be read: the OS keyring \(Secret Service\) is unavailable/,
		);
		const listed = await cli(sandbox, ["secret", "list", "s"]);
		assert.match(listed.stdout, /K_NO_KEYRING: not stored/, "nothing reached the real keyring either");
		for (const run of [set, move, call]) assert.equal(`${run?.stdout}${run?.stderr}`.includes("some-value-123"), false);
		assert.deepEqual(filesHolding(sandbox.root, "some-value-123"), []);
	});
});

describe("through a real Pi", () => {
	test("a server echoing its stored secret in a result, an error and a read: the model sees [redacted] only", async () => {
		const value = fresh("pi-secret");
		const sandbox = await sandboxWith({
			s: { command: process.execPath, args: [SECRET_SERVER], env: { API_KEY: "${secret:API_KEY}", ECHO_VAR: "API_KEY" } },
		});
		const set = await cli(sandbox, ["secret", "set", "s", "API_KEY"], value);
		assert.equal(set.code, 0, set.stderr);
		cleanups.push(() => cli(sandbox, ["secret", "remove", "s", "API_KEY"]));
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			prompt: "use it",
			script: [
				{ tool: "mcp", args: { action: "call", server: "s", tool: "check_env", args: { name: "API_KEY", sha256: sha(value) } } },
				{ tool: "mcp", args: { action: "call", server: "s", tool: "echo", args: {} } },
				{ tool: "mcp", args: { action: "call", server: "s", tool: "echo_error", args: {} } },
				{ tool: "mcp", args: { action: "read", server: "s", uri: "fixture://key" } },
				{ text: "done" },
			],
			timeoutMs: 60_000,
		});
		assert.equal(run.code, 0, run.stderr);
		const [check, echo, failed, read] = toolResults(run.events);
		assert.match(check?.text ?? "", /API_KEY matches/);
		assert.match(echo?.text ?? "", /the key is \[redacted\]/);
		assert.equal(failed?.isError, true);
		assert.match(failed?.text ?? "", /failed with key \[redacted\]/);
		assert.match(read?.text ?? "", /resource key \[redacted\]/);
		assert.equal(`${run.stdout}${run.stderr}`.includes(value), false);
		assert.deepEqual([...filesHolding(sandbox.root, value)], []);
	});
});
