/** The few error classes callers branch on. Messages are already sanitised when constructed. */

/**
 * What a message tells the user to run next, worded by the front end that shows it (the extension's `/mcp …`,
 * the shell's `pi-mcp …`): the front end hands its words to the session, and messages are built with them.
 */
export type Words = Readonly<{
	/** Starts a failed server again once its cause is fixed. */
	reconnect: (server: string) => string;
	/** A new sign-in link. */
	login: (server: string) => string;
	/** Where the address a remote browser ended on can be pasted; none where the sign-in asks for it itself. */
	paste?: (server: string) => string;
}>;

/** Pi's words (the extension's, and the default). */
export const PI_WORDS: Words = {
	reconnect: (server) => `/mcp reconnect ${server}`,
	login: (server) => `/mcp login ${server}`,
	paste: (server) => `/mcp login ${server} <that address>`,
};

/** The next step a message names, as data: its kind and its server. */
export type Hint = Readonly<{ kind: "reconnect" | "login"; server: string }>;

/** A message made again with another front end's words (the manager's items rather than Pi's commands). */
export type Worded = (words: Words) => string;

/** A server's connection could not be set up; latched until `/mcp reconnect`. */
export class SetupFailed extends Error {
	override readonly name = "SetupFailed";
	readonly server: string;
	readonly hint?: Hint;
	readonly worded?: Worded;
	constructor(server: string, message: string, hint?: Hint, worded?: Worded) {
		super(message);
		this.server = server;
		this.hint = hint;
		this.worded = worded;
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
	readonly hint?: Hint;
	readonly worded?: Worded;
	constructor(server: string, message: string, hint?: Hint, worded?: Worded) {
		super(message);
		this.server = server;
		this.hint = hint;
		this.worded = worded;
	}
}

export type CallFailure = "cancelled" | "timeout" | "closed" | "shutdown" | "refused" | "error";

/** A request to a server failed (timeout, cancel, closed connection, refusal, protocol error). */
export class CallFailed extends Error {
	override readonly name = "CallFailed";
	readonly server: string;
	readonly reason: CallFailure;
	readonly hint?: Hint;
	readonly worded?: Worded;
	constructor(server: string, message: string, reason: CallFailure, hint?: Hint, worded?: Worded) {
		super(message);
		this.server = server;
		this.reason = reason;
		this.hint = hint;
		this.worded = worded;
	}
}

/** How an error's message is made with a front end's words, where it names a next step. */
export function wordedOf(error: unknown): Worded | undefined {
	return error instanceof SetupFailed || error instanceof AuthRequired || error instanceof CallFailed ? error.worded : undefined;
}

/** The message of an error, or the thrown value as text. */
export function errorText(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

/** Sign-in is needed: `url` is the one authorization link, also contained in the message. */
export class AuthorizationRequired extends AuthRequired {
	readonly url: string;
	constructor(server: string, message: string, url: string, worded?: Worded) {
		super(server, message, undefined, worded);
		this.url = url;
	}
}
