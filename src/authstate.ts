/**
 * What the auth modules share in one session: per server (keyed by its keyring account) one
 * readonly record, replaced whole, with the latest keyring record, the pending link, the refresh in
 * flight and the client-credentials provider; and every secret seen, for the sanitiser. `auth.ts`,
 * `signin.ts` and `refresh.ts` each own their fields and re-read the record after every `await`.
 */
import type { AuthProvider } from "@modelcontextprotocol/client";
import { awaitWith } from "./async.ts";
import { AuthRequired } from "./errors.ts";
import type { LoginService } from "./login.ts";
import type { ServerConfig } from "./schema.ts";
import type { Sdk } from "./sdk.lazy.ts";
import { type CredentialRecord, KeyringUnavailable, RECORD_VERSION, readRecord, type SecretStore, writeRecord } from "./store.ts";
import { sanitize } from "./text.ts";

export type Reason = "sign-in" | "expired" | "step-up" | "login";

/** A pending authorization link. */
export type Flow = Readonly<{ state: string; url: string; expiresAt: number; reason: Reason; scope?: string }>;

/** A client-credentials provider and the secret it was made with. */
export type Machine = Readonly<{ secret: string; provider: AuthProvider }>;

/** One server's auth state in this session. */
export type ServerAuth = Readonly<{
	/** Whether `record` was read from the keyring (it is authoritative in this process until re-read). */
	loaded: boolean;
	record?: CredentialRecord;
	flow?: Flow;
	refreshing?: Promise<void>;
	machine?: Machine;
}>;

export type RecordPatch = Partial<Omit<CredentialRecord, "version" | "updatedAt">>;

export type AuthContext = Readonly<{
	env: Readonly<Record<string, string | undefined>>;
	store: SecretStore;
	login: LoginService;
	now: () => number;
	clientName: string;
	notify: (server: string, message: string, ok: boolean) => void;
	loadSdk: () => Promise<Sdk>;
	/** The current state of an account (never a copy to keep across an `await`). */
	get(account: string): ServerAuth;
	/** Replaces some fields of an account's state (the record is replaced whole). */
	set(account: string, fields: Partial<ServerAuth>): void;
	/** Every account with state. */
	accounts(): readonly string[];
	forget(account?: string): void;
	remember(...values: readonly (string | undefined)[]): void;
	secrets(): readonly string[];
	/** `text` sanitised with the server's configured secrets and every secret seen. */
	clean(config: ServerConfig, text: string): string;
	/** Reads the keyring record (and remembers its secrets); gives up when `signal` aborts. */
	load(account: string, signal: AbortSignal): Promise<CredentialRecord | undefined>;
	/** Writes the record with `patch` applied; the in-memory copy changes only once it is stored. */
	update(account: string, patch: RecordPatch, signal: AbortSignal): Promise<void>;
}>;

export function createContext(
	base: Pick<AuthContext, "env" | "store" | "login" | "now" | "clientName" | "notify" | "loadSdk">,
): AuthContext {
	const table = new Map<string, ServerAuth>();
	const known = new Set<string>();
	const get = (account: string): ServerAuth => table.get(account) ?? { loaded: false };
	const set = (account: string, fields: Partial<ServerAuth>) => table.set(account, { ...get(account), ...fields });
	const remember = (...values: readonly (string | undefined)[]) => {
		for (const value of values) if (value && value.length >= 4) known.add(value);
	};
	const load = async (account: string, signal: AbortSignal) => {
		const record = await keyring(readRecord(base.store, account, signal), signal);
		const tokens = record?.tokens;
		remember(tokens?.access_token, tokens?.refresh_token, tokens?.id_token, record?.client?.client_secret);
		set(account, { loaded: true, record });
		return record;
	};
	return {
		...base,
		get,
		set,
		accounts: () => [...table.keys()],
		forget: (account) => (account === undefined ? table.clear() : table.delete(account)),
		remember,
		secrets: () => [...known],
		clean: (config, text) => sanitize(text, [...config.secretValues, ...known]),
		load,
		async update(account, patch, signal) {
			const current = get(account).loaded ? get(account).record : await load(account, signal);
			const next: CredentialRecord = { ...current, ...patch, version: RECORD_VERSION, updatedAt: base.now() };
			// The write itself is not cancelled: fresh tokens (a refresh token already rotated) must land
			// even when the caller stops waiting for them.
			await keyring(writeRecord(base.store, account, next), signal);
			set(account, { record: next });
		},
	};
}

/**
 * A keyring call bounded by `signal`. `@napi-rs/keyring`'s calls run on libuv's thread pool and
 * cannot be cancelled: a stuck D-Bus call or a keyring waiting to be unlocked keeps its thread, but
 * the caller stops waiting and gets `KeyringUnavailable` (or the signal's reason).
 */
export function keyring<T>(call: Promise<T>, signal: AbortSignal): Promise<T> {
	return awaitWith(call, signal, () =>
		signal.reason instanceof Error && signal.reason.name !== "TimeoutError"
			? signal.reason
			: new KeyringUnavailable(new Error("the keyring did not answer in time")),
	);
}

/** The caller's signal, or a deadline of the server's request timeout for work nobody waits on with one. */
export function deadline(config: ServerConfig, signal?: AbortSignal): AbortSignal {
	return signal ?? AbortSignal.timeout(config.requestTimeoutMs);
}

/**
 * A fetch for the SDK's `auth()` (discovery, registration, token requests) that stops when `signal`
 * aborts: an authorization server that accepts connections and never answers cannot hold a setup.
 */
export function fetchWith(signal: AbortSignal): (url: string | URL, init?: RequestInit) => Promise<Response> {
	return (url, init) => fetch(url, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal });
}

/** Tokens this close to expiry count as expired (at most; see `isStale`). */
const EXPIRY_SKEW_MS = 30_000;

export const expired = (record: CredentialRecord | undefined, now: number) => isStale(record?.expiresAt, now, record?.issuedAt);

export const usable = (record: CredentialRecord | undefined, now: number) =>
	record?.tokens?.access_token !== undefined && !expired(record, now);

/** Another process replaced the token the caller saw expire or fail, and the new one is fresh. */
export const rotated = (record: CredentialRecord | undefined, seen: string | undefined, now: number) =>
	usable(record, now) && record?.tokens?.access_token !== seen;

export function expiresAtOf(expiresIn: number | undefined, now: number): number | undefined {
	return expiresIn !== undefined ? now + expiresIn * 1000 : undefined;
}

/**
 * Whether a token expiring at `expiresAt` should be replaced now. The margin is 30 s, but at most a
 * quarter of the token's lifetime when it is known (`issuedAt`): a 10 s token would otherwise count
 * as expired the moment it arrives, and every request would refresh it again.
 */
export function isStale(expiresAt: number | undefined, now: number, issuedAt?: number): boolean {
	if (expiresAt === undefined) return false;
	const lifetime = issuedAt === undefined ? Number.POSITIVE_INFINITY : Math.max(0, expiresAt - issuedAt);
	return now >= expiresAt - Math.min(EXPIRY_SKEW_MS, lifetime / 4);
}

export function minutes(ms: number): string {
	if (ms < 60_000) return "less than a minute";
	const total = Math.round(ms / 60_000);
	if (total < 120) return `${total} min`;
	return `${Math.round(total / 60)} h`;
}

export function missingVariable(config: ServerConfig, field: string, variable: string | undefined): AuthRequired {
	return new AuthRequired(
		config.name,
		`MCP server "${config.name}": ${field} ${variable} is not set; set it in the environment Pi runs in, then run /mcp reconnect ${config.name}.`,
	);
}
