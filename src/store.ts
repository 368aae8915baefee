/**
 * The cross-process credential transaction lock: one exclusive lock file per credential record, so
 * that one refresh at a time redeems a record's refresh token across every Pi process and `pi-mcp`.
 * A lock file holds who holds it (pid, host, time, nonce), never a secret; the keyring itself is
 * `auth/keyring.ts`, and the refresh that runs under this lock is `auth/refresh.ts`.
 */
import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { chmod, lstat, mkdir, open, readFile, rename, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { once, sleep } from "./async.ts";
import { errorCode } from "./errors.ts";
import { parseJson } from "./json.ts";
import { exited, processStat } from "./proc.ts";
import { isObject } from "./schema.ts";

/*
 * Hand-written on purpose. `proper-lockfile` judges a lock only by the age of its directory (at
 * least 2 s, cannot be turned off) and then takes it: a holder that is merely stalled (SIGSTOP, a
 * debugger, swap, a sleeping laptop) loses the lock in the middle of a refresh, the next process
 * redeems the same rotating refresh token, and the authorization server revokes the grant. It also
 * records no pid or time, so a waiter cannot say who holds it. (`flock` via fs-ext needs a native
 * build per Node ABI and records no holder either.)
 *
 * Here: one file per record, created with O_CREAT|O_EXCL|O_NOFOLLOW (atomic on local file
 * systems; NFS is not supported), mode 0600 in a 0700 directory, holding only pid, host, creation
 * time, a random nonce, and on Linux the boot id and the holder's start time — never a secret. A
 * lock is never broken by age. Only a holder that is provably gone is reclaimed (same host name,
 * and: another boot, its pid gone, or that pid now a process that started at another time — a
 * reused pid, or a container's pid that means another process here), under a `.reclaim` guard so
 * that two reclaimers cannot both win.
 */

/**
 * Who holds a lock: the whole content of a lock file. `bootId` (/proc/sys/kernel/random/boot_id) and
 * `startTime` (field 22 of /proc/<pid>/stat, clock ticks since boot) are recorded where Linux's
 * /proc provides them; locks without them are judged by host and pid alone.
 */
export type LockOwner = Readonly<{
	pid: number;
	host: string;
	createdAt: string;
	nonce: string;
	bootId?: string;
	startTime?: number;
}>;

/** The lock stayed held until the deadline; `holder` is absent when the file was unreadable. */
export class LockBusy extends Error {
	override readonly name = "LockBusy";
	readonly path: string;
	readonly holder?: LockOwner;
	/** False when the holder provably no longer exists (its lock could not be reclaimed). */
	readonly alive?: boolean;
	constructor(path: string, holder: LockOwner | undefined, alive: boolean | undefined) {
		const who = holder
			? `pid ${holder.pid} on ${holder.host} since ${holder.createdAt}${alive === false ? " (that process no longer exists)" : ""}`
			: "an unknown holder";
		super(`lock ${path} is held by ${who}`);
		this.path = path;
		this.holder = holder;
		this.alive = alive;
	}
}

export type Lock = Readonly<{
	path: string;
	owner: LockOwner;
	/** This acquirer took the lock over from a dead holder. */
	reclaimed: boolean;
	/** Removes the lock file if it is still this lock's (idempotent). */
	release(): Promise<void>;
}>;

export type LockOptions = Readonly<{
	/** How long to wait for a live holder; defaults to 30 s. */
	timeoutMs?: number;
	/** Stops waiting (rejects with its reason) when it aborts. */
	signal?: AbortSignal;
}>;

const EXCLUSIVE = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;

const LOCKS = Symbol.for("pi-mcp.locks");

/**
 * Nonces of the locks this process holds. On `globalThis` because Pi loads extensions through jiti
 * without a module cache, so one process may run two copies of this module: a lock that one copy
 * holds must not look abandoned (this pid, an unknown nonce) to the other.
 */
function locksOfProcess(): Set<string> {
	const shared = globalThis as typeof globalThis & { [LOCKS]?: Set<string> };
	const found = shared[LOCKS];
	if (found) return found;
	const made = new Set<string>();
	shared[LOCKS] = made;
	return made;
}

const heldHere = locksOfProcess();

/** Creates `dir` (and parents) and makes sure it is a private directory of this user (0700). */
export async function ensurePrivateDir(dir: string): Promise<void> {
	await mkdir(dir, { recursive: true, mode: 0o700 });
	const info = await lstat(dir);
	if (!info.isDirectory()) throw new Error(`${dir} is not a directory`);
	if (typeof process.getuid === "function" && info.uid !== process.getuid()) throw new Error(`${dir} belongs to another user`);
	if ((info.mode & 0o077) !== 0) await chmod(dir, 0o700);
}

/** Creates `path` exclusively with `owner` as its content; false when it already exists. */
async function createExclusive(path: string, owner: LockOwner): Promise<boolean> {
	const handle = await open(path, EXCLUSIVE, 0o600).catch((error: unknown) => {
		if (errorCode(error) === "EEXIST") return undefined;
		throw error;
	});
	if (!handle) return false;
	try {
		await handle.writeFile(JSON.stringify(owner));
		await handle.sync();
	} catch (error) {
		await unlink(path).catch(() => undefined);
		throw error;
	} finally {
		await handle.close();
	}
	return true;
}

/** The owner recorded in `path`; `undefined` when it is missing, half-written or not a lock. */
export async function readLockOwner(path: string): Promise<LockOwner | undefined> {
	const text = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW)
		.then(async (handle) => {
			try {
				return await handle.readFile("utf8");
			} finally {
				await handle.close();
			}
		})
		.catch(() => undefined);
	const value = text === undefined ? undefined : parseJson(text);
	if (!isObject(value)) return undefined;
	const { pid, host, createdAt, nonce, bootId, startTime } = value;
	if (!Number.isSafeInteger(pid) || (pid as number) <= 0) return undefined;
	if (typeof host !== "string" || typeof createdAt !== "string" || typeof nonce !== "string") return undefined;
	return {
		pid: pid as number,
		host,
		createdAt,
		nonce,
		...(typeof bootId === "string" ? { bootId } : {}),
		...(Number.isSafeInteger(startTime) ? { startTime: startTime as number } : {}),
	};
}

/** This boot's id (Linux); `undefined` where there is none. */
const currentBootId = once(
	(): Promise<string | undefined> =>
		readFile("/proc/sys/kernel/random/boot_id", "utf8").then(
			(text) => text.trim() || undefined,
			() => undefined,
		),
);

/** What this process records about itself: pid, host and, on Linux, boot id and start time. */
async function selfIdentity(): Promise<Pick<LockOwner, "bootId" | "startTime">> {
	const [bootId, stat] = [await currentBootId(), processStat(process.pid)];
	return {
		...(bootId !== undefined ? { bootId } : {}),
		...(stat?.startTime !== undefined ? { startTime: stat.startTime } : {}),
	};
}

/**
 * False only when the holder provably no longer exists. It ran on this host (same host name) and:
 * it recorded another boot; or its pid is gone; or that pid is now a process that started at
 * another time (a reused pid, or a container with the same host name whose pid means another
 * process here); or the pid is this process's own but no lock of this process has that nonce.
 * `undefined` for another host name (cannot tell). Never judged by age.
 */
export async function lockOwnerAlive(owner: LockOwner): Promise<boolean | undefined> {
	if (owner.host !== hostname()) return undefined;
	const bootId = await currentBootId();
	if (owner.bootId !== undefined && bootId !== undefined && owner.bootId !== bootId) return false;
	if (owner.pid === process.pid) return heldHere.has(owner.nonce);
	try {
		process.kill(owner.pid, 0);
	} catch (error) {
		if (errorCode(error) !== "EPERM") return false;
	}
	const stat = processStat(owner.pid);
	// No /proc (another OS, or hidden by hidepid): the pid answered, so it counts as alive.
	if (stat === undefined) return true;
	if (owner.startTime !== undefined && stat.startTime !== undefined && owner.startTime !== stat.startTime) return false;
	return !exited(stat);
}

/**
 * Replaces the dead `holder`'s file at `path` with `owner`'s, atomically: only while holding the
 * `<path>.reclaim` guard, and only if `path` still holds the dead holder's nonce (nobody else can
 * change that: the dead do not release, and other reclaimers need the guard). A guard left by a
 * reclaimer that died is reclaimed the same way, a few levels deep at most.
 */
async function takeOver(path: string, holder: LockOwner, owner: LockOwner, depth = 0): Promise<boolean> {
	const guard = `${path}.reclaim`;
	if (!(await createExclusive(guard, owner))) {
		const other = await readLockOwner(guard);
		if (depth >= 2 || !other || (await lockOwnerAlive(other)) !== false) return false;
		if (!(await takeOver(guard, other, owner, depth + 1))) return false;
	}
	try {
		const current = await readLockOwner(path);
		if (!current || current.nonce !== holder.nonce || (await lockOwnerAlive(current)) !== false) return false;
		const staged = `${path}.${owner.nonce}.tmp`;
		if (!(await createExclusive(staged, owner))) return false;
		await rename(staged, path).catch(async (error: unknown) => {
			await unlink(staged).catch(() => undefined);
			throw error;
		});
		return true;
	} finally {
		await unlink(guard).catch(() => undefined);
	}
}

/**
 * Takes the lock at `path`, waiting with backoff (10 ms doubling to 250 ms, with jitter) while a
 * live holder has it; throws `LockBusy` naming the holder at the deadline.
 */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<Lock> {
	const deadline = Date.now() + (options.timeoutMs ?? 30_000);
	const nonce = randomUUID();
	const self = await selfIdentity();
	heldHere.add(nonce);
	const release = async () => {
		if ((await readLockOwner(path))?.nonce === nonce) await unlink(path).catch(() => undefined);
		heldHere.delete(nonce);
	};
	const attempt = async (delay: number): Promise<Lock> => {
		options.signal?.throwIfAborted();
		// Stamped per attempt: `createdAt` says since when the lock is held, not since when it was wanted.
		const owner: LockOwner = { pid: process.pid, host: hostname(), createdAt: new Date().toISOString(), nonce, ...self };
		if (await createExclusive(path, owner)) return { path, owner, reclaimed: false, release };
		const holder = await readLockOwner(path);
		const alive = holder ? await lockOwnerAlive(holder) : undefined;
		if (holder && alive === false && (await takeOver(path, holder, owner))) return { path, owner, reclaimed: true, release };
		const left = deadline - Date.now();
		if (left <= 0) throw new LockBusy(path, holder, alive);
		await sleep(Math.min(left, delay * (0.5 + Math.random())));
		return attempt(Math.min(delay * 2, 250));
	};
	try {
		return await attempt(10);
	} catch (error) {
		heldHere.delete(nonce);
		throw error;
	}
}
