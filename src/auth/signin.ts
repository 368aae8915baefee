/**
 * The authorization-code sign-in: the SDK's `auth()` does discovery, PKCE, registration, issuer
 * checks and the code exchange (with the host provider that auth.ts passes in, oauth-provider.ts's);
 * this module runs it, keeps one pending link per server (its words and notices are `login.ts`'s),
 * probes a 401's challenge, and runs the callback leg (loopback or pasted URL) that exchanges the
 * code, stores the record and notifies. Nothing here opens a browser.
 */
import { randomBytes } from "node:crypto";
import type { OAuthClientProvider } from "@modelcontextprotocol/client";
import { AuthorizationRequired, AuthRequired, errorText, SetupFailed, type Words } from "../errors.ts";
import { FLOW_TTL_MS, type Flow, linkText, notices, type Reason } from "../login.ts";
import type { HttpServerConfig } from "../schema.ts";
import type { Sdk } from "../sdk.lazy.ts";
import { KeyringUnavailable } from "./keyring.ts";
import { type AuthContext, deadline, fetchWith, missingVariable, Work } from "./record.ts";

/** What a 401's `WWW-Authenticate` names. */
export type Challenge = Readonly<{ scope?: string; resourceMetadataUrl?: URL }>;

export type RunOptions = Readonly<{
	reason: Reason;
	signal: AbortSignal;
	force?: boolean;
	register?: boolean;
	scope?: string;
	resourceMetadataUrl?: URL;
}>;

/** The error that carries a link to the model or the user. */
export function required(clean: AuthContext["clean"], config: HttpServerConfig, flow: Flow, words: Words): AuthorizationRequired {
	const say = (w: Words) => linkText(clean, config, flow, w);
	return new AuthorizationRequired(config.name, say(words), flow.url, say);
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
export function translate(clean: AuthContext["clean"], config: HttpServerConfig, error: unknown, sdk: Sdk): Error {
	if (error instanceof AuthRequired || error instanceof KeyringUnavailable || error instanceof SetupFailed) return error;
	const name = config.name;
	const message = clean(config, `MCP server "${name}": authorization failed: ${describe(error, sdk)}.`);
	const refused = sdk.OAuthError.isInstance(error) && (error.code === "invalid_client" || error.code === "unauthorized_client");
	return refused ? new AuthRequired(name, message) : new SetupFailed(name, message);
}

/**
 * What the server asks for, before a sign-in: one unauthenticated JSON-RPC `ping`, whose 401
 * names the resource metadata (which may live where no well-known path leads) and the scope.
 * Anything else (no 401, no header, a network error) yields no hints, and discovery falls back
 * to the well-known locations and `scopes_supported`.
 */
export async function challenge(config: HttpServerConfig, sdk: Sdk, signal: AbortSignal): Promise<Challenge> {
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

export function fromResponse(response: Response, sdk: Sdk): Challenge {
	if (response.status !== 401 || !response.headers.has("www-authenticate")) return {};
	const { scope, resourceMetadataUrl } = sdk.extractWWWAuthenticateParams(response);
	return { scope, resourceMetadataUrl };
}

/** The scope to sign in with (the configured one plus what the challenge asks) and where the metadata is. */
export function signInScope(config: HttpServerConfig, asked: Challenge, sdk: Sdk): { scope?: string; resourceMetadataUrl?: URL } {
	const scope = asked.scope === undefined ? undefined : sdk.computeScopeUnion(config.oauth?.scope, asked.scope);
	return { scope, resourceMetadataUrl: asked.resourceMetadataUrl };
}

/**
 * The SDK's provider for one run (oauth-provider.ts's, wired by auth.ts); `begin` registers the
 * loopback flow and resolves to its `state`.
 */
export type HostProviderFactory = (work: Work, begin: (work: Work) => Promise<string>) => OAuthClientProvider;

export type SignIn = ReturnType<typeof createSignIn>;

export function createSignIn(ctx: AuthContext, hostProvider: HostProviderFactory) {
	const { env, login, now, clean, loadSdk } = ctx;

	/** Registers the loopback flow once per run; resolves to its `state`. */
	async function beginFlow(work: Work): Promise<string> {
		const begun = work.get().state;
		if (begun !== undefined) return begun;
		const state = randomBytes(32).toString("base64url");
		const redirectUri = await login.begin({
			server: work.config.name,
			state,
			redirectUri: work.config.oauth?.redirectUri,
			onCallback: (params) => completeFlow(ctx, (run) => hostProvider(run, beginFlow), work, params),
		});
		work.set({ state, redirectUri });
		return state;
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
		if (variable !== undefined && !env[variable]) throw missingVariable(config, "oauth.clientSecretEnv", variable, ctx.words);
		// Only a refresh reuses the stored discovery; every new sign-in discovers afresh.
		const refreshable = !run.force && record?.tokens?.refresh_token !== undefined;
		const work = new Work(config, account, scope, {
			signal: run.signal,
			register: run.register,
			discovery: refreshable ? record?.discovery : undefined,
			deferred: !refreshable,
		});
		const registered = config.oauth?.clientId !== undefined || (record?.client !== undefined && !run.register);
		try {
			// Without a refresh token the run ends at the link, and registration needs the redirect URI.
			if (!refreshable || !registered) await beginFlow(work);
			const result = await sdk.auth(hostProvider(work, beginFlow), {
				serverUrl: config.url,
				fetchFn: fetchWith(run.signal),
				scope,
				resourceMetadataUrl: run.resourceMetadataUrl,
				forceReauthorization: run.force,
			});
			const { state, url } = work.get();
			if (result === "AUTHORIZED") {
				if (state !== undefined) login.cancel(state);
				return undefined;
			}
			if (url === undefined || state === undefined) throw new Error("no authorization link was produced");
			const previous = ctx.get(account).flow;
			if (previous && previous.state !== state) login.cancel(previous.state);
			const flow: Flow = {
				state,
				url,
				expiresAt: now() + FLOW_TTL_MS,
				reason: run.reason,
				scope: run.scope,
			};
			ctx.set(account, { flow });
			return required(clean, config, flow, ctx.words);
		} catch (error) {
			const { state } = work.get();
			if (state !== undefined) login.cancel(state);
			throw translate(clean, config, error, sdk);
		}
	}

	return { runAuth };
}

/** The loopback or paste callback of a link: exchange, store, notify. Rejects when it failed. */
async function completeFlow(
	ctx: AuthContext,
	provider: (work: Work) => OAuthClientProvider,
	work: Work,
	params: URLSearchParams,
): Promise<void> {
	const { remember, clean, loadSdk } = ctx;
	const { config, account } = work;
	const name = config.name;
	if (ctx.get(account).flow?.state === work.get().state) ctx.set(account, { flow: undefined });
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
		fail(notices.refused(name, `${code}${detail}`, ctx.words));
	}
	const code = params.get("code") ?? "";
	remember(code);
	const sdk = await loadSdk();
	const signal = deadline(config);
	work.set({ exchanging: true, deferred: true, signal });
	try {
		const result = await sdk.auth(provider(work), {
			serverUrl: config.url,
			fetchFn: fetchWith(signal),
			authorizationCode: code,
			iss: params.get("iss") ?? undefined,
			scope: work.scope,
		});
		if (result !== "AUTHORIZED") throw new Error("the authorization server issued no tokens");
	} catch (failure) {
		const reason = describe(failure, sdk);
		fail(notices.failed(name, reason, ctx.words));
	}
	ctx.notify(name, clean(config, notices.signedIn(name)), true);
}
