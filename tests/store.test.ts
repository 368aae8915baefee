/**
 * Secure records against the REAL Secret Service. Run under the keyring wrapper:
 *   bash scripts/with-keyring.sh node --import tsx --test tests/store.test.ts
 * The "unavailable" cases run in child processes without a session bus (`@napi-rs/keyring` keeps
 * its D-Bus connection for the life of a process, so this cannot be switched in-process).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readlinkSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { KEYRING_SERVICE, keyringStore } from "../src/auth/keyring.ts";
import { type CredentialRecord, parseRecord, readRecord, serializeRecord, writeRecord } from "../src/auth/record.ts";
import { httpServer } from "./fixtures/oauth/config.ts";
import { shareLoaderCaches } from "./helpers/caches.ts";

const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;
const storeModule = new URL("../src/auth/keyring.ts", import.meta.url).href;
const authModule = new URL("../src/auth.ts", import.meta.url).href;
const recordModule = new URL("../src/auth/record.ts", import.meta.url).href;
const loginModule = new URL("../src/login/receiver.ts", import.meta.url).href;

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
	for (const cleanup of cleanups.reverse()) await cleanup();
});

before(() => {
	assert.ok(
		process.env.DBUS_SESSION_BUS_ADDRESS,
		"no session bus: run this file under the keyring wrapper: bash scripts/with-keyring.sh node --import tsx --test tests/store.test.ts",
	);
});

/** A fresh account name per test so runs never see each other's entries. */
const account = () => `test-${randomBytes(8).toString("hex")}`;

/** Runs an ES module snippet in a child Node (with tsx) and returns its stdout. */
async function child(code: string, env: NodeJS.ProcessEnv): Promise<string> {
	const { stdout } = await run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
		cwd: root,
		env,
		timeout: 30_000,
	});
	return stdout;
}

/**
 * Every regular file under `dir` written since `since` (ms) whose bytes contain `needle`. Bounded
 * in size and count; older files cannot hold a marker made during this test.
 */
async function filesContaining(dir: string, needle: string, since = 0, budget = { files: 50_000 }): Promise<string[]> {
	const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
	const found: string[] = [];
	for (const entry of entries) {
		if (budget.files-- <= 0) break;
		const path = join(dir, entry.name);
		if (entry.isDirectory()) found.push(...(await filesContaining(path, needle, since, budget)));
		else if (entry.isFile()) {
			const info = await stat(path).catch(() => undefined);
			if (!info || info.size > 4 * 1024 * 1024 || info.mtimeMs < since) continue;
			const bytes = await readFile(path).catch(() => undefined);
			if (bytes?.includes(needle)) found.push(path);
		}
	}
	return found;
}

async function kernelKeys(): Promise<string> {
	return readFile("/proc/keys", "utf8").catch(() => "");
}

describe("keyringStore (real Secret Service)", { timeout: 60_000 }, () => {
	test("set, get, delete round trip; visible to another process; nothing in the kernel keyring", async () => {
		const store = keyringStore();
		const name = account();
		const value = JSON.stringify({ access_token: `at-${randomBytes(6).toString("hex")}` });
		cleanups.push(() => store.delete(name).catch(() => false));
		assert.equal(await store.get(name), undefined);
		await store.set(name, value);
		assert.equal(await store.get(name), value);
		// Another process on the same bus reads it back: it lives in the Secret Service, not in memory.
		const seen = await child(
			`const { keyringStore } = await import(${JSON.stringify(storeModule)}); console.log(await keyringStore().get(${JSON.stringify(name)}));`,
			process.env,
		);
		assert.equal(seen.trim(), value);
		assert.equal((await kernelKeys()).includes(KEYRING_SERVICE), false, "nothing may land in the kernel keyring");
		assert.equal(await store.delete(name), true);
		assert.equal(await store.delete(name), false);
		assert.equal(await store.get(name), undefined);
	});

	test("many calls through one store open no connection each: the process's sockets stay bounded (the bus allows 256 per user)", async () => {
		const store = keyringStore();
		const name = account();
		cleanups.push(() => store.delete(name).catch(() => false));
		await store.set(name, "v");
		const sockets = () =>
			readdirSync("/proc/self/fd").filter((fd) => {
				try {
					return readlinkSync(`/proc/self/fd/${fd}`).startsWith("socket:");
				} catch {
					return false;
				}
			}).length;
		const before = sockets();
		for (let i = 0; i < 150; i++) assert.equal(await store.get(name), "v");
		await Promise.all(Array.from({ length: 20 }, () => store.get(name)));
		// An entry per call kept a connection open for each until a garbage collection: +150 here.
		assert.ok(sockets() - before <= 5, `${sockets() - before} sockets more after 170 reads`);
	});

	test("records: exactly the documented fields, versioned; foreign or broken records read as absent", async () => {
		const store = keyringStore();
		const name = account();
		cleanups.push(() => store.delete(name).catch(() => false));
		const record: CredentialRecord = {
			version: 1,
			tokens: {
				access_token: "at-record",
				token_type: "Bearer",
				refresh_token: "rt-record",
				scope: "mcp:tools",
				issuer: "http://127.0.0.1:1",
			},
			expiresAt: 1_900_000_000_000,
			issuedAt: 1_899_999_000_000,
			client: { client_id: "client-1", issuer: "http://127.0.0.1:1" },
			discovery: { authorizationServerUrl: "http://127.0.0.1:1" },
			issuer: "http://127.0.0.1:1",
			updatedAt: 1_800_000_000_000,
		};
		await writeRecord(store, name, record);
		const raw = await store.get(name);
		assert.deepEqual(Object.keys(JSON.parse(raw ?? "{}")), [
			"version",
			"tokens",
			"expiresAt",
			"issuedAt",
			"client",
			"discovery",
			"issuer",
			"updatedAt",
		]);
		assert.deepEqual(await readRecord(store, name), record);
		// Versions 1 and 2 (a record with a DPoP key) are read; any other is absent.
		assert.equal(parseRecord(JSON.stringify({ ...JSON.parse(serializeRecord(record)), version: 3 })), undefined);
		assert.equal(parseRecord("{not json"), undefined);
		assert.equal(parseRecord(JSON.stringify({ version: 1 })), undefined);
		assert.equal(parseRecord(undefined), undefined);
		// Extra fields are dropped on read, so they are never written back either.
		const extra = parseRecord(JSON.stringify({ ...record, codeVerifier: "v", other: 1 }));
		assert.deepEqual(extra, record);
	});
});

describe("keyring unavailable (child process without a session bus)", { timeout: 60_000 }, () => {
	test("every operation fails with KeyringUnavailable; nothing lands in files or the kernel keyring", async () => {
		const home = await mkdtemp(join(tmpdir(), "pi-mcp-home-"));
		const tmp = await mkdtemp(join(tmpdir(), "pi-mcp-tmp-"));
		cleanups.push(
			() => rm(home, { recursive: true, force: true }),
			() => rm(tmp, { recursive: true, force: true }),
		);
		const marker = `secret-marker-${randomBytes(12).toString("hex")}`;
		const started = Date.now() - 1000;
		await shareLoaderCaches(tmp);
		const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, TMPDIR: tmp, NODE_OPTIONS: "" };
		const code = `
			const { keyringStore } = await import(${JSON.stringify(storeModule)});
			const { writeRecord } = await import(${JSON.stringify(recordModule)});
			const store = keyringStore();
			const out = [];
			for (const [op, fn] of [
				["set", () => store.set("leak-check", ${JSON.stringify(marker)})],
				["record", () => writeRecord(store, "leak-check", { version: 1, tokens: { access_token: ${JSON.stringify(marker)}, token_type: "Bearer" }, updatedAt: 1 })],
				["get", () => store.get("leak-check")],
				["delete", () => store.delete("leak-check")],
			]) {
				try { await fn(); out.push(op + ": ok"); } catch (e) { out.push(op + ": " + e.name + ": " + e.message); }
			}
			console.log(JSON.stringify(out));`;
		const out = JSON.parse(await child(code, env)) as string[];
		assert.equal(out.length, 4);
		for (const line of out) {
			assert.match(line, /^(set|record|get|delete): KeyringUnavailable: the OS keyring \(Secret Service\) is unavailable/);
			assert.match(line, /never stores them in plain files/);
			assert.match(line, /DBUS_SESSION_BUS_ADDRESS/);
			assert.equal(line.includes(marker), false);
		}
		assert.deepEqual(await filesContaining(home, marker), []);
		assert.deepEqual(await filesContaining(tmp, marker), []);
		assert.deepEqual(await filesContaining(tmpdir(), marker, started), []);
		assert.equal((await kernelKeys()).includes(marker), false);
		assert.equal((await kernelKeys()).includes(KEYRING_SERVICE), false);
	});

	test("an OAuth server stops before any link or network request", async () => {
		const home = await mkdtemp(join(tmpdir(), "pi-mcp-home-"));
		cleanups.push(() => rm(home, { recursive: true, force: true }));
		await shareLoaderCaches(home);
		const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, TMPDIR: home, NODE_OPTIONS: "" };
		// The endpoint is a closed port: reaching the network would fail differently.
		const config = httpServer("remote", "http://127.0.0.1:9/mcp", { oauth: {} });
		const code = `
			const { createAuth } = await import(${JSON.stringify(authModule)});
			const { createLoginService } = await import(${JSON.stringify(loginModule)});
			const { keyringStore } = await import(${JSON.stringify(storeModule)});
			const login = createLoginService();
			const notes = [];
			const auth = createAuth({ env: {}, store: keyringStore(), login, notify: (s, m) => notes.push(m) });
			const result = {};
			try { await auth.prepare(${JSON.stringify(config)}); result.prepared = true; } catch (e) { result.error = e.name + ": " + e.message; }
			result.state = (await auth.credentialState(${JSON.stringify(config)})).text;
			result.pending = login.pending();
			result.notes = notes;
			await login.dispose();
			console.log(JSON.stringify(result));`;
		const result = JSON.parse(await child(code, env)) as { error?: string; state: string; pending: number; notes: string[] };
		assert.match(result.error ?? "", /^KeyringUnavailable: the OS keyring \(Secret Service\) is unavailable/);
		assert.equal(/https?:\/\//.test(result.error ?? ""), false, "no link");
		assert.equal(result.state, "keyring unavailable");
		assert.equal(result.pending, 0);
		assert.deepEqual(result.notes, []);
	});
});

describe("the suite's keyring (scripts/with-keyring.sh)", { timeout: 90_000 }, () => {
	test("after the Secret Service daemon dies, the one the bus starts in its place is unlocked: the store reads and writes again", async () => {
		// gnome-keyring-daemon can abort when many clients open sessions at once (an upstream race). On a
		// standard bus its replacement comes up locked and every later call waits on an unlock prompt.
		// This runs a private wrapper (its own bus and keyring), kills that keyring's daemon, and uses the
		// store again in the same process.
		const { DBUS_SESSION_BUS_ADDRESS: _outer, ...env } = process.env;
		const code = `
			const { readdirSync, readFileSync } = await import("node:fs");
			const { keyringStore } = await import(${JSON.stringify(storeModule)});
			const store = keyringStore();
			const bus = "DBUS_SESSION_BUS_ADDRESS=" + process.env.DBUS_SESSION_BUS_ADDRESS;
			const daemons = () => readdirSync("/proc").filter((pid) => /^\\d+$/.test(pid)).filter((pid) => {
				try {
					return readFileSync("/proc/" + pid + "/comm", "utf8").trim() === "gnome-keyring-d" &&
						readFileSync("/proc/" + pid + "/environ", "utf8").split("\\0").includes(bus);
				} catch { return false; }
			});
			const bounded = (promise) => Promise.race([promise.catch((e) => "error: " + e.message),
				new Promise((done) => setTimeout(() => done("no answer within 15 s"), 15_000).unref())]);
			const out = { values: [] };
			await store.set("crash-check", "before");
			out.values.push(await bounded(store.get("crash-check")));
			const killed = daemons();
			for (const pid of killed) process.kill(Number(pid), "SIGKILL");
			while (daemons().some((pid) => killed.includes(pid))) await new Promise((done) => setTimeout(done, 20));
			out.killed = killed.length;
			out.values.push(await bounded(store.get("crash-check")));
			out.values.push(await bounded(store.set("crash-check", "after").then(() => store.get("crash-check"))));
			out.restarted = daemons().filter((pid) => !killed.includes(pid)).length;
			console.log(JSON.stringify(out));
			process.exit(0);`;
		const { stdout } = await run(
			"bash",
			[join(root, "scripts/with-keyring.sh"), process.execPath, "--import", "tsx", "--input-type=module", "-e", code],
			{ cwd: root, env: { ...env, NODE_OPTIONS: "" }, timeout: 60_000 },
		);
		const out = JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as { values: string[]; killed: number; restarted: number };
		assert.equal(out.killed, 1, "the wrapper's own daemon was found and killed");
		assert.deepEqual(out.values, ["before", "before", "after"]);
		assert.equal(out.restarted, 1, "the bus started one daemon in its place");
	});
});
