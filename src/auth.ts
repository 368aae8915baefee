/**
 * Credentials for HTTP servers, handed to the transport only as the SDK's narrow `AuthProvider`
 * (`token()` + `onUnauthorized`), never as an interactive OAuth provider. This is the face the
 * runtime sees, and the two grants without a browser:
 *
 * - `bearer`: the token from `bearerTokenEnv`, read at connect time.
 * - `client_credentials`: the SDK's `ClientCredentialsProvider` bound to the exact configured
 *   issuer; tokens in session memory only.
 * - `authorization_code`: the keyring record is read before connecting; without usable tokens the
 *   caller gets `AuthorizationRequired` carrying one link (`signin.ts`); expired tokens are
 *   refreshed once per record across processes (`refresh.ts`). Tokens bound to the record's DPoP
 *   key (`dpop.ts`) go out with a proof per request, through the `fetch` wrapper beside the provider.
 *
 * Every message passes `sanitize` with every secret this session has seen (tokens, client secrets,
 * codes, verifiers, DPoP keys). Nothing here opens a browser.
 */
import type { AuthProvider, InsufficientScopeError } from "@modelcontextprotocol/client";
import { dpopBound } from "./auth/dpop.ts";
import type { SecretStore } from "./auth/keyring.ts";
import { MachineToken } from "./auth/machine-token.ts";
import { hostProvider } from "./auth/oauth-provider.ts";
import {
	type AuthContext,
	createContext,
	deadline,
	fetchWith,
	missingVariable,
	recordAccount,
	rotated,
	usable,
} from "./auth/record.ts";
import { createRefresh, type Refresh } from "./auth/refresh.ts";
import {
	type Challenge,
	challenge,
	createSignIn,
	fromResponse,
	required,
	type SignIn,
	signInScope,
	translate,
} from "./auth/signin.ts";
import { credentialState, kind } from "./auth/state.ts";
import { storeSecret, withStoredSecrets } from "./auth/stored.ts";
import type { Auth, TransportAuth } from "./contracts.ts";
import { AuthRequired, PI_WORDS, SetupFailed, type Words } from "./errors.ts";
import type { LoginService } from "./login.ts";
import type { HttpServerConfig, ServerConfig } from "./schema.ts";
import { loadSdk } from "./sdk.ts";

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
	/** How messages name the next step (the front end's commands); defaults to Pi's `/mcp …`. */
	words?: Words;
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

/** What the grants share: the account table and the two flows of the authorization-code grant. */
type Parts = Readonly<{ ctx: AuthContext; runAuth: SignIn["runAuth"]; refresh: Refresh["refresh"] }>;

/**
 * The transport's view: a token, and on 401 a silent refresh or a link; never a browser. Its fetch
 * signs a proof into each request while the record's tokens are bound to its DPoP key.
 */
function interactiveProvider(parts: Parts, config: HttpServerConfig, account: string): TransportAuth {
	const { ctx } = parts;
	const bound = () => {
		const record = ctx.get(account).record;
		return record?.dpop && dpopBound(record.tokens) ? { key: record.dpop, token: record.tokens?.access_token } : undefined;
	};
	const signing = async () => {
		const held = bound();
		return held ? ctx.signer(account, held.key) : undefined;
	};
	return {
		...tokenProvider(parts, config, account),
		fetch: (next) => (input, init) => loadSdk().then((sdk) => sdk.withDpop(signing, () => bound()?.token)(next)(input, init)),
	};
}

function tokenProvider(parts: Parts, config: HttpServerConfig, account: string): AuthProvider {
	const { ctx, runAuth, refresh } = parts;
	const { now, clean, load } = ctx;
	/** No refresh token: the pending link, or a new one for what the server's challenge asks. */
	const fresh = async (signal: AbortSignal, hint?: Challenge) => {
		const pending = ctx.get(account).flow;
		if (pending && now() <= pending.expiresAt) throw required(clean, config, pending, ctx.words);
		const sdk = await loadSdk();
		const asked = hint ?? (await challenge(config, sdk, signal));
		const scope = signInScope(config, asked, sdk);
		const link = await runAuth(config, account, { reason: "expired", force: true, signal, ...scope });
		if (link) throw link;
	};
	// Called by the transport outside any setup: each gets the server's request timeout.
	return {
		token: async () => {
			const record = ctx.get(account).record;
			if (usable(record, now())) return record?.tokens?.access_token;
			const signal = deadline(config);
			if (record?.tokens?.refresh_token) await refresh(config, account, record.tokens.access_token, signal);
			else await fresh(signal);
			return ctx.get(account).record?.tokens?.access_token;
		},
		// A token believed valid was rejected. Another process may have rotated or replaced it: the
		// keyring record is read again before refreshing.
		onUnauthorized: async ({ response }) => {
			const running = ctx.get(account).refreshing;
			if (running) return running;
			const rejected = ctx.get(account).record?.tokens?.access_token;
			const signal = deadline(config);
			const latest = await load(account, signal);
			if (rotated(latest, rejected, now())) return;
			if (latest?.tokens?.refresh_token) await refresh(config, account, rejected, signal);
			else await fresh(signal, fromResponse(response, await loadSdk()));
		},
	};
}

async function prepareInteractive(parts: Parts, config: HttpServerConfig, signal: AbortSignal): Promise<TransportAuth> {
	const { ctx, runAuth, refresh } = parts;
	const { now, clean, load } = ctx;
	const account = recordAccount(config);
	const record = await load(account, signal);
	if (usable(record, now())) return interactiveProvider(parts, config, account);
	// Through the shared refresh: two refreshes with one rotating refresh token revoke the grant.
	if (record?.tokens?.refresh_token) {
		await refresh(config, account, record.tokens.access_token, signal);
		return interactiveProvider(parts, config, account);
	}
	const pending = ctx.get(account).flow;
	if (pending && now() <= pending.expiresAt) throw required(clean, config, pending, ctx.words);
	const sdk = await loadSdk();
	const asked = await challenge(config, sdk, signal);
	const link = await runAuth(config, account, {
		reason: record?.tokens ? "expired" : "sign-in",
		signal,
		...signInScope(config, asked, sdk),
	});
	if (link) throw link;
	return interactiveProvider(parts, config, account);
}

// -------------------------------------------------------------------------------------------
// client_credentials and bearer

async function prepareMachine(ctx: AuthContext, config: HttpServerConfig, signal: AbortSignal): Promise<AuthProvider> {
	const { env, now, clientName, remember, clean } = ctx;
	const oauth = config.oauth;
	const variable = oauth?.clientSecretEnv;
	const secret = variable ? env[variable] : undefined;
	if (!oauth?.clientId || !secret) throw missingVariable(config, "oauth.clientSecretEnv", variable, ctx.words);
	remember(secret);
	const account = recordAccount(config);
	const existing = ctx.get(account).machine;
	if (existing && existing.secret === secret) return existing.provider;
	const sdk = await loadSdk();
	const cc = new sdk.ClientCredentialsProvider({
		clientId: oauth.clientId,
		clientSecret: secret,
		clientName,
		scope: oauth.scope,
		expectedIssuer: oauth.issuer as string,
	});
	const held = new MachineToken(now);
	// Shared by concurrent callers; the first caller's signal bounds the requests.
	const fetchToken = (bound: AbortSignal): Promise<void> =>
		held.fetch(() =>
			sdk
				.auth(cc, { serverUrl: config.url, scope: oauth.scope, fetchFn: fetchWith(bound) })
				.then((result) => {
					const tokens = cc.tokens();
					if (result !== "AUTHORIZED" || !tokens) throw new Error("the authorization server issued no token");
					remember(tokens.access_token, tokens.refresh_token);
					return tokens.expires_in;
				})
				.catch((error: unknown) => {
					throw translate(clean, config, error, sdk);
				}),
		);
	const stale = () => !cc.tokens() || held.stale();
	await fetchToken(signal);
	const provider: AuthProvider = {
		token: async () => {
			if (stale()) await fetchToken(deadline(config));
			return cc.tokens()?.access_token;
		},
		// A rejected token is fetched again once; the transport retries the request once.
		onUnauthorized: () => fetchToken(deadline(config)),
	};
	ctx.set(account, { machine: { secret, provider } });
	return provider;
}

function prepareBearer(ctx: AuthContext, config: ServerConfig): AuthProvider {
	const variable = config.bearerTokenEnv;
	const token = variable ? ctx.env[variable] : undefined;
	if (!token) throw missingVariable(config, "bearerTokenEnv", variable, ctx.words);
	ctx.remember(token);
	return { token: async () => token };
}

function httpOf(config: ServerConfig): HttpServerConfig {
	if (config.transport !== "http")
		throw new SetupFailed(config.name, `MCP server "${config.name}": authentication needs an HTTP "url"`);
	return config;
}

function notInteractive(config: ServerConfig): Error {
	return new SetupFailed(
		config.name,
		`MCP server "${config.name}" does not sign in through a browser (${kind(config) === "bearer" ? "it uses a bearer token" : kind(config) === "machine" ? "it uses client credentials" : "it has no authentication"}).`,
	);
}

/** See `Auth.stepUp`. */
async function stepUp(parts: Parts, config: ServerConfig, error: InsufficientScopeError): Promise<AuthRequired> {
	const { ctx, runAuth } = parts;
	const { clean, load } = ctx;
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
	const http = httpOf(config);
	const sdk = await loadSdk();
	const account = recordAccount(config);
	const signal = deadline(config);
	const record = ctx.get(account).record ?? (await load(account, signal));
	const scope = sdk.computeScopeUnion(record?.tokens?.scope ?? config.oauth?.scope, error.requiredScope);
	// A dynamically registered client may be limited to the scope it registered with (RFC 7591);
	// when that does not cover the wider scope, register anew (kept once the step-up completes).
	const client = record?.client as { scope?: unknown } | undefined;
	const registered = typeof client?.scope === "string" ? client.scope.split(" ") : undefined;
	const register = registered !== undefined && (scope ?? "").split(" ").some((item) => !registered.includes(item));
	const link = await runAuth(http, account, {
		reason: "step-up",
		force: true,
		register,
		scope,
		signal,
		resourceMetadataUrl: error.resourceMetadataUrl,
	});
	if (!link) throw new Error("step-up produced no link");
	return link;
}

export function createAuth(options: AuthOptions): Auth {
	const ctx = createContext({
		env: options.env,
		store: options.store,
		login: options.login,
		now: options.now ?? Date.now,
		clientName: options.clientName ?? "pi-mcp",
		notify: options.notify,
		loadSdk,
		words: options.words ?? PI_WORDS,
	});
	const { login, load } = ctx;
	// The sign-in runs the SDK with oauth-provider.ts's provider; a refresh is a sign-in run that
	// stops short of a link. Wired here so that neither imports a module of its own floor.
	const { runAuth } = createSignIn(ctx, (work, begin) => hostProvider(ctx, work, begin));
	const refreshes = createRefresh(ctx, runAuth, options);
	const parts: Parts = { ctx, runAuth, refresh: refreshes.refresh };

	return {
		async prepare(config, signal) {
			const mode = kind(config);
			if (mode === "none") return undefined;
			const http = httpOf(config);
			if (mode === "bearer") return prepareBearer(ctx, http);
			if (mode === "machine") return prepareMachine(ctx, http, deadline(config, signal));
			return prepareInteractive(parts, http, deadline(config, signal));
		},

		stepUp: (config, error) => stepUp(parts, config, error),

		async login(config) {
			if (kind(config) !== "interactive") throw notInteractive(config);
			const http = httpOf(config);
			const account = recordAccount(config);
			const signal = deadline(config);
			await load(account, signal);
			const link = await runAuth(http, account, { reason: "login", force: true, signal });
			if (!link) throw new Error("sign-in produced no link");
			return link;
		},

		async complete(config, redirectedUrl) {
			if (kind(config) !== "interactive") throw notInteractive(config);
			return login.completeFromUrl(redirectedUrl, config.name);
		},

		async logout(config) {
			const account = recordAccount(config);
			const forget = () => {
				const pending = ctx.get(account).flow;
				if (pending) login.cancel(pending.state);
				ctx.set(account, { loaded: false, record: undefined, flow: undefined, machine: undefined, signing: undefined });
			};
			forget();
			if (kind(config) !== "interactive") return false;
			const removed = await refreshes.remove(httpOf(config), account);
			forget(); // What a refresh of this session stored while the removal waited for the lock.
			return removed;
		},

		credentialState: (config) => credentialState(ctx, config),

		withSecrets: (config, signal) =>
			withStoredSecrets(options.store, config, deadline(config, signal), (values) => ctx.remember(...values)),

		setSecret: (config, name, value) => storeSecret(options.store, config, name, value),

		secrets: ctx.secrets,

		dispose() {
			for (const account of ctx.accounts()) {
				const flow = ctx.get(account).flow;
				if (flow) login.cancel(flow.state);
			}
			ctx.forget();
		},
	};
}
