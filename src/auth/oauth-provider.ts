/**
 * The host side of one `auth()` run: the SDK's `OAuthClientProvider` whose storage hooks read the
 * account's record and write it through the context, and whose redirect hooks keep the link, the
 * PKCE verifier and the discovery state on the run (stored only with the tokens when deferred).
 */
import type {
	OAuthClientMetadata,
	OAuthClientProvider,
	OAuthDiscoveryState,
	StoredOAuthClientInformation,
	StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import { SetupFailed } from "../errors.ts";
import type { HttpServerConfig } from "../schema.ts";
import { type DpopKey, dpopAlgOf, newDpopKey } from "./dpop.ts";
import { type AuthContext, expiresAtOf, type RecordPatch, type Work } from "./record.ts";

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

function issuersMatch(a: string, b: string): boolean {
	const trim = (value: string) => (value.endsWith("/") ? value.slice(0, -1) : value);
	return trim(a) === trim(b);
}

/** The discovered authorization server must be the configured `oauth.issuer`, if one is configured. */
function checkIssuer(clean: AuthContext["clean"], config: HttpServerConfig, state: OAuthDiscoveryState): void {
	const expected = config.oauth?.issuer;
	const found = state.authorizationServerMetadata?.issuer ?? state.authorizationServerUrl;
	if (expected === undefined || issuersMatch(found, expected)) return;
	const name = config.name;
	const text = `MCP server "${name}": the authorization server's issuer is ${found}, but "oauth.issuer" is ${expected}.`;
	throw new SetupFailed(name, clean(config, text));
}

function placeholderRedirect(config: HttpServerConfig): string {
	return config.oauth?.redirectUri ?? "http://127.0.0.1/callback";
}

const NO_TOKENS: RecordPatch = { tokens: undefined, expiresAt: undefined, issuedAt: undefined };

/** What an SDK `invalidateCredentials(scope)` removes from the stored record. */
function invalidated(scope: string): RecordPatch {
	if (scope === "all") return { ...NO_TOKENS, client: undefined, discovery: undefined, dpop: undefined };
	if (scope === "tokens") return NO_TOKENS;
	if (scope === "client") return { client: undefined };
	return scope === "discovery" ? { discovery: undefined } : {};
}

/**
 * The run's DPoP key, asked before each token request: the record's binds its tokens; a new one is
 * made only for a new grant (the code exchange) from a server that offers DPoP, stored with its tokens.
 */
function dpopKey(ctx: AuthContext, work: Work): DpopKey | undefined {
	const { dpop: held, discovery, exchanging } = work.get();
	if (held) return held;
	const alg = dpopAlgOf(discovery?.authorizationServerMetadata);
	const dpop = ctx.get(work.account).record?.dpop ?? (exchanging && alg ? newDpopKey(alg) : undefined);
	if (dpop) work.set({ dpop });
	return dpop;
}

export function hostProvider(ctx: AuthContext, work: Work, begin: (work: Work) => Promise<string>): OAuthClientProvider {
	const { env, now, remember, clean, update, clientName } = ctx;
	const { config, account } = work;
	const oauth = config.oauth;
	const clientId = oauth?.clientId;
	const secret = oauth?.clientSecretEnv ? env[oauth.clientSecretEnv] : undefined;
	remember(secret);
	const provider: OAuthClientProvider = {
		get redirectUrl() {
			return work.get().redirectUri ?? placeholderRedirect(config);
		},
		get clientMetadata(): OAuthClientMetadata {
			return {
				client_name: clientName,
				redirect_uris: [work.get().redirectUri ?? placeholderRedirect(config)],
				grant_types: ["authorization_code", "refresh_token"],
				response_types: ["code"],
				token_endpoint_auth_method: "none",
				application_type: "native",
			};
		},
		clientInformation: (): StoredOAuthClientInformation | undefined =>
			clientId !== undefined
				? { client_id: clientId, ...(secret ? { client_secret: secret } : {}), issuer: oauth?.issuer }
				: work.get().register || work.get().client
					? work.get().client
					: ctx.get(account).record?.client,
		tokens: () => ctx.get(account).record?.tokens,
		saveTokens: async (tokens: StoredOAuthTokens) => {
			remember(tokens.access_token, tokens.refresh_token, tokens.id_token);
			const current = ctx.get(account).record;
			// The SDK re-saves stored tokens to stamp them; their lifetime did not start now.
			const same = current?.tokens?.access_token === tokens.access_token;
			const expiresAt = same ? current?.expiresAt : expiresAtOf(tokens.expires_in, now());
			const issuedAt = same ? current?.issuedAt : now();
			const run = work.get();
			const client = run.client ? { client: run.client } : {};
			const discovery = run.deferred && run.discovery ? { discovery: run.discovery } : {};
			const dpop = run.dpop ? { dpop: run.dpop } : {};
			const issuer = tokens.issuer ?? current?.issuer;
			await update(account, { tokens, expiresAt, issuedAt, issuer, ...client, ...discovery, ...dpop }, run.signal);
		},
		redirectToAuthorization: (url: URL) => {
			work.set({ url: url.href });
		},
		saveCodeVerifier: (verifier: string) => {
			remember(verifier);
			work.set({ verifier });
		},
		codeVerifier: () => {
			const { verifier } = work.get();
			if (verifier === undefined) throw new Error("no sign-in is in progress for this server");
			return verifier;
		},
		// Called by auth() right before it builds the link: the loopback flow starts only then.
		state: () => begin(work),
		saveDiscoveryState: async (state: OAuthDiscoveryState) => {
			// A pre-registered client is bound to its issuer by the SDK; a registered one by this check.
			if (clientId === undefined) checkIssuer(clean, config, state);
			work.set({ discovery: state });
			const { deferred, signal } = work.get();
			if (!deferred) await update(account, { discovery: state }, signal);
		},
		discoveryState: () => work.get().discovery,
		dpop: () => {
			const key = dpopKey(ctx, work);
			return key ? ctx.signer(account, key) : undefined;
		},
		invalidateCredentials: async (scope) => {
			// A refused exchange must not cost the stored sign-in (anyone with the link's state can send a code).
			if (work.get().exchanging && (scope === "tokens" || scope === "client" || scope === "all")) {
				throw new ExchangeRefused(scope === "tokens" ? "grant" : "client");
			}
			if (scope === "verifier") work.set({ verifier: undefined });
			if (scope === "discovery" || scope === "all") work.set({ discovery: undefined });
			if (scope === "client" || scope === "all") work.set({ client: undefined, register: true });
			const patch = invalidated(scope);
			const { deferred, signal } = work.get();
			if (Object.keys(patch).length > 0 && !deferred) await update(account, patch, signal);
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
			work.set({ client: info });
		};
	}
	return provider;
}
