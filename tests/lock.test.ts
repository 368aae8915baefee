/**
 * The lock (`acquireLock` in src/store.ts) across real processes: exclusion of read-modify-write
 * increments, a stalled (SIGSTOPped) holder keeps its lock, a dead (SIGKILLed) holder's lock is
 * reclaimed, and reclaimers in separate processes racing for one dead lock. A pool of four processes
 * (tests/fixtures/lock-worker.ts) serves every test; only the holder that is killed is started apart.
 * What one process can show (the lock file, the private directory, liveness, races between acquirers
 * in one process) is the fast tier's tests/fast/lock-file.test.ts. No keyring needed.
 *   node --import tsx --test tests/lock.test.ts
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { acquireLock, ensurePrivateDir, type LockOwner, lockOwnerAlive, readLockOwner } from "../src/store.ts";
import type { LockCommand } from "./fixtures/lock-worker.ts";
import { startWorker, stopWorkers, type Worker } from "./fixtures/workers.ts";
import { busy } from "./helpers/lock.ts";

const WORKER = "tests/fixtures/lock-worker.ts";
const POOL = 4;
const state: { base?: string; count: number; pool: Worker[]; dead?: Promise<DeadLock> } = { count: 0, pool: [] };

before(async () => {
	state.base = await mkdtemp(join(tmpdir(), "pi-mcp-lock-"));
	state.pool = await started(POOL);
});
after(async () => {
	await stopWorkers();
	if (state.base) await rm(state.base, { recursive: true, force: true });
});

/** `count` worker processes, loaded and waiting for commands. */
async function started(count: number): Promise<Worker[]> {
	const workers = Array.from({ length: count }, () => startWorker(WORKER, []));
	await Promise.all(workers.map((w) => w.next("up")));
	return workers;
}

/** Sends `worker` a command; `next` waits for its events (those after the command was sent). */
function run(worker: Worker, command: LockCommand) {
	const from = worker.events.length;
	worker.send(JSON.stringify(command));
	return { worker, next: (name: string, timeoutMs?: number) => worker.next(name, timeoutMs, from) };
}

/** A fresh private lock directory per test. */
async function lockDir(): Promise<string> {
	const dir = join(state.base as string, `locks-${state.count++}`, "mcp-locks");
	await ensurePrivateDir(dir);
	return dir;
}

type DeadLock = Readonly<{ pid: number; text: string }>;

/** The lock file a holder left when it was SIGKILLed (one process, killed once for the whole file). */
function deadLock(): Promise<DeadLock> {
	state.dead ??= (async () => {
		const path = join(await lockDir(), "record.lock");
		const holder = (await started(1))[0] as Worker;
		await run(holder, { mode: "hold", path }).next("acquired");
		holder.child.kill("SIGKILL");
		await holder.exited;
		return { pid: holder.pid, text: await readFile(path, "utf8") };
	})();
	return state.dead;
}

describe("processes", { timeout: 300_000 }, () => {
	test("4 processes x 30 locked read-modify-write increments lose no update", async () => {
		const dir = await lockDir();
		const counter = join(state.base as string, `counter-${state.count++}`);
		const jobs = state.pool.map((w) =>
			run(w, { mode: "count", path: join(dir, "c.lock"), counter, times: 30, timeoutMs: 30_000 }),
		);
		for (const job of jobs) await job.next("done", 90_000);
		assert.equal(await readFile(counter, "utf8"), "120");
		assert.deepEqual(await readdir(dir), []);
	});

	test("a SIGSTOPped holder keeps its lock: a contender fails naming its pid; after SIGCONT it releases", async () => {
		const dir = await lockDir();
		const path = join(dir, "record.lock");
		const holder = state.pool[0] as Worker;
		const held = run(holder, { mode: "hold", path });
		const acquired = await held.next("acquired");
		const before = await readFile(path, "utf8");
		process.kill(holder.pid, "SIGSTOP");
		try {
			const started = Date.now();
			const error = await busy(acquireLock(path, { timeoutMs: 1500 }));
			assert.ok(Date.now() - started >= 1500, "waited the whole timeout");
			const createdAt = (acquired.owner as LockOwner).createdAt;
			assert.equal(error.message, `lock ${path} is held by pid ${holder.pid} on ${hostname()} since ${createdAt}`);
			assert.equal(error.alive, true);
			assert.equal(await readFile(path, "utf8"), before, "nothing stolen");
		} finally {
			process.kill(holder.pid, "SIGCONT");
		}
		const waiting = acquireLock(path, { timeoutMs: 10_000 });
		holder.send("release");
		await held.next("released");
		const lock = await waiting;
		assert.equal(lock.reclaimed, false);
		await lock.release();
		assert.deepEqual(await readdir(dir), []);
	});

	test("a SIGKILLed holder's lock is reclaimed by the next acquirer", async () => {
		const dead = await deadLock();
		const dir = await lockDir();
		const path = join(dir, "record.lock");
		await writeFile(path, dead.text, { mode: 0o600 });
		const owner = await readLockOwner(path);
		assert.equal(owner?.pid, dead.pid);
		assert.equal(await lockOwnerAlive(owner as LockOwner), false);
		const lock = await acquireLock(path, { timeoutMs: 5000 });
		assert.equal(lock.reclaimed, true);
		assert.equal((await stat(path)).mode & 0o777, 0o600);
		assert.deepEqual(await readLockOwner(path), lock.owner);
		await lock.release();
		assert.deepEqual(await readdir(dir), []);
	});

	/** `count` pool processes race for a dead holder's lock, released at once; their runs. */
	async function race(count: number): Promise<{ reclaimed: boolean; acquiredAt: number; releasedAt: number }[]> {
		const dead = await deadLock();
		const dir = await lockDir();
		const path = join(dir, "record.lock");
		await writeFile(path, dead.text, { mode: 0o600 });
		const jobs = state.pool.slice(0, count).map((w) => run(w, { mode: "race", path, holdMs: 150 }));
		const runs = [];
		for (const job of jobs) {
			const acquired = await job.next("acquired");
			const released = await job.next("released");
			await job.next("freed");
			runs.push({ reclaimed: acquired.reclaimed === true, acquiredAt: Number(acquired.at), releasedAt: Number(released.at) });
		}
		assert.deepEqual(await readdir(dir), [], "no lock, guard or staging file left");
		return runs;
	}

	function assertOneWinner(runs: { reclaimed: boolean; acquiredAt: number; releasedAt: number }[]): void {
		assert.equal(runs.filter((run) => run.reclaimed).length, 1, JSON.stringify(runs));
		const ordered = [...runs].sort((a, b) => a.acquiredAt - b.acquiredAt);
		for (const [i, run] of ordered.entries()) {
			const next = ordered[i + 1];
			if (next) assert.ok(next.acquiredAt >= run.releasedAt, `overlapping holders: ${JSON.stringify(ordered)}`);
		}
	}

	test("two reclaimers racing for the same dead lock: exactly one wins (5 rounds)", async () => {
		for (const _ of Array.from({ length: 5 })) assertOneWinner(await race(2));
	});

	test("four reclaimers racing for the same dead lock: exactly one wins", async () => {
		assertOneWinner(await race(4));
	});
});
