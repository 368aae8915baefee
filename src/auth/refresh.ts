/**
 * Refreshes that never race. In this session one refresh per record at a time (concurrent callers
 * share the promise); across processes an exclusive lock file per record. Under the lock the
 * keyring record is read again: tokens another process rotated meanwhile are adopted instead of
 * redeeming a refresh token that is already spent (which makes the authorization server revoke
 * the whole grant). A logout removes the record under the same lock.
 */
import { join } from "node:path";
import { once } from "../async.ts";
import { type AuthorizationRequired, errorText, SetupFailed, type Words } from "../errors.ts";
import type { HttpServerConfig } from "../schema.ts";
import { acquireLock, ensurePrivateDir, LockBusy } from "../store.ts";
import { type AuthContext, rotated } from "./record.ts";

const LOCK_TIMEOUT_MS = 30_000;

export type RefreshOptions = Readonly<{
	/** Private directory for the lock files; defaults to `<agentDir>/mcp-locks` with Pi's agent directory. */
	lockDir?: string;
	/** How long a refresh waits for another process's lock; defaults to 30 000 ms. */
	lockTimeoutMs?: number;
}>;

/**
 * What a refresh needs of the sign-in (signin.ts's `runAuth`, wired by auth.ts): one `auth()` run
 * that refreshes with the stored refresh token (resolves to `undefined`) or ends at a link.
 */
export type Reauthorize = (
	config: HttpServerConfig,
	account: string,
	run: Readonly<{ reason: "expired"; signal: AbortSignal }>,
) => Promise<AuthorizationRequired | undefined>;

export type Refresh = ReturnType<typeof createRefresh>;

export function createRefresh(ctx: AuthContext, reauthorize: Reauthorize, options: RefreshOptions) {
	const lockTimeoutMs = options.lockTimeoutMs ?? LOCK_TIMEOUT_MS;
	const { clean, load, now } = ctx;

	/** Made once (again after a failure): Pi is imported only when no directory was given. */
	const lockDir = once(async (): Promise<string> => {
		const dir = options.lockDir ?? join((await import("@earendil-works/pi-coding-agent")).getAgentDir(), "mcp-locks");
		await ensurePrivateDir(dir);
		return dir;
	});

	/** The refresh lock was not obtained: who holds it, and what to do. */
	function lockFailure(config: HttpServerConfig, error: unknown, logout = false): Error {
		const name = config.name;
		const what = logout ? "the sign-in was not removed" : "the sign-in was not refreshed";
		const then = (words: Words) => (logout ? "sign out again" : `run ${words.reconnect(name)}`);
		const reason = !(error instanceof LockBusy)
			? `the refresh lock could not be taken (${errorText(error)}); the lock directory must be a directory of this user`
			: error.holder && error.alive !== false
				? `another process held the refresh lock for more than ${Math.round(lockTimeoutMs / 1000)} s: ${error.message}. If that process is stuck, resume or end it`
				: `the refresh lock was not released: ${error.message}. If no pi process is refreshing this sign-in, remove ${error.path}`;
		const say = (words: Words) => clean(config, `MCP server "${name}": ${what}: ${reason}; then ${then(words)}.`);
		return new SetupFailed(name, say(ctx.words), logout ? undefined : { kind: "reconnect", server: name }, say);
	}

	/**
	 * Refresh (at most one per record at a time in this session; concurrent callers share the
	 * promise). `seen` is the access token the caller saw expire or be rejected: a keyring record
	 * with another, fresh token is adopted instead of refreshing. When no refresh is possible, the
	 * link ends up thrown. `signal` bounds the keyring calls, the wait for the lock and the requests
	 * (the first caller's; concurrent callers share its outcome).
	 */
	function refresh(config: HttpServerConfig, account: string, seen: string | undefined, signal: AbortSignal): Promise<void> {
		const running = ctx.get(account).refreshing;
		if (running) return running;
		const started = refreshUnderLock(config, account, seen, signal).finally(() => {
			if (ctx.get(account).refreshing === started) ctx.set(account, { refreshing: undefined });
		});
		ctx.set(account, { refreshing: started });
		return started;
	}

	/** Runs `work` holding the record's lock (for a `logout`, a lock not taken says the sign-in stays). */
	async function underLock<T>(
		config: HttpServerConfig,
		account: string,
		bounds: Readonly<{ signal?: AbortSignal; logout?: boolean }>,
		work: () => Promise<T>,
	): Promise<T> {
		const { signal, logout } = bounds;
		const failure = (error: unknown) => lockFailure(config, error, logout);
		const path = join(await lockDir().catch((error: unknown) => Promise.reject(failure(error))), `${account}.lock`);
		const lock = await acquireLock(path, { timeoutMs: lockTimeoutMs, signal }).catch((error: unknown) =>
			Promise.reject(signal?.aborted ? error : failure(error)),
		);
		try {
			return await work();
		} finally {
			await lock.release();
		}
	}

	async function refreshUnderLock(
		config: HttpServerConfig,
		account: string,
		seen: string | undefined,
		signal: AbortSignal,
	): Promise<void> {
		// Rotated by another process already: no need to wait for the lock.
		if (rotated(await load(account, signal), seen, now())) return;
		await underLock(config, account, { signal }, async () => {
			// The previous holder may have rotated the tokens while this process waited: its refresh
			// token is then spent, and redeeming it again would revoke the grant. A record it removed
			// (a logout) has no refresh token left: the run below ends at a link and writes nothing.
			if (rotated(await load(account, signal), seen, now())) return;
			const link = await reauthorize(config, account, { reason: "expired", signal });
			if (link) throw link;
		});
	}

	/**
	 * Removes the record under its lock (#39): a refresh in flight finishes first, and none can write
	 * after the removal (the next one re-reads the record under the lock and finds none).
	 */
	function remove(config: HttpServerConfig, account: string): Promise<boolean> {
		return underLock(config, account, { logout: true }, () => ctx.store.delete(account));
	}

	return { refresh, remove };
}
