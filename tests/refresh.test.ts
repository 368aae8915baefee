/**
 * Refreshes that never race, against real parts: oidc-provider with refresh-token rotation and
 * reuse detection (a spent refresh token revokes the grant), the real Secret Service, and real
 * processes (tests/fixtures/refresh-worker.ts: per command a fresh auth with `keyringStore()`, the shared
 * lock directory, the SDK client with only the narrow AuthProvider, one `whoami`). A pool of four such
 * processes serves every test (four racing processes prove single flight as well as eight did: the race
 * is between processes, and the commands reach all four at once); only the SIGKILLed holder is extra.
 * A logout against a refresh in flight (#39) is here too: the same server, keyring and processes.
 * Run under the wrapper:
 *   bash scripts/with-keyring.sh node --import tsx --test tests/refresh.test.ts
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { keyringStore } from "../src/auth/keyring.ts";
import { type CredentialRecord, readRecord, recordAccount, writeRecord } from "../src/auth/record.ts";
import { createAuth } from "../src/auth.ts";
import type { Auth } from "../src/contracts.ts";
import { AuthorizationRequired, SetupFailed } from "../src/errors.ts";
import { createLoginService } from "../src/login/receiver.ts";
import type { ServerConfig } from "../src/schema.ts";
// @ts-expect-error -- plain ESM fixture without types
import { browse } from "./fixtures/oauth/as.mjs";
import { httpServer } from "./fixtures/oauth/config.ts";
// @ts-expect-error -- plain ESM fixture without types
import { startProtectedMcp } from "./fixtures/oauth/rs.mjs";
import type { WorkerArgs } from "./fixtures/refresh-worker.ts";
import { startWorker, stopWorkers, type Worker, type WorkerEvent } from "./fixtures/workers.ts";
import { seeded } from "./helpers/seed.ts";

type Events = { grants: string[]; revoked: string[]; errors: string[] };
type Rs = {
	mcpUrl: URL;
	as: { issuer: string; events: Events };
	tokensSeen: string[];
	schemesSeen: string[];
	close(): Promise<void>;
};

const WORKER = "tests/fixtures/refresh-worker.ts";
const store = keyringStore();
const POOL = 4;
const state: { rs?: Rs; agentDir?: string; lockDir?: string; accounts: string[]; pool: Worker[] } = { accounts: [], pool: [] };
const cleanups: (() => Promise<unknown>)[] = [];

before(async () => {
	assert.ok(
		process.env.DBUS_SESSION_BUS_ADDRESS,
		"no session bus: run under the keyring wrapper: bash scripts/with-keyring.sh node --import tsx --test tests/refresh.test.ts",
	);
	state.rs = (await startProtectedMcp()) as Rs;
	state.agentDir = await mkdtemp(join(tmpdir(), "pi-mcp-agent-"));
	state.lockDir = join(state.agentDir, "mcp-locks");
	state.pool = await started(POOL);
});

after(async () => {
	await stopWorkers();
	for (const cleanup of cleanups.reverse()) await cleanup();
	for (const account of state.accounts) await store.delete(account).catch(() => false);
	await state.rs?.close();
	if (state.agentDir) await rm(state.agentDir, { recursive: true, force: true });
});

const rs = (): Rs => state.rs as Rs;
const pool = (): Worker[] => state.pool;

/** `count` worker processes, loaded and waiting for commands. */
async function started(count: number): Promise<Worker[]> {
	const workers = Array.from({ length: count }, () => startWorker(WORKER, []));
	await Promise.all(workers.map((w) => w.next("up")));
	return workers;
}
const lockDir = (): string => state.lockDir as string;
const hash = (value: string | undefined) => (value ? createHash("sha256").update(value).digest("hex").slice(0, 16) : undefined);

/** What the authorization server did since `mark()`. */
function mark(server = rs()) {
	const events = server.as.events;
	const start = { grants: events.grants.length, revoked: events.revoked.length, errors: events.errors.length };
	return () => ({
		refreshGrants: events.grants.slice(start.grants).filter((grant) => grant === "refresh_token").length,
		grants: events.grants.slice(start.grants),
		revoked: events.revoked.slice(start.revoked),
		errors: events.errors.slice(start.errors),
	});
}

/** An auth in this process, like a Pi session, with the real keyring and the shared lock directory. */
function session(clock = { now: Date.now() }, locks = lockDir()) {
	const login = createLoginService({ now: () => clock.now });
	const notes: { message: string; ok: boolean }[] = [];
	const waiters: (() => void)[] = [];
	const auth = createAuth({
		env: {},
		store,
		login,
		now: () => clock.now,
		lockDir: locks,
		notify: (_server, message, ok) => {
			notes.push({ message, ok });
			for (const wake of waiters.splice(0)) wake();
		},
	});
	cleanups.push(async () => {
		auth.dispose();
		await login.dispose();
	});
	const signedIn = () => new Promise<void>((resolve) => waiters.push(resolve));
	return { auth, login, notes, clock, signedIn };
}

/** Signs `name` in through the real AS (headless browser) and returns its config and record. */
async function signIn(name: string, server = rs()): Promise<{ config: ServerConfig; account: string; record: CredentialRecord }> {
	const config = httpServer(name, server.mcpUrl.href, { oauth: {} });
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
	assert.equal(s.notes[0]?.ok, true, s.notes[0]?.message);
	const record = await readRecord(store, account);
	assert.ok(record?.tokens?.refresh_token, "signed in with a refresh token");
	return { config, account, record };
}

/** Marks the stored access token as expired (as if its lifetime had passed). */
async function expire(account: string): Promise<CredentialRecord> {
	const record = await readRecord(store, account);
	assert.ok(record);
	const expired = { ...record, expiresAt: Date.now() - 60_000 };
	await writeRecord(store, account, expired);
	return expired;
}

/** One command sent to a worker: its events are those from `from` on. */
type Job = Readonly<{ worker: Worker; from: number }>;

/** Sends `worker` the command to use server `name` once (the command is the go: the process is up). */
function run(worker: Worker, name: string, extra: Partial<WorkerArgs> = {}, server = rs()): Job {
	const from = worker.events.length;
	const args: WorkerArgs = { url: server.mcpUrl.href, name, lockDir: lockDir(), ...extra };
	worker.send(JSON.stringify(args));
	return { worker, from };
}

const resultOf = (job: Job, timeoutMs?: number) => job.worker.next("result", timeoutMs, job.from);
const refreshedIn = (job: Job) => job.worker.events.slice(job.from).some((e) => e.event === "refreshing");

/** Sends every worker its command at once; the jobs and their results, in order. */
async function together(name: string, extra: (i: number) => Partial<WorkerArgs>, server = rs(), workers = pool()) {
	const jobs = workers.map((w, i) => run(w, name, extra(i), server));
	return { jobs, results: await Promise.all(jobs.map((job) => resultOf(job, 120_000))) };
}

async function connect(config: ServerConfig, auth: Auth): Promise<Client> {
	const client = new Client({ name: "refresh-test", version: "0.0.0" }, { capabilities: {} });
	// As the runtime passes them: the narrow provider, and the DPoP fetch wrapper beside it.
	const provider = await auth.prepare(config);
	const signed = provider?.fetch ? { fetch: provider.fetch(fetch) } : {};
	await client.connect(new StreamableHTTPClientTransport(new URL(config.url as string), { authProvider: provider, ...signed }));
	cleanups.push(() => client.close().catch(() => undefined));
	return client;
}

async function whoami(client: Client): Promise<string | undefined> {
	const result = (await client.callTool({ name: "whoami", arguments: {} })) as { content: { text: string }[] };
	return (JSON.parse(result.content[0]?.text ?? "{}") as { sub?: string }).sub;
}

async function lockFiles(): Promise<string[]> {
	return readdir(lockDir()).catch(() => []);
}

/** A random gap between steps, to vary the interleaving (seeded: see helpers/seed.ts). */
const jitter = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** All results succeeded as alice, with one and the same token, and nobody got a sign-in link. */
function assertAllSucceeded(results: WorkerEvent[], record: CredentialRecord | undefined): void {
	for (const result of results) {
		assert.equal(result.ok, true, `worker ${result.pid} failed: ${result.error}: ${result.message}`);
		assert.equal(result.sub, "alice");
		assert.equal(result.pending, 0, "nobody was asked to sign in");
		assert.equal(result.token, hash(record?.tokens?.access_token), "every process used the stored token");
	}
}

/**
 * The outcome every race must end in: one refresh grant reached the server, nothing was revoked or failed, every
 * process succeeded with the stored token, and no lock, guard or staging file is left.
 */
async function assertOneRefresh(
	seen: ReturnType<ReturnType<typeof mark>>,
	results: WorkerEvent[],
	account: string,
	label = "",
): Promise<void> {
	assert.equal(seen.refreshGrants, 1, `${label}${JSON.stringify(seen)}`);
	assert.deepEqual(seen.revoked, []);
	assert.deepEqual(seen.errors, []);
	assertAllSucceeded(results, await readRecord(store, account));
	assert.deepEqual(await lockFiles(), [], "no lock, guard or staging file left");
}

describe("cross-process refresh", { timeout: 600_000 }, () => {
	test("4 processes with one expired record call at once: one refresh grant, all succeed, grant intact", async () => {
		const { account, record: signed } = await signIn("eight");
		const expired = await expire(account);
		const since = mark();
		const { jobs, results } = await together("eight", () => ({}));
		const seen = since();
		const stored = await readRecord(store, account);
		assert.equal(seen.refreshGrants, 1, JSON.stringify(seen));
		assert.deepEqual(seen.revoked, [], "the grant was not revoked");
		assert.deepEqual(seen.errors, []);
		assert.notEqual(stored?.tokens?.refresh_token, expired.tokens?.refresh_token, "rotated");
		assert.notEqual(stored?.tokens?.refresh_token, signed.tokens?.refresh_token);
		assertAllSucceeded(results, stored);
		assert.equal(jobs.filter(refreshedIn).length, 1, "one process refreshed");
		assert.deepEqual(await lockFiles(), [], "no lock file left");
	});

	test("tokens valid 10 s: 4 processes make exactly one refresh grant (a token just received is never expired)", async () => {
		// With a fixed 30 s margin a 10 s token counts as expired the moment it arrives: every process
		// and every request refreshed again. The margin is min(30 s, a quarter of the lifetime).
		const short = (await startProtectedMcp({ accessTokenTTL: 10 })) as Rs;
		cleanups.push(() => short.close());
		const { account } = await signIn("short-lived", short);
		await expire(account);
		const since = mark(short);
		const { results } = await together("short-lived", () => ({}), short);
		const seen = since();
		await assertOneRefresh(seen, results, account);
	});

	test("the same with the processes released in a random order, with random gaps", async (t) => {
		const { seed, random, shuffle } = seeded();
		t.diagnostic(`jitter seed ${seed}; PI_MCP_TEST_SEED=${seed} replays this order`);
		const { account } = await signIn("shuffled");
		for (const round of [1, 2]) {
			await expire(account);
			const since = mark();
			const jobs: Job[] = [];
			// Jitter on purpose (not a wait for something): releases spread over varied gaps.
			for (const w of shuffle([...pool()])) {
				jobs.push(run(w, "shuffled"));
				await jitter(random() * 40);
			}
			const results = await Promise.all(jobs.map((job) => resultOf(job)));
			const seen = since();
			await assertOneRefresh(seen, results, account, `round ${round} (seed ${seed}): `);
		}
	});

	test("negative control: 4 processes that do not share a lock directory trigger reuse detection", async () => {
		const { account } = await signIn("unshared");
		await expire(account);
		const since = mark();
		// Each holds its refresh grant until all four have read the same refresh token: the reuse is certain,
		// however the machine's load spaces the processes.
		const workers = pool();
		const jobs = workers.map((w, i) =>
			run(w, "unshared", { gate: "stdin", lockDir: join(state.agentDir as string, `private-${i}`) }),
		);
		await Promise.all(jobs.map((job) => job.worker.next("refreshing", undefined, job.from)));
		for (const w of workers) w.send("go");
		const results = await Promise.all(jobs.map((job) => resultOf(job, 120_000)));
		const seen = since();
		const attempts = seen.refreshGrants + seen.errors.filter((error) => error.startsWith("refresh_token")).length;
		assert.ok(attempts > 1, `more than one refresh reached the server: ${JSON.stringify(seen)}`);
		assert.ok(seen.revoked.length > 0, `reuse detected and the grant revoked: ${JSON.stringify(seen)}`);
		assert.ok(
			results.some((result) => result.ok !== true),
			"some process lost its sign-in",
		);
	});

	test("a SIGSTOPped holder keeps the lock: the others wait, then fail naming its pid; after SIGCONT all complete", async () => {
		const { account, record } = await signIn("stalled");
		await expire(account);
		const since = mark();
		const [holder, ...others] = pool() as [Worker, Worker, Worker, Worker];
		const held = run(holder, "stalled", { gate: "stdin" });
		await holder.next("refreshing", undefined, held.from);
		const lockPath = join(lockDir(), `${account}.lock`);
		const lockText = await readFile(lockPath, "utf8");

		// What a lock file holds: pid, host, time and nonce; no secret; private modes.
		assert.equal((await stat(lockDir())).mode & 0o777, 0o700);
		assert.equal((await stat(lockPath)).mode & 0o777, 0o600);
		const owner = JSON.parse(lockText);
		assert.deepEqual(Object.keys(owner), ["pid", "host", "createdAt", "nonce", "bootId", "startTime"]);
		assert.equal(owner.pid, holder.pid);
		assert.equal(owner.host, hostname());
		const stored = await readRecord(store, account);
		for (const secret of [record.tokens?.access_token, record.tokens?.refresh_token, stored?.tokens?.refresh_token]) {
			assert.ok(secret && secret.length > 10);
			assert.equal(lockText.includes(secret), false, "no token in the lock file");
		}

		process.kill(holder.pid, "SIGSTOP");
		const impatient = others.slice(0, 2).map((w) => run(w, "stalled", { lockTimeoutMs: 2000 }));
		const patient = others.slice(2).map((w) => run(w, "stalled", { lockTimeoutMs: 60_000 }));
		const failures = await Promise.all(impatient.map((job) => resultOf(job)));
		for (const failure of failures) {
			assert.equal(failure.ok, false);
			assert.equal(failure.error, "SetupFailed");
			assert.equal(failure.link, false, "no sign-in link");
			assert.match(
				String(failure.message),
				new RegExp(
					`^MCP server "stalled": the sign-in was not refreshed: another process held the refresh lock for more than 2 s: ` +
						`lock \\S+${account}\\.lock is held by pid ${holder.pid} on ${hostname()} since ${owner.createdAt}\\. ` +
						"If that process is stuck, resume or end it; then run /mcp reconnect stalled\\.$",
				),
			);
		}
		assert.equal(await readFile(lockPath, "utf8"), lockText, "nothing stolen");
		assert.equal(
			patient.some((job) => job.worker.events.slice(job.from).some((e) => e.event === "result")),
			false,
			"the patient ones still wait",
		);
		assert.equal(since().refreshGrants, 0);

		process.kill(holder.pid, "SIGCONT");
		holder.send("go");
		const results = await Promise.all([held, ...patient].map((job) => resultOf(job)));
		const seen = since();
		await assertOneRefresh(seen, results, account);
	});

	test("a holder SIGKILLed mid-refresh: its lock is reclaimed and exactly one process refreshes", async () => {
		const { account } = await signIn("killed");
		await expire(account);
		const since = mark();
		// The one process started for one test: it dies here. The pool then races for its lock.
		const holder = (await started(1))[0] as Worker;
		const held = run(holder, "killed", { gate: "forever" });
		await holder.next("refreshing", undefined, held.from);
		holder.child.kill("SIGKILL");
		await holder.exited;
		const lockPath = join(lockDir(), `${account}.lock`);
		assert.equal(JSON.parse(await readFile(lockPath, "utf8")).pid, holder.pid, "the dead holder's lock is left behind");
		// Without the reclaim they would all fail with the dead holder's pid after the timeout.
		const { jobs, results } = await together("killed", () => ({ lockTimeoutMs: 60_000 }));
		const seen = since();
		assert.equal(jobs.filter(refreshedIn).length, 1);
		await assertOneRefresh(seen, results, account);
	});
});

describe("adopting rotated tokens in a session", { timeout: 300_000 }, () => {
	test("a session whose token expired in memory adopts the one another process rotated, without refreshing", async () => {
		const { config, account } = await signIn("adopt-expired");
		// The session loaded a token that it will see expire (40 s left of a 40 s lifetime: margin 10 s).
		const current = await readRecord(store, account);
		assert.ok(current);
		await writeRecord(store, account, { ...current, expiresAt: Date.now() + 40_000, issuedAt: Date.now() });
		const s = session();
		const client = await connect(config, s.auth);
		assert.equal(await whoami(client), "alice");
		// Another process refreshes (for it the token has expired).
		await expire(account);
		const since = mark();
		assert.equal((await resultOf(run(pool()[0] as Worker, "adopt-expired"))).ok, true);
		assert.equal(since().refreshGrants, 1);
		const rotated = await readRecord(store, account);
		// Later, this session's token has expired too: it adopts the rotated one.
		s.clock.now += 35_000;
		assert.equal(await whoami(client), "alice");
		const seen = since();
		assert.equal(seen.refreshGrants, 1, `no second refresh: ${JSON.stringify(seen)}`);
		assert.deepEqual(seen.revoked, []);
		assert.equal(rs().tokensSeen.at(-1), rotated?.tokens?.access_token, "the call used the rotated token");
		assert.equal((await readRecord(store, account))?.tokens?.refresh_token, rotated?.tokens?.refresh_token);
		assert.deepEqual(await lockFiles(), []);
	});

	test("a 401 on a token believed valid re-reads the keyring and adopts the rotated token, without refreshing", async () => {
		const { config, account } = await signIn("adopt-401");
		const current = await readRecord(store, account);
		assert.ok(current?.tokens);
		// The session holds a token the server rejects but believes valid (not expired).
		await writeRecord(store, account, { ...current, tokens: { ...current.tokens, access_token: "rejected-by-the-server" } });
		const s = session();
		const provider = await s.auth.prepare(config);
		assert.equal(await provider?.token(), "rejected-by-the-server");
		// Another process rotates the tokens.
		await expire(account);
		const since = mark();
		assert.equal((await resultOf(run(pool()[0] as Worker, "adopt-401"))).ok, true);
		assert.equal(since().refreshGrants, 1);
		const rotated = await readRecord(store, account);
		const client = new Client({ name: "refresh-test", version: "0.0.0" }, { capabilities: {} });
		await client.connect(new StreamableHTTPClientTransport(new URL(config.url as string), { authProvider: provider }));
		cleanups.push(() => client.close().catch(() => undefined));
		assert.equal(await whoami(client), "alice");
		const seen = since();
		assert.equal(seen.refreshGrants, 1, `no second refresh: ${JSON.stringify(seen)}`);
		assert.deepEqual(seen.revoked, []);
		assert.ok(rs().tokensSeen.includes("rejected-by-the-server"), "the stale token was sent and rejected first");
		assert.equal(await provider?.token(), rotated?.tokens?.access_token);
	});

	test("in one session, concurrent callers share one refresh", async () => {
		const { config, account } = await signIn("single-flight");
		await expire(account);
		const since = mark();
		const s = session();
		const providers = await Promise.all(Array.from({ length: 6 }, () => s.auth.prepare(config)));
		const tokens = await Promise.all(providers.map((provider) => provider?.token()));
		assert.equal(new Set(tokens).size, 1);
		assert.equal(since().refreshGrants, 1);
		assert.equal(tokens[0], (await readRecord(store, account))?.tokens?.access_token);
		assert.deepEqual(await lockFiles(), []);
	});

	test("no lock, no refresh: an unusable lock directory fails clearly and leaves the record alone", async () => {
		const { config, account } = await signIn("nolockdir");
		const expired = await expire(account);
		const notADir = join(state.agentDir as string, "not-a-directory");
		await writeFile(notADir, "");
		const since = mark();
		const s = session(undefined, notADir);
		const error = await s.auth.prepare(config).then(
			() => assert.fail("expected a failure"),
			(e: unknown) => e,
		);
		assert.ok(error instanceof SetupFailed, String(error));
		assert.match(
			error.message,
			/^MCP server "nolockdir": the sign-in was not refreshed: the refresh lock could not be taken \(.*not-a-directory.*\); the lock directory must be a directory of this user; then run \/mcp reconnect nolockdir\.$/,
		);
		assert.equal(since().refreshGrants, 0);
		assert.deepEqual(await readRecord(store, account), expired);
		assert.equal(s.login.pending(), 0);
	});

	test("a refresh the server rejects (invalid_grant) ends in AuthRequired with a new link, tried once", async () => {
		const { config, account } = await signIn("rejected");
		const old = await expire(account);
		// Spend the refresh token, then put the record with the spent one back.
		const first = session();
		await first.auth.prepare(config);
		await writeRecord(store, account, old);
		const since = mark();
		const s = session();
		const link = await s.auth.prepare(config).then(
			() => assert.fail("expected a sign-in link"),
			(error: unknown) => error,
		);
		assert.ok(link instanceof AuthorizationRequired, String(link));
		assert.match(link.message, /^The sign-in to MCP server "rejected" has expired or was revoked\./);
		const seen = since();
		assert.equal(seen.refreshGrants, 0);
		assert.equal(seen.errors.length, 1, `one refresh attempt, no retry: ${JSON.stringify(seen)}`);
		assert.match(seen.errors[0] ?? "", /^refresh_token: invalid_grant/);
		assert.equal((await readRecord(store, account))?.tokens, undefined, "the dead tokens are dropped");
		assert.equal(s.login.pending(), 1);
		assert.deepEqual(await lockFiles(), []);
	});
});

describe("logout and a refresh in flight (#39, item 6; was tests/logout.test.ts)", { timeout: 300_000 }, () => {
	test("logout waits for the refresh holding the lock; afterwards there is no record, and nothing brings it back", async () => {
		const { config, account } = await signIn("logout-race");
		await expire(account);
		// Another process refreshes; its refresh grant is held until the next line.
		const holder = pool()[0] as Worker;
		const held = run(holder, "logout-race", { gate: "stdin" });
		await holder.next("refreshing", undefined, held.from);

		const logout = session().auth.logout(config);
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
		const refreshed = await resultOf(held);
		assert.equal(refreshed.ok, true, `the refresh itself completed: ${refreshed.error}: ${refreshed.message}`);
		assert.equal(await logout, true, "logout removed the record the refresh wrote");
		assert.equal(await store.get(account), undefined, "no record after the logout");
		assert.deepEqual(await lockFiles(), [], "no lock left");

		// The next use asks to sign in again and stores nothing.
		const again = await session()
			.auth.prepare(config)
			.catch((error: unknown) => error);
		assert.ok(again instanceof AuthorizationRequired, String(again));
		assert.equal(await store.get(account), undefined);
	});
});

/** Every file under `dir` whose text contains `needle` (the key must be in none). */
async function filesHolding(dir: string, needle: string): Promise<string[]> {
	const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
	const found: string[] = [];
	for (const entry of entries) {
		const path = join(dir, String(entry));
		if (!(await stat(path)).isFile()) continue;
		if ((await readFile(path, "utf8")).includes(needle)) found.push(path);
	}
	return found;
}

describe("DPoP-bound tokens (RFC 9449)", { timeout: 300_000 }, () => {
	test("sign-in binds the tokens to a key kept only in the keyring record; two processes refresh with it under the lock; logout removes it", async () => {
		const bound = (await startProtectedMcp({ dpop: true })) as Rs;
		cleanups.push(() => bound.close());
		const { config, account, record } = await signIn("dpop", bound);
		const raw = JSON.parse((await store.get(account)) ?? "{}") as { version?: number };
		assert.equal(raw.version, 2, "a record holding a key is written as version 2");
		assert.equal(record.tokens?.token_type, "DPoP", "the authorization server bound the tokens");
		const key = record.dpop;
		assert.ok(key?.jwk.d && key.alg === "ES256", "an ES256 key in the record");

		// This process presents the token with the DPoP scheme and a proof (the RS checks both).
		const s = session();
		const client = await connect(config, s.auth);
		assert.equal(await whoami(client), "alice");
		assert.ok(bound.schemesSeen.length > 0 && bound.schemesSeen.every((scheme) => scheme === "DPoP"), bound.schemesSeen.join());
		const status = (await s.auth.credentialState(config)).text;
		assert.match(status, /^signed in \(expires in .*; DPoP-bound\)$/);

		// Two processes find it expired: one refreshes (its proof made with the stored key), the other adopts.
		await expire(account);
		const since = mark(bound);
		const workers = pool().slice(0, 2);
		const { results } = await together("dpop", () => ({}), bound, workers);
		const seen = since();
		const stored = await readRecord(store, account);
		assert.equal(seen.refreshGrants, 1, JSON.stringify(seen));
		assert.deepEqual(seen.errors, []);
		assert.deepEqual(seen.revoked, []);
		assertAllSucceeded(results, stored);
		assert.notEqual(stored?.tokens?.refresh_token, record.tokens?.refresh_token, "rotated");
		assert.equal(stored?.tokens?.token_type, "DPoP");
		assert.deepEqual(stored?.dpop, key, "the same key survives the refresh");
		assert.ok(
			bound.schemesSeen.every((scheme) => scheme === "DPoP"),
			"no bearer presentation",
		);

		// The private key is nowhere but in the keyring: no file, no output, no status, no error text.
		const d = key.jwk.d;
		assert.deepEqual(await filesHolding(state.agentDir as string, d), []);
		for (const w of workers) {
			assert.ok(!JSON.stringify(w.events).includes(d) && !w.stderr().includes(d), "not in a process's output");
		}
		assert.ok(!status.includes(d));
		assert.ok(s.auth.secrets().includes(d), "the sanitiser knows it: no message can show it");

		// A stolen token without the key is refused, and a bearer presentation too.
		const stolen = await fetch(bound.mcpUrl, {
			method: "POST",
			headers: { authorization: `Bearer ${stored?.tokens?.access_token}`, "content-type": "application/json" },
			body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
		});
		assert.equal(stolen.status, 401);
		await stolen.body?.cancel();

		assert.equal(await s.auth.logout(config), true);
		assert.equal(await store.get(account), undefined, "logout deleted the record and its key");
	});

	test("an authorization server that demands a DPoP nonce gets it: the token request is retried with it", async () => {
		const nonced = (await startProtectedMcp({ dpopNonce: true })) as Rs;
		cleanups.push(() => nonced.close());
		const since = mark(nonced);
		const { config, account, record } = await signIn("dpop-nonce", nonced);
		assert.equal(record.tokens?.token_type, "DPoP");
		assert.ok(
			since().errors.some((error) => /use_dpop_nonce/.test(error)),
			`the first proof had no nonce and was refused: ${JSON.stringify(since())}`,
		);
		await expire(account);
		const s = session();
		assert.equal(await whoami(await connect(config, s.auth)), "alice", "refreshed (with a nonce) and called");
		assert.equal(since().refreshGrants, 1);
		assert.ok(nonced.schemesSeen.every((scheme) => scheme === "DPoP"));
	});
});
