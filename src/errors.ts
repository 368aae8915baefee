/** The few error classes callers branch on. Messages are already sanitised when constructed. */

/** A server's connection could not be set up; latched until `/mcp reconnect`. */
export class SetupFailed extends Error {
	override readonly name = "SetupFailed";
	readonly server: string;
	constructor(server: string, message: string) {
		super(message);
		this.server = server;
	}
}

/**
 * The MCP SDK itself could not be imported (a damaged or partial installation): no server can start
 * until pi-mcp is reinstalled. Raised by `loadSdk()` so every path says the same thing.
 */
export class SdkUnavailable extends Error {
	override readonly name = "SdkUnavailable";
	constructor(cause: string) {
		super(`pi-mcp could not load the MCP SDK (${cause}). Reinstall pi-mcp, then restart Pi.`);
	}
}

/** Credentials are missing or unusable; the message says what to do. */
export class AuthRequired extends Error {
	override readonly name = "AuthRequired";
	readonly server: string;
	constructor(server: string, message: string) {
		super(message);
		this.server = server;
	}
}

export type CallFailure = "cancelled" | "timeout" | "closed" | "shutdown" | "refused" | "error";

/** A request to a server failed (timeout, cancel, closed connection, refusal, protocol error). */
export class CallFailed extends Error {
	override readonly name = "CallFailed";
	readonly server: string;
	readonly reason: CallFailure;
	constructor(server: string, message: string, reason: CallFailure) {
		super(message);
		this.server = server;
		this.reason = reason;
	}
}

/** The message of an error, or the thrown value as text. */
export function errorText(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

/** Sign-in is needed: `url` is the one authorization link, also contained in the message. */
export class AuthorizationRequired extends AuthRequired {
	readonly url: string;
	constructor(server: string, message: string, url: string) {
		super(server, message);
		this.url = url;
	}
}
