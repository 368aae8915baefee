/**
 * The server's credential record, in its two forms. Its keyring form: the account it is filed
 * under (a hash of what the credentials mean), the versioned JSON format, read and write, and
 * when its tokens count as expired. The session's shared copy: per server (keyed by its keyring
 * account) one readonly `ServerAuth`, replaced whole, with the latest keyring record, the pending
 * link, the refresh in flight and the client-credentials provider; every secret seen, for the
 * sanitiser; and `Work`, one `auth()` run that signin.ts and oauth-provider.ts share.
 * `auth.ts`, `signin.ts` and `refresh.ts` each own their fields and re-read the record after
 * every `await`.
 */
import { createHash } from "node:crypto";
import type {
	AuthProvider,
	DpopSession,
	OAuthDiscoveryState,
	StoredOAuthClientInformation,
	StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import { awaitWith } from "../async.ts";
import { AuthRequired, type Words } from "../errors.ts";
import type { Flow, LoginService } from "../login.ts";
import { sanitize } from "../output/text.ts";
import { type HttpServerConfig, isObject, parseJson, type ServerConfig } from "../schema.ts";
import type { Sdk } from "../sdk.lazy.ts";
import { type DpopKey, dpopSecret, openDpopSession, parseDpopKey, sameKey } from "./dpop.ts";
import { KeyringUnavailable, type SecretStore } from "./keyring.ts";

// -------------------------------------------------------------------------------------------
// The record's keyring form

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
 * - `version`: the record format: 2 when it holds a DPoP key, else 1 (what readers before DPoP
 *   understand; they would present a bound token as a bearer token, so they must not read a 2). A
 *   reader treats a record of another version as absent (the next sign-in replaces it) and never
 *   rewrites parts of it.
 * - `tokens`: as the SDK saved them (access and refresh token, scope, issuer stamp).
 * - `expiresAt`: when the access token expires (epoch ms), computed from `expires_in` when the
 *   tokens were saved; absent when the server gave no lifetime.
 * - `issuedAt`: when the access token was received (epoch ms); with `expiresAt` it gives the
 *   token's lifetime, a quarter of which (at most 30 s) is the expiry margin. Absent in records
 *   written before it existed (the margin is then 30 s).
 * - `client`: dynamically registered client information (absent for a pre-registered `clientId`).
 * - `discovery`: the SDK's discovery state (RFC 9728 and RFC 8414 metadata; public documents).
 * - `issuer`: the authorization server the tokens and the client are bound to.
 * - `dpop`: the private key the tokens are bound to (RFC 9449), when the server offered DPoP
 *   (`dpop.ts`); only in version 2. Never written anywhere but here.
 * - `updatedAt`: when the record was written (epoch ms). With the cross-process refresh lock, a
 *   refresher re-reads the record under the lock and, when `updatedAt` is newer than the copy it
 *   started from, adopts the rotated tokens instead of refreshing with a spent refresh token.
 */
export type CredentialRecord = Readonly<{
	version: RecordVersion;
	tokens?: StoredOAuthTokens;
	expiresAt?: number;
	issuedAt?: number;
	client?: StoredOAuthClientInformation;
	discovery?: OAuthDiscoveryState;
	issuer?: string;
	dpop?: DpopKey;
	updatedAt: number;
}>;

type RecordVersion = 1 | 2;

/** The version a record is written with: see `CredentialRecord.version`. */
export const recordVersion = (record: Pick<CredentialRecord, "dpop">): RecordVersion => (record.dpop ? 2 : 1);

/** Parses a stored record; anything unreadable or of another version counts as no record. */
export function parseRecord(text: string | undefined): CredentialRecord | undefined {
	if (text === undefined) return undefined;
	const value = parseJson(text);
	if (!isObject(value) || (value.version !== 1 && value.version !== 2) || typeof value.updatedAt !== "number") return undefined;
	// A version-2 record whose key is unreadable holds tokens nobody can present: no record.
	const dpop = value.version === 2 ? parseDpopKey(value.dpop) : undefined;
	if (value.version === 2 && dpop === undefined) return undefined;
	const tokens = isObject(value.tokens) && typeof value.tokens.access_token === "string" ? value.tokens : undefined;
	return {
		version: value.version,
		tokens: tokens as unknown as StoredOAuthTokens | undefined,
		expiresAt: typeof value.expiresAt === "number" ? value.expiresAt : undefined,
		issuedAt: typeof value.issuedAt === "number" ? value.issuedAt : undefined,
		client:
			isObject(value.client) && typeof value.client.client_id === "string"
				? (value.client as unknown as StoredOAuthClientInformation)
				: undefined,
		discovery:
			isObject(value.discovery) && typeof value.discovery.authorizationServerUrl === "string"
				? (value.discovery as unknown as OAuthDiscoveryState)
				: undefined,
		issuer: typeof value.issuer === "string" ? value.issuer : undefined,
		...(dpop ? { dpop } : {}),
		updatedAt: value.updatedAt,
	};
}

/** The JSON written to the keyring: exactly the record's fields, in a fixed order. */
export function serializeRecord(record: CredentialRecord): string {
	const { tokens, expiresAt, issuedAt, client, discovery, issuer, dpop, updatedAt } = record;
	const version = recordVersion(record);
	return JSON.stringify({ version, tokens, expiresAt, issuedAt, client, discovery, issuer, dpop, updatedAt });
}

export async function readRecord(
	store: SecretStore,
	account: string,
	signal?: AbortSignal,
): Promise<CredentialRecord | undefined> {
	return parseRecord(await store.get(account, signal));
}

export async function writeRecord(
	store: SecretStore,
	account: string,
	record: CredentialRecord,
	signal?: AbortSignal,
): Promise<void> {
	await store.set(account, serializeRecord(record), signal);
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

// -------------------------------------------------------------------------------------------
// The session's shared copy

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
	/** The signing session of the record's DPoP key (its nonces live as long as it does). */
	signing?: Readonly<{ key: DpopKey; session: Promise<DpopSession> }>;
}>;

/** What changes during one `auth()` run (and, for a link, its callback leg). */
export type WorkState = Readonly<{
	/** Bounds every request and keyring call of the run (the setup signal, or a deadline). */
	signal: AbortSignal;
	/** Register a new client instead of using the stored one (its registration may not cover the scope). */
	register?: boolean;
	/** A client registered during this run; stored together with the tokens it obtains. */
	client?: StoredOAuthClientInformation;
	/** The DPoP key of this run's token requests (the record's, or a new one); stored with the tokens. */
	dpop?: DpopKey;
	discovery?: OAuthDiscoveryState;
	/**
	 * The run ends at a link (and its callback leg exchanges the code): nothing is stored until the
	 * new tokens are, so a link that is never used, or a code exchange that fails, changes nothing
	 * stored (discovery and client are written together with the tokens).
	 */
	deferred: boolean;
	/** The callback leg's code exchange is running (the SDK must not retry it or invalidate anything). */
	exchanging?: boolean;
	state?: string;
	redirectUri?: string;
	verifier?: string;
	url?: string;
}>;

/** One `auth()` run: what it is for, and its state in a slot replaced whole (signin.ts and oauth-provider.ts share it). */
export class Work {
	readonly config: HttpServerConfig;
	readonly account: string;
	readonly scope?: string;
	#now: WorkState;

	constructor(config: HttpServerConfig, account: string, scope: string | undefined, start: WorkState) {
		this.config = config;
		this.account = account;
		this.scope = scope;
		this.#now = start;
	}

	get(): WorkState {
		return this.#now;
	}

	set(patch: Partial<WorkState>): void {
		this.#now = { ...this.#now, ...patch };
	}
}

export type RecordPatch = Partial<Omit<CredentialRecord, "version" | "updatedAt">>;

export type AuthContext = Readonly<{
	env: Readonly<Record<string, string | undefined>>;
	store: SecretStore;
	login: LoginService;
	now: () => number;
	clientName: string;
	notify: (server: string, message: string, ok: boolean) => void;
	loadSdk: () => Promise<Sdk>;
	/** How messages name the next step (the front end's commands). */
	words: Words;
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
	/** The account's signing session for `key`, made once per key (and its nonces kept with it). */
	signer(account: string, key: DpopKey): Promise<DpopSession>;
}>;

export function createContext(
	base: Pick<AuthContext, "env" | "store" | "login" | "now" | "clientName" | "notify" | "loadSdk" | "words">,
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
		remember(
			tokens?.access_token,
			tokens?.refresh_token,
			tokens?.id_token,
			record?.client?.client_secret,
			dpopSecret(record?.dpop),
		);
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
			const merged = { ...current, ...patch };
			const next: CredentialRecord = { ...merged, version: recordVersion(merged), updatedAt: base.now() };
			// The write itself is not cancelled: fresh tokens (a refresh token already rotated) must land
			// even when the caller stops waiting for them.
			await keyring(writeRecord(base.store, account, next), signal);
			set(account, { record: next });
		},
		signer(account, key) {
			const held = get(account).signing;
			if (held && sameKey(held.key, key)) return held.session;
			remember(dpopSecret(key));
			const session = base.loadSdk().then((sdk) => openDpopSession(sdk.DpopSession, key));
			set(account, { signing: { key, session } });
			// A key that cannot be imported is tried again by the next request, not remembered as failed.
			session.catch(() => get(account).signing?.session === session && set(account, { signing: undefined }));
			return session;
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

export function missingVariable(config: ServerConfig, field: string, variable: string | undefined, words: Words): AuthRequired {
	const say = (w: Words) =>
		`MCP server "${config.name}": ${field} ${variable} is not set; set it in the environment Pi runs in, then run ${w.reconnect(config.name)}.`;
	return new AuthRequired(config.name, say(words), { kind: "reconnect", server: config.name }, say);
}
