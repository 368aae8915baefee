/**
 * Logout against a refresh in flight (#39, item 6), with real parts: oidc-provider, the real Secret Service,
 * and a real second process (tests/fixtures/refresh-worker.ts) whose refresh grant is held mid-flight. The
 * logout waits for the record's lock, so the refresh cannot write its new tokens after the removal.
 * Run under the wrapper (npm test does): bash scripts/with-keyring.sh node --import tsx --test tests/logout.test.ts
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { keyringStore } from "../src/auth/keyring.ts";
import { readRecord, recordAccount, writeRecord } from "../src/auth/record.ts";
import { createAuth } from "../src/auth.ts";
import { AuthorizationRequired } from "../src/errors.ts";
import { createLoginService } from "../src/login/receiver.ts";
// @ts-expect-error -- plain ESM fixture without types
import { browse } from "./fixtures/oauth/as.mjs";
import { httpServer } from "./fixtures/oauth/config.ts";
// @ts-expect-error -- plain ESM fixture without types
import { startProtectedMcp } from "./fixtures/oauth/rs.mjs";
import type { WorkerArgs } from "./fixtures/refresh-worker.ts";
import { startWorker, stopWorkers } from "./fixtures/workers.ts";

type Rs = { mcpUrl: URL; as: { events: { grants: string[] } }; close(): Promise<void> };

const store = keyringStore();
const state: { rs?: Rs; dir?: string; accounts: string[] } = { accounts: [] };
const cleanups: (() => Promise<unknown>)[] = [];

before(async () => {
	assert.ok(process.env.DBUS_SESSION_BUS_ADDRESS, "no session bus: run under scripts/with-keyring.sh");
	state.rs = (await startProtectedMcp()) as Rs;
	state.dir = await mkdtemp(join(tmpdir(), "pi-mcp-logout-"));
});

after(async () => {
	await stopWorkers();
	for (const cleanup of cleanups.reverse()) await cleanup();
	for (const account of state.accounts) await store.delete(account).catch(() => false);
	await state.rs?.close();
	if (state.dir) await rm(state.dir, { recursive: true, force: true });
});

const rs = (): Rs => state.rs as Rs;
const lockDir = (): string => join(state.dir as string, "mcp-locks");

/** An auth in this process, like a Pi session, with the real keyring and the shared lock directory. */
function session() {
	const login = createLoginService({});
	const waiters: (() => void)[] = [];
	const auth = createAuth({
		env: {},
		store,
		login,
		lockDir: lockDir(),
		notify: () => {
			for (const wake of waiters.splice(0)) wake();
		},
	});
	cleanups.push(async () => {
		auth.dispose();
		await login.dispose();
	});
	return { auth, signedIn: () => new Promise<void>((resolve) => waiters.push(resolve)) };
}

describe("logout and a refresh in flight", { timeout: 300_000 }, () => {
	test("logout waits for the refresh holding the lock; afterwards there is no record, and nothing brings it back", async () => {
		const config = httpServer("logout-race", rs().mcpUrl.href, { oauth: {} });
		const account = recordAccount(config);
		state.accounts.push(account);
		const s = session();
		const link = await s.auth.prepare(config).then(
			() => assert.fail("expected a sign-in link"),
			(error: unknown) => error,
		);
		assert.ok(link instanceof AuthorizationRequired, String(link));
		const done = s.signedIn();
		await browse(link.url, { deliver: true });
		await done;
		const record = await readRecord(store, account);
		assert.ok(record?.tokens?.refresh_token, "signed in with a refresh token");
		await writeRecord(store, account, { ...record, expiresAt: Date.now() - 60_000 });

		// Another process refreshes; its refresh grant is held until "go".
		const args: WorkerArgs = { url: rs().mcpUrl.href, name: "logout-race", lockDir: lockDir(), gate: "stdin" };
		const holder = startWorker("tests/fixtures/refresh-worker.ts", []);
		holder.send(JSON.stringify(args));
		await holder.next("refreshing");

		const logout = s.auth.logout(config);
		// Not a speed check: without the lock, the removal is done well within this time.
		const early = await Promise.race([
			logout.then(
				() => "done",
				() => "done",
			),
			new Promise((resolve) => setTimeout(() => resolve("waiting"), 1000)),
		]);
		assert.equal(early, "waiting", "logout waits while a refresh holds the record's lock");

		holder.send("go");
		const refreshed = await holder.next("result");
		assert.equal(refreshed.ok, true, `the refresh itself completed: ${refreshed.error}: ${refreshed.message}`);
		assert.equal(await logout, true, "logout removed the record the refresh wrote");
		assert.equal(await store.get(account), undefined, "no record after the logout");
		assert.deepEqual(await readdir(lockDir()), [], "no lock left");

		// The next use asks to sign in again and stores nothing.
		const again = await session()
			.auth.prepare(config)
			.catch((error: unknown) => error);
		assert.ok(again instanceof AuthorizationRequired, String(again));
		assert.equal(await store.get(account), undefined);
	});
});
