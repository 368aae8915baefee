/**
 * What a server's credentials are, read locally (no network): the kind of authentication its entry asks for,
 * and its credential state for status (`Auth.credentialState`): the stored secrets it lacks, whether it needs a
 * sign-in, and the one line every face shows.
 */
import type { CredentialState } from "../contracts.ts";
import { minutes } from "../login.ts";
import type { ServerConfig } from "../schema.ts";
import { dpopBound } from "./dpop.ts";
import { KeyringUnavailable } from "./keyring.ts";
import { type AuthContext, deadline, expired, keyring, readRecord, recordAccount } from "./record.ts";
import { secretsState } from "./stored.ts";

/** The authentication an entry asks for: none, a bearer token, client credentials, or a browser sign-in. */
export function kind(config: ServerConfig): "none" | "bearer" | "machine" | "interactive" {
	if (config.auth === "bearer") return "bearer";
	if (config.auth !== "oauth") return "none";
	return config.oauth?.grantType === "client_credentials" ? "machine" : "interactive";
}

/** See `Auth.credentialState`: the stored secrets the entry needs first ("needs secret NAME"), then its sign-in. */
export async function credentialState(ctx: AuthContext, config: ServerConfig): Promise<CredentialState> {
	const secrets = await secretsState(ctx.store, config, deadline(config));
	const missingSecrets = secrets?.missing ?? [];
	if (secrets !== undefined && config.auth === undefined) return { missingSecrets, needsSignIn: false, text: secrets.text };
	const auth = await authState(ctx, config);
	const text = secrets === undefined ? auth.text : `${secrets.text}; ${auth.text}`;
	return { missingSecrets, needsSignIn: auth.needsSignIn === true, text };
}

type AuthState = Readonly<{ text: string; needsSignIn?: true }>;

async function authState(ctx: AuthContext, config: ServerConfig): Promise<AuthState> {
	const { env, store, now } = ctx;
	const mode = kind(config);
	if (mode === "none") return { text: "no authentication" };
	if (mode === "bearer") {
		const set = config.bearerTokenEnv && env[config.bearerTokenEnv];
		return { text: set ? `bearer token from ${config.bearerTokenEnv}` : `bearer token: ${config.bearerTokenEnv} is not set` };
	}
	const account = recordAccount(config);
	if (mode === "machine") {
		const variable = config.oauth?.clientSecretEnv;
		if (!variable || !env[variable]) return { text: `client credentials: ${variable} is not set` };
		const held = ctx.get(account).machine;
		return { text: held ? "client credentials (token in memory)" : "client credentials (token fetched on connect)" };
	}
	const signal = deadline(config);
	const record = await keyring(readRecord(store, account, signal), signal).catch((error: unknown) => {
		if (error instanceof KeyringUnavailable) return "unavailable" as const;
		throw error;
	});
	if (record === "unavailable") return { text: "keyring unavailable" };
	const pending = ctx.get(account).flow;
	const waiting =
		pending && now() <= pending.expiresAt ? `; sign-in link pending (valid for ${minutes(pending.expiresAt - now())})` : "";
	if (!record?.tokens) return { text: `not signed in${waiting}`, needsSignIn: true };
	const bound = record.dpop !== undefined && dpopBound(record.tokens);
	if (record.expiresAt === undefined) return { text: `signed in${bound ? " (DPoP-bound)" : ""}${waiting}` };
	const expiry = `expires in ${minutes(record.expiresAt - now())}${bound ? "; DPoP-bound" : ""}`;
	if (!expired(record, now())) return { text: `signed in (${expiry})${waiting}` };
	if (record.tokens.refresh_token) return { text: `signed in (token expired; refreshed on next use)${waiting}` };
	return { text: `sign-in expired${waiting}`, needsSignIn: true };
}
