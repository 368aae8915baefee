/**
 * The authorization-code sign-in: the SDK's `auth()` does discovery, PKCE, registration, issuer
 * checks and the code exchange; this module supplies only the host provider's storage and redirect
 * hooks, one link per server (with the reason and scope it is for), the 401 challenge probe, and the
 * callback leg (loopback or pasted URL) that exchanges the code, stores the record and notifies.
 * Nothing here opens a browser.
 */
import { randomBytes } from "node:crypto";
import type {
	OAuthClientMetadata,
	OAuthClientProvider,
	OAuthDiscoveryState,
	StoredOAuthClientInformation,
	StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import {
	type AuthContext,
	deadline,
	expiresAtOf,
	type Flow,
	fetchWith,
	minutes,
	missingVariable,
	type Reason,
	type RecordPatch,
	type Sdk,
} from "./authstate.ts";
import { AuthRequired, errorText, SetupFailed } from "./errors.ts";
import { FLOW_TTL_MS } from "./login.ts";
import type { HttpServerConfig } from "./schema.ts";
import { KeyringUnavailable } from "./store.ts";

/** Sign-in is needed: `url` is the one authorization link, also contained in the message. */
export class AuthorizationRequired extends AuthRequired {
	readonly url: string;
	constructor(server: string, message: string, url: string) {
		super(server, message);
		this.url = url;
	}
}

/** Per-operation state of one `auth()` run (and, for a link, of its callback leg). */
type Work = {
	readonly config: HttpServerConfig;
	/** Bounds every request and keyring call of the run (the setup signal, or a deadline). */
	signal: AbortSignal;
	readonly account: string;
	readonly scope?: string;
	/** Register a new client instead of using the stored one (its registration may not cover the scope). */
	register?: boolean;
	/** A client registered during this run; stored together with the tokens it obtains. */
	client?: StoredOAuthClientInformation;
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
};

/** What a 401's `WWW-Authenticate` names. */
export type Challenge = Readonly<{ scope?: string; resourceMetadataUrl?: URL }>;

/**
 * The authorization server refused the code exchange: thrown from `invalidateCredentials` so that the
 * SDK neither discards stored credentials nor sends the spent code again.
 */
class ExchangeRefused extends Error {
	override readonly name = "ExchangeRefused";
	constructor(readonly refused: "client" | "grant") {
		super(
			refused === "client"
				? 'the authorization server refused the client (invalid_client); check "oauth.clientId" and its secret'
				: "the authorization server refused the authorization code (invalid_grant: expired, already used, or not issued for this sign-in)",
		);
	}
}

/** Stands for the link while the message around it is sanitised. */
const LINK = "\u0000link\u0000";

function issuersMatch(a: string, b: string): boolean {
	const trim = (value: string) => (value.endsWith("/") ? value.slice(0, -1) : value);
	return trim(a) === trim(b);
}

export type RunOptions = Readonly<{
	reason: Reason;
	signal: AbortSignal;
	force?: boolean;
	register?: boolean;
	scope?: string;
	resourceMetadataUrl?: URL;
}>;

export type SignIn = ReturnType<typeof createSignIn>;

export function createSignIn(ctx: AuthContext) {
	const { env, login, now, remember, clean, update, loadSdk, clientName } = ctx;

	function linkMessage(config: HttpServerConfig, url: string, reason: Reason, scope?: string): string {
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

	function required(config: HttpServerConfig, flow: Flow): AuthorizationRequired {
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
	function translate(config: HttpServerConfig, error: unknown, sdk: Sdk): Error {
		if (error instanceof AuthRequired || error instanceof KeyringUnavailable || error instanceof SetupFailed) return error;
		const name = config.name;
		const message = clean(config, `MCP server "${name}": authorization failed: ${describe(error, sdk)}.`);
		const refused = sdk.OAuthError.isInstance(error) && (error.code === "invalid_client" || error.code === "unauthorized_client");
		return refused ? new AuthRequired(name, message) : new SetupFailed(name, message);
	}

	function placeholderRedirect(config: HttpServerConfig): string {
		return config.oauth?.redirectUri ?? "http://127.0.0.1/callback";
	}

	/** Registers the loopback flow once per run; resolves to its `state`. */
	async function beginFlow(work: Work): Promise<string> {
		if (work.state !== undefined) return work.state;
		const state = randomBytes(32).toString("base64url");
		const redirectUri = await login.begin({
			server: work.config.name,
			state,
			redirectUri: work.config.oauth?.redirectUri,
			onCallback: (params) => completeFlow(work, params),
		});
		work.state = state;
		work.redirectUri = redirectUri;
		return state;
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
						: ctx.get(account).record?.client,
			tokens: () => ctx.get(account).record?.tokens,
			saveTokens: async (tokens: StoredOAuthTokens) => {
				remember(tokens.access_token, tokens.refresh_token, tokens.id_token);
				const current = ctx.get(account).record;
				// The SDK re-saves stored tokens to stamp them; their lifetime did not start now.
				const same = current?.tokens?.access_token === tokens.access_token;
				const expiresAt = same ? current?.expiresAt : expiresAtOf(tokens.expires_in, now());
				const issuedAt = same ? current?.issuedAt : now();
				const client = work.client ? { client: work.client } : {};
				const discovery = work.deferred && work.discovery ? { discovery: work.discovery } : {};
				await update(
					account,
					{
						tokens,
						expiresAt,
						issuedAt,
						issuer: tokens.issuer ?? current?.issuer,
						...client,
						...discovery,
					},
					work.signal,
				);
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
			state: () => beginFlow(work),
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
				if (!work.deferred) await update(account, { discovery: state }, work.signal);
			},
			discoveryState: () => work.discovery,
			invalidateCredentials: async (scope) => {
				// A refused exchange must not cost the stored sign-in (anyone with the link's state can send a code).
				if (work.exchanging && (scope === "tokens" || scope === "client" || scope === "all")) {
					throw new ExchangeRefused(scope === "tokens" ? "grant" : "client");
				}
				if (scope === "verifier") work.verifier = undefined;
				if (scope === "discovery" || scope === "all") work.discovery = undefined;
				if (scope === "client" || scope === "all") {
					work.client = undefined;
					work.register = true;
				}
				const patch: RecordPatch =
					scope === "all"
						? { tokens: undefined, expiresAt: undefined, issuedAt: undefined, client: undefined, discovery: undefined }
						: scope === "tokens"
							? { tokens: undefined, expiresAt: undefined, issuedAt: undefined }
							: scope === "client"
								? { client: undefined }
								: scope === "discovery"
									? { discovery: undefined }
									: {};
				if (Object.keys(patch).length > 0 && !work.deferred) await update(account, patch, work.signal);
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

	/**
	 * One `auth()` run: refreshes when it can (resolves to `undefined`), otherwise ends with a link
	 * (resolves to `AuthorizationRequired`). `force` skips the refresh (sign-in, step-up); only a
	 * refresh reuses the stored discovery state. The loopback flow starts before the run when the
	 * run will end at a link (or must register a client), else lazily from `state()`.
	 */
	async function runAuth(config: HttpServerConfig, account: string, run: RunOptions): Promise<AuthorizationRequired | undefined> {
		const sdk = await loadSdk();
		const record = ctx.get(account).record;
		const scope = run.scope ?? config.oauth?.scope;
		const variable = config.oauth?.clientSecretEnv;
		if (variable !== undefined && !env[variable]) throw missingVariable(config, "oauth.clientSecretEnv", variable);
		// Only a refresh reuses the stored discovery; every new sign-in discovers afresh.
		const refreshable = !run.force && record?.tokens?.refresh_token !== undefined;
		const work: Work = {
			config,
			signal: run.signal,
			account,
			scope,
			register: run.register,
			discovery: refreshable ? record?.discovery : undefined,
			deferred: !refreshable,
		};
		const registered = config.oauth?.clientId !== undefined || (record?.client !== undefined && !run.register);
		try {
			// Without a refresh token the run ends at the link, and registration needs the redirect URI.
			if (!refreshable || !registered) await beginFlow(work);
			const result = await sdk.auth(hostProvider(work), {
				serverUrl: config.url,
				fetchFn: fetchWith(run.signal),
				scope,
				resourceMetadataUrl: run.resourceMetadataUrl,
				forceReauthorization: run.force,
			});
			if (result === "AUTHORIZED") {
				if (work.state !== undefined) login.cancel(work.state);
				return undefined;
			}
			if (work.url === undefined || work.state === undefined) throw new Error("no authorization link was produced");
			const previous = ctx.get(account).flow;
			if (previous && previous.state !== work.state) login.cancel(previous.state);
			const flow: Flow = {
				state: work.state,
				url: work.url,
				expiresAt: now() + FLOW_TTL_MS,
				reason: run.reason,
				scope: run.scope,
			};
			ctx.set(account, { flow });
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
		if (ctx.get(account).flow?.state === work.state) ctx.set(account, { flow: undefined });
		const fail = (text: string): never => {
			const message = clean(config, text);
			ctx.notify(name, message, false);
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
		work.exchanging = true;
		work.deferred = true;
		work.signal = deadline(config);
		try {
			const result = await sdk.auth(hostProvider(work), {
				serverUrl: config.url,
				fetchFn: fetchWith(work.signal),
				authorizationCode: code,
				iss: params.get("iss") ?? undefined,
				scope: work.scope,
			});
			if (result !== "AUTHORIZED") throw new Error("the authorization server issued no tokens");
		} catch (failure) {
			const reason = describe(failure, sdk);
			fail(`Sign-in to MCP server "${name}" failed: ${reason.replace(/\.$/, "")}. Run /mcp login ${name} for a new link.`);
		}
		ctx.notify(name, clean(config, `Signed in to MCP server "${name}". Calls to it can continue now.`), true);
	}

	/**
	 * What the server asks for, before a sign-in: one unauthenticated JSON-RPC `ping`, whose 401
	 * names the resource metadata (which may live where no well-known path leads) and the scope.
	 * Anything else (no 401, no header, a network error) yields no hints, and discovery falls back
	 * to the well-known locations and `scopes_supported`.
	 */
	async function challenge(config: HttpServerConfig, sdk: Sdk, signal: AbortSignal): Promise<Challenge> {
		try {
			const response = await fetch(config.url, {
				method: "POST",
				headers: { ...config.headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
				body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "ping" }),
				redirect: "manual",
				signal: AbortSignal.any([signal, AbortSignal.timeout(Math.min(config.requestTimeoutMs, 10_000))]),
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
	function signInScope(config: HttpServerConfig, asked: Challenge, sdk: Sdk): { scope?: string; resourceMetadataUrl?: URL } {
		const scope = asked.scope === undefined ? undefined : sdk.computeScopeUnion(config.oauth?.scope, asked.scope);
		return { scope, resourceMetadataUrl: asked.resourceMetadataUrl };
	}

	return { runAuth, required, translate, challenge, fromResponse, signInScope };
}
