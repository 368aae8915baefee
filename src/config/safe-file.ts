/**
 * The file system side of an edit: where `mcp.json` really is (a symlink's target), reading it
 * bounded, one edit at a time per file, and writing it so that no reader ever sees half a file and
 * nothing but the file itself can change.
 *
 * - Reading opens first (O_NONBLOCK: a FIFO cannot hang the open) and judges the open file (fstat):
 *   a regular file of at most `MAX_FILE_BYTES`, else refused.
 * - Writing makes a temporary file beside the target with O_CREAT|O_EXCL|O_NOFOLLOW under a random
 *   name (a link planted at any name is never written through), syncs it and renames it over the
 *   target. A symlinked `mcp.json` (dotfiles) stays a link: its target is what gets replaced.
 * - Edits are serialised: in this process by one queue, in the order they were asked for (two quick
 *   toggles end as the last one says), across processes, per file, by the
 *   lock the caller passes (`LockWait.lock`: the shell and the extension pass the credential store's
 *   `acquireLock`, an exclusive lock file never broken by age, only taken from a holder that is
 *   provably gone; config/ may not import it, its floor is below store's chain) at `<file>.lock`;
 *   each edit re-reads the file under it.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, mkdir, open, readlink, realpath, rename, unlink } from "node:fs/promises";
import { basename, dirname, join, resolve, sep } from "node:path";
import { notAFile } from "../config.ts";
import { errorCode } from "../errors.ts";

/** Why a file could not be read or written; the caller words it as an edit error. */
export class FileRefused extends Error {}

/**
 * The file's text, or undefined when it does not exist. Refused (`FileRefused`) when it is not a
 * regular file or is larger than `maxBytes`; checked on the opened file, so a swap between a check
 * and the read changes nothing.
 */
export async function readBounded(path: string, maxBytes: number): Promise<string | undefined> {
	const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK).catch((error: unknown) => {
		if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") return undefined;
		throw new FileRefused(`${path}: cannot read (${String(errorCode(error) ?? (error as Error).message)})`);
	});
	if (!handle) return undefined;
	try {
		const info = await handle.stat();
		if (!info.isFile()) throw new FileRefused(`${path} ${notAFile(info)}`);
		if (info.size > maxBytes) throw new FileRefused(`${path} is larger than ${maxBytes} bytes`);
		const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1);
		const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
		if (bytesRead > maxBytes) throw new FileRefused(`${path} is larger than ${maxBytes} bytes`);
		return buffer.subarray(0, bytesRead).toString("utf8");
	} finally {
		await handle.close();
	}
}

/**
 * The file an edit of `path` changes: `path` itself, or the file a symlink at `path` leads to
 * (links followed, relative ones from the link's directory). A link to nowhere is refused: which
 * file it meant to create is not ours to guess. With `within` (a project's directory), a file that
 * really lies outside it (a link, or a linked `.pi` directory, that a repository may ship) is
 * refused: a project edit never changes another file, such as the user's own `mcp.json`.
 */
export async function editTarget(path: string, within?: string): Promise<string> {
	const info = await lstat(path).catch(() => undefined);
	const linked = info?.isSymbolicLink() === true;
	const target = linked
		? await realpath(path).catch(async (error: unknown) => {
				const to = await readlink(path).catch(() => "?");
				throw new FileRefused(
					`${path} is a symbolic link to ${resolve(dirname(path), to)}, which cannot be opened (${String(errorCode(error))}); nothing was changed`,
				);
			})
		: path;
	if (within === undefined) return target;
	const real = linked ? target : join(await realpath(dirname(path)).catch(() => dirname(path)), basename(path));
	const root = await realpath(within).catch(() => within);
	if (!real.startsWith(`${root}${sep}`)) {
		throw new FileRefused(`${path} leads outside the project, to ${real}; edit that file itself; nothing was changed`);
	}
	return target;
}

/**
 * Writes `text` to `target` through an exclusive temporary file and a rename; the mode is kept (0600 when
 * new) unless `fixedMode` is given.
 */
export async function writeExclusive(target: string, text: string, fixedMode?: number): Promise<void> {
	const dir = dirname(target);
	await mkdir(dir, { recursive: true });
	const existing = await lstat(target).catch(() => undefined);
	const mode = fixedMode ?? (existing?.isFile() ? existing.mode & 0o777 : 0o600);
	const temporary = join(dir, `.${basename(target)}.${randomBytes(12).toString("hex")}.tmp`);
	const flags = constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_WRONLY;
	const handle = await open(temporary, flags, mode);
	try {
		try {
			await handle.writeFile(text);
			await handle.chmod(mode); // the umask may have narrowed it
			await handle.sync();
		} finally {
			await handle.close();
		}
		await rename(temporary, target);
	} catch (error) {
		await unlink(temporary).catch(() => undefined);
		throw error;
	}
	// The rename is durable once the directory is synced; some file systems refuse to open one: best effort.
	const directory = await open(dir, constants.O_RDONLY).catch(() => undefined);
	await directory
		?.sync()
		.catch(() => undefined)
		.finally(() => directory.close());
}

/** This process's edits, one after another in the order asked (any file: edits are rare and quick). */
class EditQueue {
	#tail: Promise<unknown> = Promise.resolve();

	run<T>(work: () => Promise<T>): Promise<T> {
		const next = this.#tail.then(work, work);
		this.#tail = next.catch(() => undefined);
		return next;
	}
}

const queue = new EditQueue();

/** Runs `work` after every edit this process asked for before it has ended. */
export function inTurn<T>(work: () => Promise<T>): Promise<T> {
	return queue.run(work);
}

/** A cross-process lock such as `store.ts`'s `acquireLock`: rejects with a `LockBusy` (by name) at its deadline. */
export type CrossProcessLock = (
	path: string,
	options: Readonly<{ timeoutMs?: number; signal?: AbortSignal }>,
) => Promise<Readonly<{ release: () => Promise<void> }>>;

export type LockWait = Readonly<{
	/** Serialises edits across processes; without it, only this process's edits are. */
	lock?: CrossProcessLock;
	signal?: AbortSignal;
	/** Told once when another process holds the file's lock and this edit waits for it. */
	onWait?: (message: string) => void;
	timeoutMs?: number;
}>;

/**
 * Runs `work` (which re-reads and writes `target`) holding `<target>.lock` across processes (call it
 * within `inTurn`). Something other than a lock file at that name (a planted link, a directory) is
 * refused rather than waited on.
 */
export async function exclusiveEdit<T>(target: string, work: () => Promise<T>, wait: LockWait = {}): Promise<T> {
	const lockPath = `${target}.lock`;
	const planted = await lstat(lockPath).catch(() => undefined);
	if (planted && !planted.isFile()) {
		throw new FileRefused(`${lockPath} ${notAFile(planted)} (not a lock pi-mcp made); remove it; nothing was changed`);
	}
	await mkdir(dirname(target), { recursive: true });
	const acquire = wait.lock;
	const lock = !acquire
		? undefined
		: await acquire(lockPath, { timeoutMs: 0, signal: wait.signal }).catch((error: unknown) => {
				const busy = error as { name?: unknown; holder?: { pid?: number } };
				if (busy.name !== "LockBusy") throw error;
				wait.onWait?.(`waiting for another edit of ${target} (pid ${busy.holder?.pid ?? "unknown"} holds ${lockPath})`);
				return acquire(lockPath, { timeoutMs: wait.timeoutMs ?? 30_000, signal: wait.signal });
			});
	try {
		wait.signal?.throwIfAborted();
		return await work();
	} finally {
		await lock?.release();
	}
}
