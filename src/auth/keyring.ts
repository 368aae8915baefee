/**
 * The secret store: OAuth credentials live in the OS keyring and nowhere else. On Linux the entry
 * is pinned to the Secret Service; `@napi-rs/keyring`'s default store silently falls back to the
 * kernel keyring (and leaks the secret there even when it throws), so the default is never used.
 * Every failure becomes `KeyringUnavailable`; there is no plaintext fallback. What is stored (the
 * credential record, its account and format) is record.ts's concern; this module keeps strings.
 */
import { once } from "../async.ts";

/** The keyring service (namespace) every pi-mcp record is filed under. */
export const KEYRING_SERVICE = "app.prjct.pi-mcp";

/**
 * Where secrets are kept. The default is the OS keyring; tests pass `memoryStore()`. `signal` is
 * passed on where the store can use it (the keyring cancels a call still queued for its thread);
 * callers bound the wait themselves (`keyring()` in record.ts).
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

/**
 * Loaded on first use only: registering the extension must not load native code. Node's ESM loader
 * caches the module, but Pi loads extensions through jiti with `moduleCache: false`, where every
 * `import()` resolves and wraps the module again (about 2 ms each, measured; the native code itself
 * loads once): hence a memo of one module for the process. A failed load is forgotten (`once`), so
 * that the next call tries again.
 */
const loadKeyring = once((): Promise<KeyringModule> => import("@napi-rs/keyring"));

/** Pinned to the Secret Service on Linux; the option is ignored elsewhere. */
const ENTRY_OPTIONS = { linux: { store: "secret-service" as const } };

/**
 * D-Bus's words when the Secret Service went away: it left the bus during a call (gnome-keyring can crash under
 * many sessions), or an entry's session belonged to a service that has since been started again.
 */
const SERVICE_GONE = /disconnected from message bus without replying|the session does not exist/i;

/**
 * `action`, once more if the Secret Service went away: D-Bus starts the service again on the next call, and every
 * call here (read, write, delete) can be repeated. Any other failure, or a second one, is `KeyringUnavailable`.
 */
export async function guarded<T>(action: () => Promise<T>): Promise<T> {
	try {
		return await action().catch((error: unknown) => {
			if (error instanceof Error && SERVICE_GONE.test(`${error.message} ${String(error.cause)}`)) return action();
			throw error;
		});
	} catch (error) {
		throw new KeyringUnavailable(error);
	}
}

type Entry = InstanceType<KeyringModule["AsyncEntry"]>;

/**
 * One keyring entry per account, made once. Each entry opens a D-Bus connection of its own, closed only when the
 * garbage collector frees the entry: an entry per call held 120 connections after 120 reads (a small object
 * rarely triggers a collection), and the session bus allows 256 per user, for the whole desktop. One entry
 * serves any number of calls, also at once (and ~6x faster: no connection to open).
 */
class Entries {
	readonly #service: string;
	readonly #made = new Map<string, Promise<Entry>>();

	constructor(service: string) {
		this.#service = service;
	}

	/**
	 * `call` on the account's entry, made on first use. A failed call drops the entry: the next one opens a new
	 * session, with the service running then (a module that failed to load is loaded again too).
	 */
	async with<T>(account: string, call: (entry: Entry) => Promise<T>): Promise<T> {
		const made = this.#made.get(account) ?? this.#make(account);
		try {
			return await call(await made);
		} catch (error) {
			if (this.#made.get(account) === made) this.#made.delete(account);
			throw error;
		}
	}

	#make(account: string): Promise<Entry> {
		const made = loadKeyring().then((keyring) => new keyring.AsyncEntry(this.#service, account, ENTRY_OPTIONS));
		this.#made.set(account, made);
		// Bounded: a process uses a few accounts (one per server and secret); the oldest go first.
		for (const old of this.#made.keys()) {
			if (this.#made.size <= 16) break;
			this.#made.delete(old);
		}
		return made;
	}
}

/** The OS keyring (Secret Service on Linux, Keychain on macOS, Credential Manager on Windows). */
export function keyringStore(service: string = KEYRING_SERVICE): SecretStore {
	const entries = new Entries(service);
	return {
		get: (account, signal) =>
			guarded(async () => (await entries.with(account, (entry) => entry.getPassword(signal))) ?? undefined),
		set: (account, value, signal) => guarded(() => entries.with(account, (entry) => entry.setPassword(value, signal))),
		delete: (account, signal) => guarded(() => entries.with(account, (entry) => entry.deleteCredential(signal))),
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
