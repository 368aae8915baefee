/**
 * The lock (`acquireLock` in src/store.ts) in one process (fast tier): what a lock file holds and its
 * modes, the private directory, links and garbage at the lock path, when a recorded holder counts as
 * alive (pid, boot, start time, host, nonce), and reclaimers racing for one dead lock. Real files in a
 * temporary directory, no child process: a dead holder is a pid no process has. The same lock across real
 * processes (a stalled holder, a killed one, racing reclaimers) is tests/lock.test.ts.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { acquireLock, ensurePrivateDir, type LockOwner, lockOwnerAlive, readLockOwner } from "../../src/store.ts";
import { busy } from "../helpers/lock.ts";

const state: { base?: string; count: number } = { count: 0 };

before(async () => {
	state.base = await mkdtemp(join(tmpdir(), "pi-mcp-lock-"));
});
after(async () => {
	if (state.base) await rm(state.base, { recursive: true, force: true });
});

/** A fresh private lock directory per test. */
async function lockDir(): Promise<string> {
	const dir = join(state.base as string, `locks-${state.count++}`, "mcp-locks");
	await ensurePrivateDir(dir);
	return dir;
}

/** A pid no process has (from the top of the pid range down, where pids are seldom handed out). */
function deadPid(): number {
	const max = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8"));
	for (let pid = max - 1; pid > 1; pid--) {
		try {
			process.kill(pid, 0);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === "ESRCH") return pid;
		}
	}
	throw new Error("no free pid");
}

function owner(pid: number, host = hostname(), extra: Partial<LockOwner> = {}): LockOwner {
	return { pid, host, createdAt: new Date(Date.now() - 3_600_000).toISOString(), nonce: randomUUID(), ...extra };
}

const bootId = () => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
const startTime = (pid: number) => {
	const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
	return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
};
/** What a live process would record: this boot, its real start time. */
const live = (pid: number): Partial<LockOwner> => ({ bootId: bootId(), startTime: startTime(pid) });

const unreadable = (path: string) =>
	`lock ${path} is unreadable (empty, or not a lock pi-mcp made) and less than a minute old; if no pi-mcp is editing, remove it: rm ${JSON.stringify(path)} (a minute after its last change it counts as abandoned)`;

describe("lock file", () => {
	test("exclusive create, mode 0600 in a 0700 directory, only pid/host/createdAt/nonce/bootId/startTime; release removes it", async () => {
		const dir = await lockDir();
		const path = join(dir, "record.lock");
		const lock = await acquireLock(path);
		assert.equal(lock.reclaimed, false);
		assert.equal((await stat(dir)).mode & 0o777, 0o700);
		assert.equal((await stat(path)).mode & 0o777, 0o600);
		const content = JSON.parse(await readFile(path, "utf8"));
		assert.deepEqual(Object.keys(content), ["pid", "host", "createdAt", "nonce", "bootId", "startTime"]);
		assert.equal(content.pid, process.pid);
		assert.equal(content.bootId, bootId());
		assert.equal(content.startTime, startTime(process.pid));
		assert.equal(content.host, hostname());
		assert.ok(Math.abs(Date.parse(content.createdAt) - Date.now()) < 10_000);
		assert.match(content.nonce, /^[0-9a-f-]{36}$/);
		assert.deepEqual(await readLockOwner(path), lock.owner);
		assert.equal(await lockOwnerAlive(lock.owner), true);
		// A second acquirer in the same process waits like any other, then names the holder.
		const error = await busy(acquireLock(path, { timeoutMs: 150 }));
		assert.equal(error.message, `lock ${path} is held by pid ${process.pid} on ${hostname()} since ${content.createdAt}`);
		assert.equal(error.alive, true);
		await lock.release();
		await lock.release();
		assert.deepEqual(await readdir(dir), []);
	});

	test("release never removes another holder's lock", async () => {
		const dir = await lockDir();
		const path = join(dir, "record.lock");
		const first = await acquireLock(path);
		await first.release();
		const second = await acquireLock(path);
		await first.release();
		assert.deepEqual(await readLockOwner(path), second.owner);
		await second.release();
		assert.deepEqual(await readdir(dir), []);
	});

	test("the private directory: created 0700, a looser one tightened, a symlink refused", async () => {
		const base = join(state.base as string, `dirs-${state.count++}`);
		await ensurePrivateDir(join(base, "a", "mcp-locks"));
		assert.equal((await stat(join(base, "a", "mcp-locks"))).mode & 0o777, 0o700);
		await mkdir(join(base, "loose"), { mode: 0o755 });
		await ensurePrivateDir(join(base, "loose"));
		assert.equal((await stat(join(base, "loose"))).mode & 0o777, 0o700);
		await symlink(join(base, "loose"), join(base, "link"));
		await assert.rejects(ensurePrivateDir(join(base, "link")), /is not a directory/);
	});

	test("a symlink at the lock path is never followed: busy while young, the target untouched", async () => {
		const dir = await lockDir();
		const target = join(state.base as string, `target-${state.count++}`);
		await writeFile(target, "precious");
		const path = join(dir, "record.lock");
		await symlink(target, path);
		const error = await busy(acquireLock(path, { timeoutMs: 100 }));
		assert.equal(error.message, unreadable(path));
		assert.equal(await readFile(target, "utf8"), "precious");
		assert.ok((await lstat(path)).isSymbolicLink());
	});

	test("a young empty or garbage lock is waited on, then named with how to remove it; never read as a holder", async () => {
		const dir = await lockDir();
		for (const content of ["", "not json {"]) {
			const path = join(dir, `record-${content.length}.lock`);
			await writeFile(path, content, { mode: 0o600 });
			const error = await busy(acquireLock(path, { timeoutMs: 100 }));
			assert.equal(error.holder, undefined);
			assert.equal(error.message, unreadable(path));
			assert.equal(await readFile(path, "utf8"), content);
		}
	});

	test("an empty or garbage lock (or .reclaim guard) a minute old is abandoned: taken over at once", async () => {
		const dir = await lockDir();
		const old = new Date(Date.now() - 61_000);
		for (const content of ["", "\u0000\u0001garbage"]) {
			const path = join(dir, `old-${content.length}.lock`);
			await writeFile(path, content, { mode: 0o600 });
			await utimes(path, old, old);
			const lock = await acquireLock(path, { timeoutMs: 0 });
			assert.equal(lock.reclaimed, true);
			assert.deepEqual(await readLockOwner(path), lock.owner);
			await lock.release();
		}
		// A reclaimer that died leaving garbage in the guard does not block reclaiming for good.
		const path = join(dir, "guarded.lock");
		await writeFile(path, "", { mode: 0o600 });
		await writeFile(`${path}.reclaim`, "garbage", { mode: 0o600 });
		await utimes(path, old, old);
		await utimes(`${path}.reclaim`, old, old);
		const lock = await acquireLock(path, { timeoutMs: 0 });
		assert.equal(lock.reclaimed, true);
		await lock.release();
		assert.deepEqual(await readdir(dir), []);
	});

	test("a holder on another host is never reclaimed (its pid means nothing here)", async () => {
		const dir = await lockDir();
		const path = join(dir, "record.lock");
		const remote = owner(deadPid(), "some-other-host");
		await writeFile(path, JSON.stringify(remote), { mode: 0o600 });
		const error = await busy(acquireLock(path, { timeoutMs: 100 }));
		assert.match(error.message, new RegExp(`held by pid ${remote.pid} on some-other-host since ${remote.createdAt}$`));
		assert.equal(error.alive, undefined);
		assert.deepEqual(await readLockOwner(path), remote);
	});

	test("an old lock of a live process is not stolen by age", async () => {
		const dir = await lockDir();
		const path = join(dir, "record.lock");
		// pid 1 is alive (and usually not ours to signal: EPERM still means alive).
		const ancient = { ...owner(1, hostname(), live(1)), createdAt: "2001-01-01T00:00:00.000Z" };
		await writeFile(path, JSON.stringify(ancient), { mode: 0o600 });
		const error = await busy(acquireLock(path, { timeoutMs: 200 }));
		assert.equal(error.alive, true);
		assert.deepEqual(await readLockOwner(path), ancient);
	});

	test("a reused pid: a live process that started later than the holder is not the holder: reclaimed", async () => {
		const dir = await lockDir();
		const path = join(dir, "record.lock");
		// The test runner (our parent) is alive; the recorded holder with that pid started earlier.
		const reused = owner(process.ppid, hostname(), { ...live(process.ppid), startTime: startTime(process.ppid) - 1 });
		await writeFile(path, JSON.stringify(reused), { mode: 0o600 });
		assert.equal(await lockOwnerAlive(reused), false);
		const lock = await acquireLock(path, { timeoutMs: 1000 });
		assert.equal(lock.reclaimed, true);
		await lock.release();
		assert.deepEqual(await readdir(dir), []);
	});

	test("a lock from a previous boot is reclaimed, even when a process with its pid and start time runs now", async () => {
		const dir = await lockDir();
		const path = join(dir, "record.lock");
		const previous = owner(process.ppid, hostname(), { ...live(process.ppid), bootId: "00000000-0000-4000-8000-000000000000" });
		await writeFile(path, JSON.stringify(previous), { mode: 0o600 });
		assert.equal(await lockOwnerAlive(previous), false);
		const lock = await acquireLock(path, { timeoutMs: 1000 });
		assert.equal(lock.reclaimed, true);
		await lock.release();
	});

	test("a container with the same host name: its holder's pid is another process here, never a live holder", async () => {
		const dir = await lockDir();
		const path = join(dir, "record.lock");
		// In its pid namespace the holder was pid 1; here pid 1 is init, which started at another time.
		const container = owner(1, hostname(), { ...live(1), startTime: startTime(1) + 987_654 });
		await writeFile(path, JSON.stringify(container), { mode: 0o600 });
		assert.equal(await lockOwnerAlive(container), false);
		const lock = await acquireLock(path, { timeoutMs: 1000 });
		assert.equal(lock.reclaimed, true);
		await lock.release();
	});

	test("a live holder with this boot and its start time is alive; a lock without them (older version) is judged by pid", async () => {
		assert.equal(await lockOwnerAlive(owner(process.ppid, hostname(), live(process.ppid))), true);
		assert.equal(await lockOwnerAlive(owner(process.ppid)), true);
		assert.equal(await lockOwnerAlive(owner(deadPid())), false);
	});

	test("a lock with this process's pid but a nonce it does not hold is a previous process's: reclaimed", async () => {
		const dir = await lockDir();
		const path = join(dir, "record.lock");
		await writeFile(path, JSON.stringify(owner(process.pid)), { mode: 0o600 });
		const lock = await acquireLock(path, { timeoutMs: 1000 });
		assert.equal(lock.reclaimed, true);
		await lock.release();
		assert.deepEqual(await readdir(dir), []);
	});
});

describe("reclaim races in one process", () => {
	test("two acquirers reclaiming the same dead lock at once, 200 times: exactly one reclaims each time", async () => {
		const dir = await lockDir();
		const pid = deadPid();
		for (const round of Array.from({ length: 200 }, (_, i) => i)) {
			const path = join(dir, `r${round}.lock`);
			await writeFile(path, JSON.stringify(owner(pid)), { mode: 0o600 });
			const inside = { count: 0, max: 0 };
			const contender = async () => {
				const lock = await acquireLock(path, { timeoutMs: 5000 });
				inside.count++;
				inside.max = Math.max(inside.max, inside.count);
				await new Promise((resolve) => setImmediate(resolve));
				inside.count--;
				await lock.release();
				return lock.reclaimed;
			};
			const results = await Promise.all([contender(), contender()]);
			assert.equal(results.filter(Boolean).length, 1, `round ${round}: ${results}`);
			assert.equal(inside.max, 1, `round ${round}: two holders at once`);
		}
		assert.deepEqual(await readdir(dir), []);
	});

	test("a reclaim guard left by a reclaimer that died is itself reclaimed", async () => {
		const dir = await lockDir();
		const path = join(dir, "record.lock");
		const pid = deadPid();
		await writeFile(path, JSON.stringify(owner(pid)), { mode: 0o600 });
		await writeFile(`${path}.reclaim`, JSON.stringify(owner(pid)), { mode: 0o600 });
		const lock = await acquireLock(path, { timeoutMs: 2000 });
		assert.equal(lock.reclaimed, true);
		await lock.release();
		assert.deepEqual(await readdir(dir), []);
	});

	test("a dead holder whose lock cannot be reclaimed (guard held by a live process) is named as dead", async () => {
		const dir = await lockDir();
		const path = join(dir, "record.lock");
		const dead = owner(deadPid());
		await writeFile(path, JSON.stringify(dead), { mode: 0o600 });
		await writeFile(`${path}.reclaim`, JSON.stringify(owner(1)), { mode: 0o600 });
		const error = await busy(acquireLock(path, { timeoutMs: 200 }));
		assert.equal(error.alive, false);
		assert.match(error.message, /\(that process no longer exists\)$/);
		assert.deepEqual(await readLockOwner(path), dead);
	});
});
