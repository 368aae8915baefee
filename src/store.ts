/**
 * Secure records: OAuth credentials live in the OS keyring and nowhere else. On Linux the entry is
 * pinned to the Secret Service; `@napi-rs/keyring`'s default store silently falls back to the
 * kernel keyring (and leaks the secret there even when it throws), so the default is never used.
 * Every failure becomes `KeyringUnavailable`; there is no plaintext fallback.

 */

import { createHash } from "node:crypto";
import type { OAuthDiscoveryState, StoredOAuthClientInformation, StoredOAuthTokens } from "@modelcontextprotocol/client";
import { once } from "./async.ts";
import { isObject, type ServerConfig } from "./schema.ts";

/** The keyring service (namespace) every pi-mcp record is filed under. */
export const KEYRING_SERVICE = "app.prjct.pi-mcp";

/**
 * Where secrets are kept. The default is the OS keyring; tests pass `memoryStore()`. `signal` is
 * passed on where the store can use it (the keyring cancels a call still queued for its thread);
 * callers bound the wait themselves (`keyring()` in authstate.ts).
 */
export interface SecretStore {
	/** The value, or `undefined` when there is none. */
	get(account: string, signal?: AbortSignal): Promise<string | undefined>;
	set(account: string, value: string, signal?: AbortSignal): Promise<void>;
	/** True when something was deleted. */
	delete(account: string, signal?: AbortSignal): Promise<boolean>;
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

/** Loaded on first use only: registering the extension must not load native code. */
const loadKeyring = once((): Promise<KeyringModule> => import("@napi-rs/keyring"));

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
		get: (account, signal) => guarded(async (keyring) => (await entry(keyring, account).getPassword(signal)) ?? undefined),
		set: (account, value, signal) => guarded((keyring) => entry(keyring, account).setPassword(value, signal)),
		delete: (account, signal) => guarded((keyring) => entry(keyring, account).deleteCredential(signal)),
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
 * - `issuedAt`: when the access token was received (epoch ms); with `expiresAt` it gives the
 *   token's lifetime, a quarter of which (at most 30 s) is the expiry margin. Absent in records
 *   written before it existed (the margin is then 30 s).
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
	issuedAt?: number;
	client?: StoredOAuthClientInformation;
	discovery?: OAuthDiscoveryState;
	issuer?: string;
	updatedAt: number;
}>;

export const RECORD_VERSION = 1;

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
		updatedAt: value.updatedAt,
	};
}

/** The JSON written to the keyring: exactly the record's fields, in a fixed order. */
export function serializeRecord(record: CredentialRecord): string {
	const { version, tokens, expiresAt, issuedAt, client, discovery, issuer, updatedAt } = record;
	return JSON.stringify({ version, tokens, expiresAt, issuedAt, client, discovery, issuer, updatedAt });
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
