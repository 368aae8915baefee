/**
 * The cross-process credential transaction lock: one exclusive lock file per credential record, so
 * that one refresh at a time redeems a record's refresh token across every Pi process and `pi-mcp`.
 * A lock file holds who holds it (pid, host, time, nonce), never a secret; the keyring itself is
 * `auth/keyring.ts`, and the refresh that runs under this lock is `auth/refresh.ts`.
 */
import { randomUUID } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { chmod, link, lstat, mkdir, open, readFile, rename, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { once, sleep } from "./async.ts";
import { errorCode } from "./errors.ts";
import { exited, processStat } from "./proc.ts";
import { isObject, parseJson } from "./schema.ts";

/*
 * Hand-written on purpose. `proper-lockfile` judges a lock only by the age of its directory (at
 * least 2 s, cannot be turned off) and then takes it: a holder that is merely stalled (SIGSTOP, a
 * debugger, swap, a sleeping laptop) loses the lock in the middle of a refresh, the next process
 * redeems the same rotating refresh token, and the authorization server revokes the grant. It also
 * records no pid or time, so a waiter cannot say who holds it. (`flock` via fs-ext needs a native
 * build per Node ABI and records no holder either.)
 *
 * Here: one file per record, created whole in one step (its content written to a temporary file
 * made with O_CREAT|O_EXCL|O_NOFOLLOW, then hard-linked to the lock's name, which fails if the name
 * exists: atomic on local file systems; NFS is not supported), mode 0600 in a 0700 directory, holding
 * only pid, host, creation time, a random nonce, and on Linux the boot id and the holder's start
 * time — never a secret. A readable lock is never broken by age. Only a holder that is provably gone
 * is reclaimed (same host name, and: another boot, its pid gone, or that pid now a process that
 * started at another time — a reused pid, or a container's pid that means another process here),
 * under a `.reclaim` guard so that two reclaimers cannot both win. A lock file no holder can have
 * left (empty or garbage: locks are never seen half-written) is abandoned once it is a minute old
 * (`UNREADABLE_ABANDONED_MS`); until then it is waited on, and the error names it and how to remove it.
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
		super(
			holder
				? `lock ${path} is held by pid ${holder.pid} on ${holder.host} since ${holder.createdAt}${alive === false ? " (that process no longer exists)" : ""}`
				: `lock ${path} is unreadable (empty, or not a lock pi-mcp made) and less than a minute old; if no pi-mcp is editing, remove it: rm ${JSON.stringify(path)} (a minute after its last change it counts as abandoned)`,
		);
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

/** How old an unreadable lock file (empty, garbage, not a file) must be to count as abandoned. */
const UNREADABLE_ABANDONED_MS = 60_000;

/**
 * A new private file beside `path` holding `owner`; its name. Removed again if writing fails. Not synced:
 * a lock matters only while its holder runs, and one emptied by a crash is abandoned a minute later.
 */
async function written(path: string, owner: LockOwner): Promise<string> {
	const temporary = `${path}.${randomUUID()}.tmp`;
	const handle = await open(temporary, EXCLUSIVE, 0o600);
	try {
		await handle.writeFile(JSON.stringify(owner));
	} catch (error) {
		await unlink(temporary).catch(() => undefined);
		throw error;
	} finally {
		await handle.close();
	}
	return temporary;
}

/**
 * Creates `path` with `owner` as its content in one step (a hard link to a written file: no reader
 * ever sees it empty); false when it already exists.
 */
async function createExclusive(path: string, owner: LockOwner): Promise<boolean> {
	// A held lock costs a waiter one lstat per attempt, not a file written and removed.
	if (
		await lstat(path).then(
			() => true,
			() => false,
		)
	)
		return false;
	const temporary = await written(path, owner);
	try {
		await link(temporary, path);
		return true;
	} catch (error) {
		if (errorCode(error) === "EEXIST") return false;
		throw error;
	} finally {
		await unlink(temporary).catch(() => undefined);
	}
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

/** Still true while `path` holds what made it abandoned; judged again under the `.reclaim` guard. */
type Abandoned = () => Promise<boolean>;

/**
 * Whether the lock at `path` is abandoned: its holder provably gone, or the file unreadable and a minute
 * old. Undefined when it is not (or is gone); else the check to repeat under the guard.
 */
async function abandoned(path: string, holder: LockOwner | undefined): Promise<Abandoned | undefined> {
	if (holder) {
		if ((await lockOwnerAlive(holder)) !== false) return undefined;
		return async () => {
			const current = await readLockOwner(path);
			return current?.nonce === holder.nonce && (await lockOwnerAlive(current)) === false;
		};
	}
	const seen = await lstat(path).catch(() => undefined);
	if (!seen || Date.now() - seen.mtimeMs < UNREADABLE_ABANDONED_MS) return undefined;
	const same = (now: Stats | undefined) => now?.ino === seen.ino && now.mtimeMs === seen.mtimeMs;
	return async () => same(await lstat(path).catch(() => undefined)) && (await readLockOwner(path)) === undefined;
}

/**
 * Replaces the abandoned lock at `path` with `owner`'s, atomically: only while holding the
 * `<path>.reclaim` guard, and only if `path` still holds what made it abandoned (nobody else can
 * change that: the dead do not release, and other reclaimers need the guard). An abandoned guard is
 * reclaimed the same way, a few levels deep at most.
 */
async function takeOver(path: string, still: Abandoned, owner: LockOwner, depth = 0): Promise<boolean> {
	const guard = `${path}.reclaim`;
	if (!(await createExclusive(guard, owner))) {
		const left = depth < 2 ? await abandoned(guard, await readLockOwner(guard)) : undefined;
		if (!left || !(await takeOver(guard, left, owner, depth + 1))) return false;
	}
	try {
		if (!(await still())) return false;
		const staged = await written(path, owner);
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
		const gone = await abandoned(path, holder);
		if (gone && (await takeOver(path, gone, owner))) return { path, owner, reclaimed: true, release };
		const alive = holder ? await lockOwnerAlive(holder) : undefined;
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
