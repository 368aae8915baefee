/**
 * Secure records: OAuth credentials live in the OS keyring and nowhere else. On Linux the entry is
 * pinned to the Secret Service; `@napi-rs/keyring`'s default store silently falls back to the
 * kernel keyring (and leaks the secret there even when it throws), so the default is never used.
 * Every failure becomes `KeyringUnavailable`; there is no plaintext fallback.
 *
 * Also the cross-process lock that serialises refreshes of one record (see "Cross-process lock").
 */

import { createHash, randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { chmod, lstat, mkdir, open, readFile, rename, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import type { OAuthDiscoveryState, StoredOAuthClientInformation, StoredOAuthTokens } from "@modelcontextprotocol/client";
import type { ServerConfig } from "./config.ts";

/** The keyring service (namespace) every pi-mcp record is filed under. */
export const KEYRING_SERVICE = "app.prjct.pi-mcp";

/** Where secrets are kept. The default is the OS keyring; tests pass `memoryStore()`. */
export interface SecretStore {
	/** The value, or `undefined` when there is none. */
	get(account: string): Promise<string | undefined>;
	set(account: string, value: string): Promise<void>;
	/** True when something was deleted. */
	delete(account: string): Promise<boolean>;
}

/** The OS keyring cannot be used; nothing was stored anywhere else. */
export class KeyringUnavailable extends Error {
	override readonly name = "KeyringUnavailable";
	constructor(cause?: unknown) {
		super(
			"the OS keyring (Secret Service) is unavailable, so pi-mcp cannot read or store OAuth credentials " +
				"(it never stores them in plain files). Start a desktop session with a Secret Service provider " +
				"(GNOME Keyring, KWallet or KeePassXC) and unlock it; over SSH or in a container make sure " +
				"DBUS_SESSION_BUS_ADDRESS points at a session bus where one runs. Alternatively use a bearer " +
				'token ("bearerTokenEnv") for this server.',
			{ cause },
		);
	}
}

type KeyringModule = typeof import("@napi-rs/keyring");

const keyringHolder: { promise?: Promise<KeyringModule> } = {};

/** Loaded on first use only: registering the extension must not load native code. */
function loadKeyring(): Promise<KeyringModule> {
	keyringHolder.promise ??= import("@napi-rs/keyring");
	return keyringHolder.promise;
}

/** Pinned to the Secret Service on Linux; the option is ignored elsewhere. */
const ENTRY_OPTIONS = { linux: { store: "secret-service" as const } };

async function guarded<T>(action: (keyring: KeyringModule) => Promise<T>): Promise<T> {
	try {
		return await action(await loadKeyring());
	} catch (error) {
		throw new KeyringUnavailable(error);
	}
}

/** The OS keyring (Secret Service on Linux, Keychain on macOS, Credential Manager on Windows). */
export function keyringStore(service: string = KEYRING_SERVICE): SecretStore {
	const entry = (keyring: KeyringModule, account: string) => new keyring.AsyncEntry(service, account, ENTRY_OPTIONS);
	return {
		get: (account) => guarded(async (keyring) => (await entry(keyring, account).getPassword()) ?? undefined),
		set: (account, value) => guarded((keyring) => entry(keyring, account).setPassword(value)),
		delete: (account) => guarded((keyring) => entry(keyring, account).deleteCredential()),
	};
}

/** An in-process store for unit tests; never used by the product. */
export function memoryStore(initial: Readonly<Record<string, string>> = {}): SecretStore & { entries(): Map<string, string> } {
	const values = new Map(Object.entries(initial));
	return {
		get: async (account) => values.get(account),
		set: async (account, value) => {
			values.set(account, value);
		},
		delete: async (account) => values.delete(account),
		entries: () => new Map(values),
	};
}

/**
 * The keyring account of a server's record: a hash of everything that changes what the
 * credentials mean (server name, endpoint and the OAuth settings). Changing any of them starts
 * from a clean record instead of reusing tokens issued for something else.
 */
export function recordAccount(config: ServerConfig): string {
	const oauth = config.oauth;
	const identity = JSON.stringify([
		"pi-mcp/record/v1",
		config.name,
		config.url ?? "",
		oauth?.issuer ?? "",
		oauth?.clientId ?? "",
		oauth?.scope ?? "",
		oauth?.grantType ?? "authorization_code",
		oauth?.redirectUri ?? "",
	]);
	return createHash("sha256").update(identity).digest("hex");
}

/**
 * One server's credentials, stored as JSON under `recordAccount(config)`; nothing else is kept.
 *
 * - `version`: the record format. A reader treats a record of another version as absent (the
 *   next sign-in replaces it) and never rewrites parts of it.
 * - `tokens`: as the SDK saved them (access and refresh token, scope, issuer stamp).
 * - `expiresAt`: when the access token expires (epoch ms), computed from `expires_in` when the
 *   tokens were saved; absent when the server gave no lifetime.
 * - `client`: dynamically registered client information (absent for a pre-registered `clientId`).
 * - `discovery`: the SDK's discovery state (RFC 9728 and RFC 8414 metadata; public documents).
 * - `issuer`: the authorization server the tokens and the client are bound to.
 * - `updatedAt`: when the record was written (epoch ms). With the cross-process refresh lock, a
 *   refresher re-reads the record under the lock and, when `updatedAt` is newer than the copy it
 *   started from, adopts the rotated tokens instead of refreshing with a spent refresh token.
 */
export type CredentialRecord = Readonly<{
	version: 1;
	tokens?: StoredOAuthTokens;
	expiresAt?: number;
	client?: StoredOAuthClientInformation;
	discovery?: OAuthDiscoveryState;
	issuer?: string;
	updatedAt: number;
}>;

export const RECORD_VERSION = 1;

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Parses a stored record; anything unreadable or of another version counts as no record. */
export function parseRecord(text: string | undefined): CredentialRecord | undefined {
	if (text === undefined) return undefined;
	const value = ((): unknown => {
		try {
			return JSON.parse(text);
		} catch {
			return undefined;
		}
	})();
	if (!isObject(value) || value.version !== RECORD_VERSION || typeof value.updatedAt !== "number") return undefined;
	const tokens = isObject(value.tokens) && typeof value.tokens.access_token === "string" ? value.tokens : undefined;
	return {
		version: RECORD_VERSION,
		tokens: tokens as unknown as StoredOAuthTokens | undefined,
		expiresAt: typeof value.expiresAt === "number" ? value.expiresAt : undefined,
		client:
			isObject(value.client) && typeof value.client.client_id === "string"
				? (value.client as unknown as StoredOAuthClientInformation)
				: undefined,
		discovery:
			isObject(value.discovery) && typeof value.discovery.authorizationServerUrl === "string"
				? (value.discovery as unknown as OAuthDiscoveryState)
				: undefined,
		issuer: typeof value.issuer === "string" ? value.issuer : undefined,
		updatedAt: value.updatedAt,
	};
}

/** The JSON written to the keyring: exactly the record's fields, in a fixed order. */
export function serializeRecord(record: CredentialRecord): string {
	const { version, tokens, expiresAt, client, discovery, issuer, updatedAt } = record;
	return JSON.stringify({ version, tokens, expiresAt, client, discovery, issuer, updatedAt });
}

export async function readRecord(store: SecretStore, account: string): Promise<CredentialRecord | undefined> {
	return parseRecord(await store.get(account));
}

export async function writeRecord(store: SecretStore, account: string, record: CredentialRecord): Promise<void> {
	await store.set(account, serializeRecord(record));
}

// -------------------------------------------------------------------------------------------
// Cross-process lock

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
 * time and a random nonce — never a secret. A lock is never broken by age. Only a holder that is
 * provably dead (same host, its pid gone) is reclaimed, under a `.reclaim` guard so that two
 * reclaimers cannot both win.
 */

/** Who holds a lock: the whole content of a lock file. */
export type LockOwner = Readonly<{ pid: number; host: string; createdAt: string; nonce: string }>;

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
}>;

const EXCLUSIVE = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;

/** Nonces of the locks this process holds, shared by every copy of this module in the process. */
const heldHere = (() => {
	const slot = globalThis as unknown as Record<symbol, Set<string> | undefined>;
	const key = Symbol.for("pi-mcp.locks");
	slot[key] ??= new Set<string>();
	return slot[key];
})();

const errorCode = (error: unknown) => (error as { code?: unknown }).code;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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
	const value = ((): unknown => {
		try {
			return text === undefined ? undefined : JSON.parse(text);
		} catch {
			return undefined;
		}
	})();
	if (!isObject(value)) return undefined;
	const { pid, host, createdAt, nonce } = value;
	if (!Number.isSafeInteger(pid) || (pid as number) <= 0) return undefined;
	if (typeof host !== "string" || typeof createdAt !== "string" || typeof nonce !== "string") return undefined;
	return { pid: pid as number, host, createdAt, nonce };
}

/**
 * False only when the holder provably no longer exists: it ran on this host and its pid is gone,
 * or the pid is this process's own but no lock of this process has that nonce (a previous
 * process with the same pid, as in containers). `undefined` for another host (cannot tell).
 */
export async function lockOwnerAlive(owner: LockOwner): Promise<boolean | undefined> {
	if (owner.host !== hostname()) return undefined;
	if (owner.pid === process.pid) return heldHere.has(owner.nonce);
	try {
		process.kill(owner.pid, 0);
	} catch (error) {
		return errorCode(error) === "EPERM";
	}
	// A zombie (exited, not yet reaped by its parent) still answers signal 0 on Linux.
	const stat = await readFile(`/proc/${owner.pid}/stat`, "utf8").catch(() => "");
	const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
	return state !== "Z" && state !== "X";
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
	heldHere.add(nonce);
	const release = async () => {
		if ((await readLockOwner(path))?.nonce === nonce) await unlink(path).catch(() => undefined);
		heldHere.delete(nonce);
	};
	const attempt = async (delay: number): Promise<Lock> => {
		// Stamped per attempt: `createdAt` says since when the lock is held, not since when it was wanted.
		const owner: LockOwner = { pid: process.pid, host: hostname(), createdAt: new Date().toISOString(), nonce };
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
