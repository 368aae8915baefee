/**
 * An HTTP entry's credentials: `auth` (or what `bearerTokenEnv` / `oauth` imply), and the `oauth`
 * settings checked against their grant. Only names of environment variables, never a secret itself.
 */

import { checkKeys, envName, type Fields, fail, isObject, optionalString } from "./fields.ts";

export type AuthKind = "oauth" | "bearer";
export type GrantType = "authorization_code" | "client_credentials";

export type OAuthSettings = Readonly<{
	/** Default `authorization_code`. */
	grantType: GrantType;
	clientId?: string;
	/** Name of the environment variable holding the client secret (never the secret itself). */
	clientSecretEnv?: string;
	/** Exact issuer; required with a pre-registered `clientId` and for `client_credentials`. */
	issuer?: string;
	/** Loopback redirect URI; default: an ephemeral port on 127.0.0.1 with path `/callback`. */
	redirectUri?: string;
	/** HTTPS URL of this client's metadata document (CIMD): the `client_id` where the server supports it. */
	clientMetadataUrl?: string;
	scope?: string;
}>;

const OAUTH_KEYS = ["grantType", "clientId", "clientSecretEnv", "issuer", "redirectUri", "clientMetadataUrl", "scope"];

/** The kind of credentials an HTTP entry uses: `auth` as written, or what `bearerTokenEnv` / `oauth` imply. */
export function authKind(raw: Fields): AuthKind | undefined {
	const { auth } = raw;
	if (auth === undefined) {
		if (raw.bearerTokenEnv !== undefined && raw.oauth !== undefined) {
			fail('fields "bearerTokenEnv" and "oauth" exclude each other; set "auth" to "bearer" or "oauth"');
		}
		if (raw.bearerTokenEnv !== undefined) return "bearer";
		if (raw.oauth !== undefined) return "oauth";
		return undefined;
	}
	if (isObject(auth)) fail('field "auth" must be "oauth" or "bearer" (Pi\'s auth.provider form is not supported)');
	if (auth !== "oauth" && auth !== "bearer") fail('field "auth" must be "oauth" or "bearer"');
	if (auth === "bearer" && raw.oauth !== undefined) fail('field "oauth" does not apply to auth "bearer"');
	if (auth === "oauth" && raw.bearerTokenEnv !== undefined) fail('field "bearerTokenEnv" does not apply to auth "oauth"');
	return auth;
}

export function oauthSettings(raw: Fields): OAuthSettings {
	const value = raw.oauth ?? {};
	if (!isObject(value)) fail('field "oauth" must be an object');
	checkKeys(value, OAUTH_KEYS, "oauth.");
	const grant = value.grantType ?? "authorization_code";
	if (grant !== "authorization_code" && grant !== "client_credentials") {
		fail('field "oauth.grantType" must be "authorization_code" or "client_credentials"');
	}
	const settings: OAuthSettings = {
		grantType: grant,
		clientId: optionalString(value, "clientId", "oauth.clientId"),
		clientSecretEnv: envName(value, "clientSecretEnv", "oauth.clientSecretEnv"),
		issuer: optionalString(value, "issuer", "oauth.issuer"),
		redirectUri: optionalString(value, "redirectUri", "oauth.redirectUri"),
		clientMetadataUrl: optionalString(value, "clientMetadataUrl", "oauth.clientMetadataUrl"),
		scope: optionalString(value, "scope", "oauth.scope"),
	};
	if (grant === "client_credentials") {
		const missing = (["clientId", "clientSecretEnv", "issuer"] as const).find((key) => settings[key] === undefined);
		if (missing) fail(`field "oauth.${missing}" is required for grantType "client_credentials"`);
		if (settings.redirectUri !== undefined) fail('field "oauth.redirectUri" does not apply to "client_credentials"');
		if (settings.clientMetadataUrl !== undefined) fail('field "oauth.clientMetadataUrl" does not apply to "client_credentials"');
	}
	if (settings.clientId !== undefined && settings.clientMetadataUrl !== undefined) {
		fail('fields "oauth.clientId" and "oauth.clientMetadataUrl" exclude each other (the document\'s URL is the client ID)');
	}
	if (grant === "authorization_code" && settings.clientId !== undefined && settings.issuer === undefined) {
		fail('field "oauth.issuer" is required with a pre-registered "oauth.clientId"');
	}
	return settings;
}
