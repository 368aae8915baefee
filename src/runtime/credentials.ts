/**
 * What a connection needs from the credentials side, and what it must never show: an entry's
 * `${secret:NAME}` values read right before its transport is made (never at session start), the
 * transport's auth provider (a missing sign-in costs no process nor request), a `403 insufficient_scope`
 * turned into a link for the wider scope, and the values no message or result may carry.
 */
import { awaitWith } from "../async.ts";
import { secretNames } from "../config/values.ts";
import type { Credentials, RuntimeOptions, TransportAuth } from "../contracts.ts";
import { AuthRequired, SetupFailed } from "../errors.ts";
import type { ServerConfig } from "../schema.ts";
import { loadSdk } from "../sdk.ts";

/** The entry to open: with its stored secrets in place, or as is when it names none. */
export function withStoredSecrets(
	auth: Credentials | undefined,
	config: ServerConfig,
	signal: AbortSignal,
): Promise<ServerConfig> {
	if (secretNames(config).length === 0) return Promise.resolve(config);
	if (!auth?.withSecrets) {
		return Promise.reject(new SetupFailed(config.name, `MCP server "${config.name}": stored secrets are not available here`));
	}
	return awaitWith(auth.withSecrets(config, signal), signal, () => signal.reason);
}

/** The auth provider for an HTTP entry with `auth`, or none; `AuthRequired` when credentials are missing. */
export async function transportAuth(
	auth: Credentials | undefined,
	config: ServerConfig,
	signal: AbortSignal,
): Promise<TransportAuth | undefined> {
	if (config.auth === undefined || config.transport !== "http") return undefined;
	if (!auth) throw new AuthRequired(config.name, `server "${config.name}": authentication is not available here`);
	// The setup ends with its signal even if a keyring call cannot be cancelled (it runs on a thread).
	return awaitWith(auth.prepare(config, signal), signal, () => signal.reason);
}

/** A `403 insufficient_scope` becomes an error carrying a link for the wider scope; other errors pass. */
export async function stepUp(auth: Credentials | undefined, config: ServerConfig | undefined, error: unknown): Promise<unknown> {
	const sdk = await loadSdk();
	if (!auth || !config || !sdk.InsufficientScopeError.isInstance(error)) return error;
	return auth.stepUp(config, error);
}

/** The values never to show for one entry: its configured secrets, its bearer token, and every credential seen. */
export function secretsFor(config: ServerConfig | undefined, options: Pick<RuntimeOptions, "env" | "auth">): readonly string[] {
	const bearer = config?.bearerTokenEnv !== undefined ? options.env[config.bearerTokenEnv] : undefined;
	return [...(config?.secretValues ?? []), ...(bearer ? [bearer] : []), ...(options.auth?.secrets() ?? [])];
}
