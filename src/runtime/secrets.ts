/**
 * The runtime's part of stored secrets and redaction: an entry's `${secret:NAME}` values are read
 * right before its transport is made (never at session start), and what a server returns passes the
 * one exact-value rule (`output/redact.ts`) before anyone reads it.
 */
import { awaitWith } from "../async.ts";
import { secretNames } from "../config/values.ts";
import type { Credentials, RuntimeOptions } from "../contracts.ts";
import { SetupFailed } from "../errors.ts";
import type { ServerConfig } from "../schema.ts";

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

/** The values never to show for one entry: its configured secrets, its bearer token, and every credential seen. */
export function secretsFor(config: ServerConfig | undefined, options: Pick<RuntimeOptions, "env" | "auth">): readonly string[] {
	const bearer = config?.bearerTokenEnv !== undefined ? options.env[config.bearerTokenEnv] : undefined;
	return [...(config?.secretValues ?? []), ...(bearer ? [bearer] : []), ...(options.auth?.secrets() ?? [])];
}
