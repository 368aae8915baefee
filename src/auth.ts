/**
 * Credentials for HTTP servers, handed to the transport only as the SDK's narrow `AuthProvider`
 * (`token()` + `onUnauthorized`), never as an interactive OAuth provider:
 *
 * - `bearer`: the token from `bearerTokenEnv`, read at connect time.
 * - `client_credentials`: the SDK's `ClientCredentialsProvider` bound to the exact configured
 *   issuer; tokens in session memory only.
 * - `authorization_code`: the SDK's `auth()` does discovery, PKCE, registration, issuer checks and
 *   the code exchange; this module supplies only the provider's storage and redirect hooks. The
 *   keyring record is read before connecting; without usable tokens the caller gets
 *   `AuthorizationRequired` carrying one link, and the loopback receiver (or the paste fallback)
 *   completes the flow later and `notify` reports it.
 * - Refreshes of a record are serialised: one promise per record in this session, and across
 *   processes an exclusive lock file per record (`store.ts`). Under the lock the keyring record is
 *   read again; tokens another process rotated meanwhile are adopted instead of redeeming a refresh
 *   token that is already spent (which makes the authorization server revoke the whole grant).
 *
 * Every message passes `sanitize` with every secret this module has seen (tokens, client secrets,
 * codes, verifiers). Nothing here opens a browser.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type {
	AuthProvider,
	InsufficientScopeError,
	OAuthClientMetadata,
	OAuthClientProvider,
	OAuthDiscoveryState,
	StoredOAuthClientInformation,
	StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import type { ServerConfig } from "./config.ts";
import { AuthRequired, SetupFailed } from "./errors.ts";
import { FLOW_TTL_MS, type LoginService, type PasteOutcome } from "./login.ts";
import { sanitize } from "./output.ts";
import {
	acquireLock,
	type CredentialRecord,
	ensurePrivateDir,
	KeyringUnavailable,
	LockBusy,
	RECORD_VERSION,
	readRecord,
	recordAccount,
	type SecretStore,
	writeRecord,
} from "./store.ts";

type Sdk = typeof import("@modelcontextprotocol/client");

export type AuthOptions = Readonly<{
	/** Read at connect time for `bearerTokenEnv` and `oauth.clientSecretEnv`. */
	env: Readonly<Record<string, string | undefined>>;
	/** Where authorization-code records live (the OS keyring in the product). */
	store: SecretStore;
	/** The extension's loopback receiver. */
	login: LoginService;
	/** Defaults to `Date.now`. */
	now?: () => number;
	/** A sign-in finished (`ok`) or failed; the message is sanitised and names the server. */
	notify: (server: string, message: string, ok: boolean) => void;
	/** Defaults to importing `@modelcontextprotocol/client` on first use. */
	loadSdk?: () => Promise<Sdk>;
	/** `client_name` for dynamic registration; defaults to "pi-mcp". */
	clientName?: string;
	/**
	 * Private directory (created 0700) for the per-record refresh lock files; defaults to
	 * `<agentDir>/mcp-locks` with Pi's agent directory. Every process sharing the keyring must use
	 * the same one.
	 */
	lockDir?: string;
	/** How long a refresh waits for another process's refresh lock; defaults to 30 000 ms. */
	lockTimeoutMs?: number;
}>;

export interface Auth {
	/**
	 * Called right before connecting. `undefined` for servers without auth; otherwise the narrow
	 * provider for the transport. Throws `AuthRequired` (`AuthorizationRequired` with a link for
	 * OAuth sign-in), `KeyringUnavailable`, or `SetupFailed` (configuration or server problems).
	 */
	prepare(config: ServerConfig): Promise<AuthProvider | undefined>;
	/** A `403 insufficient_scope`: an error carrying a new link for the wider scope. */
	stepUp(config: ServerConfig, error: InsufficientScopeError): Promise<AuthRequired>;
	/** `/mcp login <server>`: a fresh link, also when signed in (re-authentication). */
	login(config: ServerConfig): Promise<AuthorizationRequired>;
	/** `/mcp login <server> <redirected-url>`: see `LoginService.completeFromUrl`. */
	complete(config: ServerConfig, redirectedUrl: string): Promise<PasteOutcome>;
	/** `/mcp logout <server>`: deletes the record and forgets session tokens; true if a record existed. */
	logout(config: ServerConfig): Promise<boolean>;
	/** One line for `/mcp status`, read locally (no network). */
	credentialState(config: ServerConfig): Promise<string>;
	/** Every secret value seen this session, for other sanitisers. */
	secrets(): readonly string[];
	/** Cancels pending sign-ins and forgets session tokens (the login service is disposed by its owner). */
	dispose(): void;
}

/** Sign-in is needed: `url` is the one authorization link, also contained in the message. */
export class AuthorizationRequired extends AuthRequired {
	readonly url: string;
	constructor(server: string, message: string, url: string) {
		super(server, message);
		this.url = url;
	}
}

type Reason = "sign-in" | "expired" | "step-up" | "login";

/** Per-operation state of one `auth()` run (and, for a link, of its callback leg). */
type Work = {
	readonly config: ServerConfig;
	readonly account: string;
	readonly scope?: string;
	/** Register a new client instead of using the stored one (its registration may not cover the scope). */
	register?: boolean;
	/** A client registered during this run; stored together with the tokens it obtains. */
	client?: StoredOAuthClientInformation;
	discovery?: OAuthDiscoveryState;
	state?: string;
	redirectUri?: string;
	verifier?: string;
	url?: string;
};

type RecordPatch = Partial<Omit<CredentialRecord, "version" | "updatedAt">>;

type Flow = Readonly<{ state: string; url: string; expiresAt: number; reason: Reason; scope?: string }>;

/** What a 401's `WWW-Authenticate` names. */
type Challenge = Readonly<{ scope?: string; resourceMetadataUrl?: URL }>;

type Machine = Readonly<{
	secret: string;
	provider: AuthProvider;
}>;

/** Tokens this close to expiry count as expired. */
const EXPIRY_SKEW_MS = 30_000;

const LOCK_TIMEOUT_MS = 30_000;

/** Stands for the link while the message around it is sanitised. */
const LINK = "\u0000link\u0000";

function issuersMatch(a: string, b: string): boolean {
	const trim = (value: string) => (value.endsWith("/") ? value.slice(0, -1) : value);
	return trim(a) === trim(b);
}

function minutes(ms: number): string {
	if (ms < 60_000) return "less than a minute";
	const total = Math.round(ms / 60_000);
	if (total < 120) return `${total} min`;
	return `${Math.round(total / 60)} h`;
}

function errorText(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

export function createAuth(options: AuthOptions): Auth {
	const { env, store, login } = options;
	const now = options.now ?? Date.now;
	const clientName = options.clientName ?? "pi-mcp";
	const lockTimeoutMs = options.lockTimeoutMs ?? LOCK_TIMEOUT_MS;
	const sdkHolder: { promise?: Promise<Sdk> } = {};
	const loadSdk = (): Promise<Sdk> => {
		sdkHolder.promise ??= options.loadSdk ? options.loadSdk() : import("@modelcontextprotocol/client");
		return sdkHolder.promise;
	};

	/** Latest record per account (authoritative within this process; re-read on `prepare`). */
	const records = new Map<string, CredentialRecord | undefined>();
	/** The pending link per account. */
	const flows = new Map<string, Flow>();
	/** Refreshes in flight per account (one at a time). */
	const refreshing = new Map<string, Promise<void>>();
	/** client_credentials providers per account (tokens in memory). */
	const machines = new Map<string, Machine>();
	const known = new Set<string>();

	const remember = (...values: readonly (string | undefined)[]) => {
		for (const value of values) if (value && value.length >= 4) known.add(value);
	};
	const clean = (config: ServerConfig, text: string) => sanitize(text, [...config.secretValues, ...known]);

	// -------------------------------------------------------------------------------------------
	// Records

	async function load(account: string): Promise<CredentialRecord | undefined> {
		const record = await readRecord(store, account);
		remember(
			record?.tokens?.access_token,
			record?.tokens?.refresh_token,
			record?.tokens?.id_token,
			record?.client?.client_secret,
		);
		records.set(account, record);
		return record;
	}

	/** Writes the record with `patch` applied; the in-memory copy changes only once it is stored. */
	async function update(account: string, patch: RecordPatch): Promise<void> {
		const current = records.has(account) ? records.get(account) : await load(account);
		const next: CredentialRecord = { ...current, ...patch, version: RECORD_VERSION, updatedAt: now() };
		await writeRecord(store, account, next);
		records.set(account, next);
	}

	const expired = (record: CredentialRecord | undefined) =>
		record?.expiresAt !== undefined && now() >= record.expiresAt - EXPIRY_SKEW_MS;
	const usable = (record: CredentialRecord | undefined) => record?.tokens?.access_token !== undefined && !expired(record);
	/** Another process replaced the token the caller saw expire or fail, and the new one is fresh. */
	const rotated = (record: CredentialRecord | undefined, seen: string | undefined) =>
		usable(record) && record?.tokens?.access_token !== seen;

	// -------------------------------------------------------------------------------------------
	// Messages

	function linkMessage(config: ServerConfig, url: string, reason: Reason, scope?: string): string {
		const name = config.name;
		const paste = `If the browser runs on another machine, the address it ends on can be pasted with: /mcp login ${name} <that address>`;
		if (reason === "login") {
			return `Open this link in your browser to sign in to MCP server "${name}":\n${url}\nThe link is valid for ${minutes(FLOW_TTL_MS)}. ${paste}`;
		}
		const lead =
			reason === "step-up"
				? `MCP server "${name}" needs more permissions for this call${scope ? ` (scope: ${scope})` : ""}.`
				: reason === "expired"
					? `The sign-in to MCP server "${name}" has expired or was revoked.`
					: `MCP server "${name}" needs sign-in.`;
		return (
			`${lead} Ask the user to open this link in their browser and approve access:\n${url}\n` +
			"Do not open the link yourself, and do not poll or retry in the meantime: wait until a message says the sign-in " +
			`completed, then continue. The link is valid for ${minutes(FLOW_TTL_MS)}. ${paste}`
		);
	}

	function required(config: ServerConfig, flow: Flow): AuthorizationRequired {
		// The link is built by the SDK from public values only (no token, secret or verifier); it is
		// kept out of the sanitiser so that a redacted configuration value cannot break it.
		const [lead = "", tail = ""] = linkMessage(config, LINK, flow.reason, flow.scope).split(LINK);
		const message = `${clean(config, lead)}${flow.url}${clean(config, tail)}`;
		return new AuthorizationRequired(config.name, message, flow.url);
	}

	/** What went wrong in an `auth()` run, in a few words (not yet sanitised). */
	function describe(error: unknown, sdk: Sdk): string {
		if (sdk.AuthorizationServerMismatchError.isInstance(error) || sdk.IssuerMismatchError.isInstance(error)) {
			return `the authorization server is not the one this configuration trusts (${errorText(error)}); check "oauth.issuer"`;
		}
		if (sdk.OAuthError.isInstance(error) && (error.code === "invalid_client" || error.code === "unauthorized_client")) {
			return `the authorization server refused the client (${errorText(error)}); check "oauth.clientId" and its secret`;
		}
		return errorText(error);
	}

	/** Any failure of an `auth()` run, as an error with a clear, sanitised message. */
	function translate(config: ServerConfig, error: unknown, sdk: Sdk): Error {
		if (error instanceof AuthRequired || error instanceof KeyringUnavailable || error instanceof SetupFailed) return error;
		const name = config.name;
		const message = clean(config, `MCP server "${name}": authorization failed: ${describe(error, sdk)}.`);
		const refused = sdk.OAuthError.isInstance(error) && (error.code === "invalid_client" || error.code === "unauthorized_client");
		return refused ? new AuthRequired(name, message) : new SetupFailed(name, message);
	}

	// -------------------------------------------------------------------------------------------
	// authorization_code: the host OAuthClientProvider (storage and redirect hooks only)

	function placeholderRedirect(config: ServerConfig): string {
		return config.oauth?.redirectUri ?? "http://127.0.0.1/callback";
	}

	async function beginFlow(work: Work): Promise<void> {
		if (work.state !== undefined) return;
		const state = randomBytes(32).toString("base64url");
		const redirectUri = await login.begin({
			server: work.config.name,
			state,
			redirectUri: work.config.oauth?.redirectUri,
			onCallback: (params) => completeFlow(work, params),
		});
		work.state = state;
		work.redirectUri = redirectUri;
	}

	function hostProvider(work: Work): OAuthClientProvider {
		const { config, account } = work;
		const oauth = config.oauth;
		const clientId = oauth?.clientId;
		const secret = oauth?.clientSecretEnv ? env[oauth.clientSecretEnv] : undefined;
		remember(secret);
		const provider: OAuthClientProvider = {
			get redirectUrl() {
				return work.redirectUri ?? placeholderRedirect(config);
			},
			get clientMetadata(): OAuthClientMetadata {
				return {
					client_name: clientName,
					redirect_uris: [work.redirectUri ?? placeholderRedirect(config)],
					grant_types: ["authorization_code", "refresh_token"],
					response_types: ["code"],
					token_endpoint_auth_method: "none",
					application_type: "native",
				};
			},
			clientInformation: (): StoredOAuthClientInformation | undefined =>
				clientId !== undefined
					? { client_id: clientId, ...(secret ? { client_secret: secret } : {}), issuer: oauth?.issuer }
					: work.register || work.client
						? work.client
						: records.get(account)?.client,
			tokens: () => records.get(account)?.tokens,
			saveTokens: async (tokens: StoredOAuthTokens) => {
				remember(tokens.access_token, tokens.refresh_token, tokens.id_token);
				const current = records.get(account);
				// The SDK re-saves stored tokens to stamp them; their lifetime did not start now.
				const same = current?.tokens?.access_token === tokens.access_token;
				const expiresAt = same
					? current?.expiresAt
					: tokens.expires_in !== undefined
						? now() + tokens.expires_in * 1000
						: undefined;
				const client = work.client ? { client: work.client } : {};
				await update(account, { tokens, expiresAt, issuer: tokens.issuer ?? current?.issuer, ...client });
			},
			redirectToAuthorization: (url: URL) => {
				work.url = url.href;
			},
			saveCodeVerifier: (verifier: string) => {
				remember(verifier);
				work.verifier = verifier;
			},
			codeVerifier: () => {
				if (work.verifier === undefined) throw new Error("no sign-in is in progress for this server");
				return work.verifier;
			},
			// Called by auth() right before it builds the link: the loopback flow starts only then.
			state: async () => {
				await beginFlow(work);
				return work.state as string;
			},
			saveDiscoveryState: async (state: OAuthDiscoveryState) => {
				const expected = oauth?.issuer;
				const found = state.authorizationServerMetadata?.issuer ?? state.authorizationServerUrl;
				// A pre-registered client is bound to its issuer by the SDK; a registered one by this check.
				if (clientId === undefined && expected !== undefined && !issuersMatch(found, expected)) {
					throw new SetupFailed(
						config.name,
						clean(
							config,
							`MCP server "${config.name}": the authorization server's issuer is ${found}, but "oauth.issuer" is ${expected}.`,
						),
					);
				}
				work.discovery = state;
				await update(account, { discovery: state });
			},
			discoveryState: () => work.discovery,
			invalidateCredentials: async (scope) => {
				if (scope === "verifier") work.verifier = undefined;
				if (scope === "discovery" || scope === "all") work.discovery = undefined;
				if (scope === "client" || scope === "all") {
					work.client = undefined;
					work.register = true;
				}
				const patch: RecordPatch =
					scope === "all"
						? { tokens: undefined, expiresAt: undefined, client: undefined, discovery: undefined }
						: scope === "tokens"
							? { tokens: undefined, expiresAt: undefined }
							: scope === "client"
								? { client: undefined }
								: scope === "discovery"
									? { discovery: undefined }
									: {};
				if (Object.keys(patch).length > 0) await update(account, patch);
			},
		};
		// A client ID metadata document (CIMD) is the client ID where the authorization server supports it.
		if (clientId === undefined && oauth?.clientMetadataUrl !== undefined) provider.clientMetadataUrl = oauth.clientMetadataUrl;
		if (clientId === undefined) {
			// Only for dynamic registration: without this method the SDK rejects a pre-registered
			// client whose issuer differs from the discovered one instead of registering anew. The
			// registration is stored with the first tokens it obtains, so the record always holds a
			// client and tokens that belong together.
			provider.saveClientInformation = (info: StoredOAuthClientInformation) => {
				remember(info.client_secret);
				work.client = info;
			};
		}
		return provider;
	}

	type RunOptions = Readonly<{ reason: Reason; force?: boolean; register?: boolean; scope?: string; resourceMetadataUrl?: URL }>;

	/**
	 * One `auth()` run: refreshes when it can (resolves to `undefined`), otherwise ends with a link
	 * (resolves to `AuthorizationRequired`). `force` skips the refresh (sign-in, step-up); only a
	 * refresh reuses the stored discovery state. The loopback flow starts before the run when the
	 * run will end at a link (or must register a client), else lazily from `state()`.
	 */
	async function runAuth(config: ServerConfig, account: string, run: RunOptions): Promise<AuthorizationRequired | undefined> {
		const sdk = await loadSdk();
		const record = records.get(account);
		const scope = run.scope ?? config.oauth?.scope;
		const variable = config.oauth?.clientSecretEnv;
		if (variable !== undefined && !env[variable]) throw missingVariable(config, "oauth.clientSecretEnv", variable);
		// Only a refresh reuses the stored discovery; every new sign-in discovers afresh.
		const refreshable = !run.force && record?.tokens?.refresh_token !== undefined;
		const work: Work = { config, account, scope, register: run.register, discovery: refreshable ? record?.discovery : undefined };
		const registered = config.oauth?.clientId !== undefined || (record?.client !== undefined && !run.register);
		try {
			// Without a refresh token the run ends at the link, and registration needs the redirect URI.
			if (!refreshable || !registered) await beginFlow(work);
			const result = await sdk.auth(hostProvider(work), {
				serverUrl: config.url as string,
				scope,
				resourceMetadataUrl: run.resourceMetadataUrl,
				forceReauthorization: run.force,
			});
			if (result === "AUTHORIZED") {
				if (work.state !== undefined) login.cancel(work.state);
				return undefined;
			}
			if (work.url === undefined || work.state === undefined) throw new Error("no authorization link was produced");
			const previous = flows.get(account);
			if (previous && previous.state !== work.state) login.cancel(previous.state);
			const flow: Flow = {
				state: work.state,
				url: work.url,
				expiresAt: now() + FLOW_TTL_MS,
				reason: run.reason,
				scope: run.scope,
			};
			flows.set(account, flow);
			return required(config, flow);
		} catch (error) {
			if (work.state !== undefined) login.cancel(work.state);
			throw translate(config, error, sdk);
		}
	}

	/** The loopback or paste callback of a link: exchange, store, notify. Rejects when it failed. */
	async function completeFlow(work: Work, params: URLSearchParams): Promise<void> {
		const { config, account } = work;
		const name = config.name;
		if (flows.get(account)?.state === work.state) flows.delete(account);
		const fail = (text: string): never => {
			const message = clean(config, text);
			options.notify(name, message, false);
			throw new Error(message);
		};
		const error = params.get("error");
		if (error !== null) {
			const code = /^[A-Za-z0-9_.-]{1,64}$/.test(error) ? error : "error";
			const description = params.get("error_description");
			const detail = description ? `: ${description.slice(0, 200)}` : "";
			fail(
				`Sign-in to MCP server "${name}" was refused by the authorization server (${code}${detail}). Run /mcp login ${name} to try again.`,
			);
		}
		const code = params.get("code") ?? "";
		remember(code);
		const sdk = await loadSdk();
		try {
			const result = await sdk.auth(hostProvider(work), {
				serverUrl: config.url as string,
				authorizationCode: code,
				iss: params.get("iss") ?? undefined,
				scope: work.scope,
			});
			if (result !== "AUTHORIZED") throw new Error("the authorization server issued no tokens");
		} catch (failure) {
			const reason = describe(failure, sdk);
			fail(`Sign-in to MCP server "${name}" failed: ${reason.replace(/\.$/, "")}. Run /mcp login ${name} for a new link.`);
		}
		options.notify(name, clean(config, `Signed in to MCP server "${name}". Calls to it can continue now.`), true);
	}

	// -------------------------------------------------------------------------------------------
	// Refresh: one per record in this session, one per record across processes

	const lockDirHolder: { promise?: Promise<string> } = {};
	function lockDir(): Promise<string> {
		lockDirHolder.promise ??= (async () => {
			// Pi is imported only when no directory was given (the extension always gives one).
			const dir = options.lockDir ?? join((await import("@earendil-works/pi-coding-agent")).getAgentDir(), "mcp-locks");
			await ensurePrivateDir(dir);
			return dir;
		})().catch((error: unknown) => {
			lockDirHolder.promise = undefined;
			throw error;
		});
		return lockDirHolder.promise;
	}

	/** The refresh lock was not obtained: who holds it, and what to do. */
	function lockFailure(config: ServerConfig, error: unknown): Error {
		const name = config.name;
		const reason = !(error instanceof LockBusy)
			? `the refresh lock could not be taken (${errorText(error)}); the lock directory must be a directory of this user`
			: error.holder && error.alive !== false
				? `another process held the refresh lock for more than ${Math.round(lockTimeoutMs / 1000)} s: ${error.message}. If that process is stuck, resume or end it`
				: `the refresh lock was not released: ${error.message}. If no pi process is refreshing this sign-in, remove ${error.path}`;
		return new SetupFailed(
			name,
			clean(config, `MCP server "${name}": the sign-in was not refreshed: ${reason}; then run /mcp reconnect ${name}.`),
		);
	}

	/**
	 * Refresh (at most one per record at a time in this session; concurrent callers share the
	 * promise). `seen` is the access token the caller saw expire or be rejected: a keyring record
	 * with another, fresh token is adopted instead of refreshing. When no refresh is possible, the
	 * link ends up thrown.
	 */
	function refresh(config: ServerConfig, account: string, seen: string | undefined): Promise<void> {
		const running = refreshing.get(account);
		if (running) return running;
		const started = refreshUnderLock(config, account, seen).finally(() => refreshing.delete(account));
		refreshing.set(account, started);
		return started;
	}

	async function refreshUnderLock(config: ServerConfig, account: string, seen: string | undefined): Promise<void> {
		// Rotated by another process already: no need to wait for the lock.
		if (rotated(await load(account), seen)) return;
		const path = join(await lockDir().catch((error: unknown) => Promise.reject(lockFailure(config, error))), `${account}.lock`);
		const lock = await acquireLock(path, { timeoutMs: lockTimeoutMs }).catch((error: unknown) =>
			Promise.reject(lockFailure(config, error)),
		);
		try {
			// The previous holder may have rotated the tokens while this process waited: its refresh
			// token is then spent, and redeeming it again would revoke the grant.
			if (rotated(await load(account), seen)) return;
			const link = await runAuth(config, account, { reason: "expired" });
			if (link) throw link;
		} finally {
			await lock.release();
		}
	}

	/** The transport's view: a token, and on 401 a silent refresh or a link; never a browser. */
	function interactiveProvider(config: ServerConfig, account: string): AuthProvider {
		/** No refresh token: the pending link, or a new one for what the server's challenge asks. */
		const fresh = async (hint?: Challenge) => {
			const pending = flows.get(account);
			if (pending && now() <= pending.expiresAt) throw required(config, pending);
			const sdk = await loadSdk();
			const asked = hint ?? (await challenge(config, sdk));
			const link = await runAuth(config, account, { reason: "expired", force: true, ...signInScope(config, asked, sdk) });
			if (link) throw link;
		};
		return {
			token: async () => {
				const record = records.get(account);
				if (usable(record)) return record?.tokens?.access_token;
				if (record?.tokens?.refresh_token) await refresh(config, account, record.tokens.access_token);
				else await fresh();
				return records.get(account)?.tokens?.access_token;
			},
			// A token believed valid was rejected. Another process may have rotated or replaced it: the
			// keyring record is read again before refreshing.
			onUnauthorized: async ({ response }) => {
				const running = refreshing.get(account);
				if (running) return running;
				const rejected = records.get(account)?.tokens?.access_token;
				const latest = await load(account);
				if (rotated(latest, rejected)) return;
				if (latest?.tokens?.refresh_token) await refresh(config, account, rejected);
				else await fresh(fromResponse(response, await loadSdk()));
			},
		};
	}

	async function prepareInteractive(config: ServerConfig): Promise<AuthProvider> {
		const account = recordAccount(config);
		const record = await load(account);
		if (usable(record)) return interactiveProvider(config, account);
		// Through the shared refresh: two refreshes with one rotating refresh token revoke the grant.
		if (record?.tokens?.refresh_token) {
			await refresh(config, account, record.tokens.access_token);
			return interactiveProvider(config, account);
		}
		const pending = flows.get(account);
		if (pending && now() <= pending.expiresAt) throw required(config, pending);
		const sdk = await loadSdk();
		const asked = await challenge(config, sdk);
		const link = await runAuth(config, account, {
			reason: record?.tokens ? "expired" : "sign-in",
			...signInScope(config, asked, sdk),
		});
		if (link) throw link;
		return interactiveProvider(config, account);
	}

	/**
	 * What the server asks for, before a sign-in: one unauthenticated JSON-RPC `ping`, whose 401
	 * names the resource metadata (which may live where no well-known path leads) and the scope.
	 * Anything else (no 401, no header, a network error) yields no hints, and discovery falls back
	 * to the well-known locations and `scopes_supported`.
	 */
	async function challenge(config: ServerConfig, sdk: Sdk): Promise<Challenge> {
		try {
			const response = await fetch(config.url as string, {
				method: "POST",
				headers: { ...config.headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
				body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "ping" }),
				redirect: "manual",
				signal: AbortSignal.timeout(Math.min(config.requestTimeoutMs, 10_000)),
			});
			await response.body?.cancel().catch(() => undefined);
			return fromResponse(response, sdk);
		} catch {
			return {};
		}
	}

	function fromResponse(response: Response, sdk: Sdk): Challenge {
		if (response.status !== 401 || !response.headers.has("www-authenticate")) return {};
		const { scope, resourceMetadataUrl } = sdk.extractWWWAuthenticateParams(response);
		return { scope, resourceMetadataUrl };
	}

	/** The scope to sign in with (the configured one plus what the challenge asks) and where the metadata is. */
	function signInScope(config: ServerConfig, asked: Challenge, sdk: Sdk): { scope?: string; resourceMetadataUrl?: URL } {
		const scope = asked.scope === undefined ? undefined : sdk.computeScopeUnion(config.oauth?.scope, asked.scope);
		return { scope, resourceMetadataUrl: asked.resourceMetadataUrl };
	}

	// -------------------------------------------------------------------------------------------
	// client_credentials and bearer

	function missingVariable(config: ServerConfig, field: string, variable: string | undefined): AuthRequired {
		return new AuthRequired(
			config.name,
			`MCP server "${config.name}": ${field} ${variable} is not set; set it in the environment Pi runs in, then run /mcp reconnect ${config.name}.`,
		);
	}

	async function prepareMachine(config: ServerConfig): Promise<AuthProvider> {
		const oauth = config.oauth;
		const variable = oauth?.clientSecretEnv;
		const secret = variable ? env[variable] : undefined;
		if (!oauth?.clientId || !secret) throw missingVariable(config, "oauth.clientSecretEnv", variable);
		remember(secret);
		const account = recordAccount(config);
		const existing = machines.get(account);
		if (existing && existing.secret === secret) return existing.provider;
		const sdk = await loadSdk();
		const cc = new sdk.ClientCredentialsProvider({
			clientId: oauth.clientId,
			clientSecret: secret,
			clientName,
			scope: oauth.scope,
			expectedIssuer: oauth.issuer as string,
		});
		const held: { expiresAt?: number; fetching?: Promise<void> } = {};
		const fetchToken = (): Promise<void> => {
			held.fetching ??= sdk
				.auth(cc, { serverUrl: config.url as string, scope: oauth.scope })
				.then((result) => {
					const tokens = cc.tokens();
					if (result !== "AUTHORIZED" || !tokens) throw new Error("the authorization server issued no token");
					remember(tokens.access_token, tokens.refresh_token);
					held.expiresAt = tokens.expires_in !== undefined ? now() + tokens.expires_in * 1000 : undefined;
				})
				.catch((error: unknown) => {
					throw translate(config, error, sdk);
				})
				.finally(() => {
					held.fetching = undefined;
				});
			return held.fetching;
		};
		const stale = () => !cc.tokens() || (held.expiresAt !== undefined && now() >= held.expiresAt - EXPIRY_SKEW_MS);
		await fetchToken();
		const provider: AuthProvider = {
			token: async () => {
				if (stale()) await fetchToken();
				return cc.tokens()?.access_token;
			},
			// A rejected token is fetched again once; the transport retries the request once.
			onUnauthorized: () => fetchToken(),
		};
		machines.set(account, { secret, provider });
		return provider;
	}

	function prepareBearer(config: ServerConfig): AuthProvider {
		const variable = config.bearerTokenEnv;
		const token = variable ? env[variable] : undefined;
		if (!token) throw missingVariable(config, "bearerTokenEnv", variable);
		remember(token);
		return { token: async () => token };
	}

	function kind(config: ServerConfig): "none" | "bearer" | "machine" | "interactive" {
		if (config.auth === "bearer") return "bearer";
		if (config.auth !== "oauth") return "none";
		return config.oauth?.grantType === "client_credentials" ? "machine" : "interactive";
	}

	function requireUrl(config: ServerConfig): void {
		if (config.url === undefined)
			throw new SetupFailed(config.name, `MCP server "${config.name}": authentication needs an HTTP "url"`);
	}

	function notInteractive(config: ServerConfig): Error {
		return new SetupFailed(
			config.name,
			`MCP server "${config.name}" does not sign in through a browser (${kind(config) === "bearer" ? "it uses a bearer token" : kind(config) === "machine" ? "it uses client credentials" : "it has no authentication"}).`,
		);
	}

	// -------------------------------------------------------------------------------------------

	return {
		async prepare(config) {
			const mode = kind(config);
			if (mode === "none") return undefined;
			requireUrl(config);
			if (mode === "bearer") return prepareBearer(config);
			if (mode === "machine") return prepareMachine(config);
			return prepareInteractive(config);
		},

		async stepUp(config, error) {
			const name = config.name;
			const mode = kind(config);
			if (mode !== "interactive") {
				return new AuthRequired(
					name,
					clean(
						config,
						`MCP server "${name}" requires scope "${error.requiredScope ?? "unknown"}" for this call, which its ${mode === "machine" ? "client credentials" : "token"} do not grant${mode === "machine" ? '; add it to "oauth.scope"' : ""}.`,
					),
				);
			}
			requireUrl(config);
			const sdk = await loadSdk();
			const account = recordAccount(config);
			const record = records.get(account) ?? (await load(account));
			const scope = sdk.computeScopeUnion(record?.tokens?.scope ?? config.oauth?.scope, error.requiredScope);
			// A dynamically registered client may be limited to the scope it registered with (RFC 7591);
			// when that does not cover the wider scope, register anew (kept once the step-up completes).
			const client = record?.client as { scope?: unknown } | undefined;
			const registered = typeof client?.scope === "string" ? client.scope.split(" ") : undefined;
			const register = registered !== undefined && (scope ?? "").split(" ").some((item) => !registered.includes(item));
			const link = await runAuth(config, account, {
				reason: "step-up",
				force: true,
				register,
				scope,
				resourceMetadataUrl: error.resourceMetadataUrl,
			});
			if (!link) throw new Error("step-up produced no link");
			return link;
		},

		async login(config) {
			if (kind(config) !== "interactive") throw notInteractive(config);
			requireUrl(config);
			const account = recordAccount(config);
			await load(account);
			const link = await runAuth(config, account, { reason: "login", force: true });
			if (!link) throw new Error("sign-in produced no link");
			return link;
		},

		async complete(config, redirectedUrl) {
			if (kind(config) !== "interactive") throw notInteractive(config);
			return login.completeFromUrl(redirectedUrl, config.name);
		},

		async logout(config) {
			const account = recordAccount(config);
			const pending = flows.get(account);
			if (pending) login.cancel(pending.state);
			flows.delete(account);
			machines.delete(account);
			records.delete(account);
			if (kind(config) !== "interactive") return false;
			return store.delete(account);
		},

		async credentialState(config) {
			const mode = kind(config);
			if (mode === "none") return "no authentication";
			if (mode === "bearer") {
				return config.bearerTokenEnv && env[config.bearerTokenEnv]
					? `bearer token from ${config.bearerTokenEnv}`
					: `bearer token: ${config.bearerTokenEnv} is not set`;
			}
			const account = recordAccount(config);
			if (mode === "machine") {
				const variable = config.oauth?.clientSecretEnv;
				if (!variable || !env[variable]) return `client credentials: ${variable} is not set`;
				return machines.has(account) ? "client credentials (token in memory)" : "client credentials (token fetched on connect)";
			}
			const record = await readRecord(store, account).catch((error: unknown) => {
				if (error instanceof KeyringUnavailable) return "unavailable" as const;
				throw error;
			});
			if (record === "unavailable") return "keyring unavailable";
			const pending = flows.get(account);
			const waiting =
				pending && now() <= pending.expiresAt ? `; sign-in link pending (valid for ${minutes(pending.expiresAt - now())})` : "";
			if (!record?.tokens) return `not signed in${waiting}`;
			if (record.expiresAt === undefined) return `signed in${waiting}`;
			if (!expired(record)) return `signed in (expires in ${minutes(record.expiresAt - now())})${waiting}`;
			if (record.tokens.refresh_token) return `signed in (token expired; refreshed on next use)${waiting}`;
			return `sign-in expired${waiting}`;
		},

		secrets: () => [...known],

		dispose() {
			for (const flow of flows.values()) login.cancel(flow.state);
			flows.clear();
			machines.clear();
			records.clear();
			refreshing.clear();
		},
	};
}
