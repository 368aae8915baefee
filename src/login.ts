/**
 * Sign-in as the user meets it: the authorization link (its words, how long it stays valid, the
 * paste fallback), the notices when a sign-in completes or fails, and what the transient loopback
 * promises (`LoginService`; `login/receiver.ts` is that loopback). The OAuth itself (the SDK's
 * `auth()`, the record, refresh) is `auth.ts`'s. Its commands are the front end's (`Words`); nothing here
 * opens a browser.
 */
import { PI_WORDS, type Words } from "./errors.ts";

/** How long an authorization link stays valid. */
export const FLOW_TTL_MS = 5 * 60_000;
/** Longest callback URL accepted (request target or pasted URL), in characters. */
export const MAX_CALLBACK_URL = 4096;
/** Path of the default redirect URI (`http://127.0.0.1:<ephemeral port>/callback`). */
export const DEFAULT_CALLBACK_PATH = "/callback";

export type LoginFlow = Readonly<{
	/** Server name; shown in the browser's answer and checked by the paste fallback. */
	server: string;
	/** Random, unguessable; the key of the flow. */
	state: string;
	/** A configured loopback redirect URI (`oauth.redirectUri`); default: ephemeral port on 127.0.0.1. */
	redirectUri?: string;
	/**
	 * Receives the callback's query parameters exactly once (`code`/`iss`, or `error`). Rejecting
	 * means the sign-in failed; the flow is spent either way and reports the outcome itself.
	 */
	onCallback(params: URLSearchParams): Promise<void>;
}>;

export type PasteOutcome = "completed" | "failed";

export interface LoginService {
	/** Registers a flow and returns the redirect URI to use in its authorization link. */
	begin(flow: LoginFlow): Promise<string>;
	/** Forgets a pending flow (superseded by a new link); unknown states are ignored. */
	cancel(state: string): void;
	/**
	 * Completes a flow from the URL the browser was redirected to (for browsers on another machine).
	 * Throws `CallbackRejected` when the URL matches no pending flow (nothing is consumed); once a
	 * flow matched, its outcome is reported by the flow and returned here.
	 */
	completeFromUrl(redirectedUrl: string, server?: string): Promise<PasteOutcome>;
	/** Number of flows waiting for their callback. */
	pending(): number;
	/** Forgets every flow and closes every listener. Idempotent. */
	dispose(): Promise<void>;
}

/** Why a link is offered. */
export type Reason = "sign-in" | "expired" | "step-up" | "login";

/** A pending authorization link. */
export type Flow = Readonly<{ state: string; url: string; expiresAt: number; reason: Reason; scope?: string }>;

export function minutes(ms: number): string {
	if (ms < 60_000) return "less than a minute";
	const total = Math.round(ms / 60_000);
	if (total < 120) return `${total} min`;
	return `${Math.round(total / 60)} h`;
}

/** Stands for the link while the message around it is sanitised. */
const LINK = "\u0000link\u0000";

function linkMessage(config: Readonly<{ name: string }>, url: string, reason: Reason, words: Words, scope?: string): string {
	const name = config.name;
	const paste = words.paste
		? ` If the browser runs on another machine, the address it ends on can be pasted with: ${words.paste(name)}`
		: "";
	if (reason === "login") {
		return `Open this link in your browser to sign in to MCP server "${name}":\n${url}\nThe link is valid for ${minutes(FLOW_TTL_MS)}.${paste}`;
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
		`completed, then continue. The link is valid for ${minutes(FLOW_TTL_MS)}.${paste}`
	);
}

/** The link's message for the model or the user; only the text around the link passes `clean`. */
export function linkText<C extends Readonly<{ name: string }>>(
	clean: (config: C, text: string) => string,
	config: C,
	flow: Flow,
	words: Words = PI_WORDS,
): string {
	// The link is built by the SDK from public values only (no token, secret or verifier); it is
	// kept out of the sanitiser so that a redacted configuration value cannot break it.
	const [lead = "", tail = ""] = linkMessage(config, LINK, flow.reason, words, flow.scope).split(LINK);
	return `${clean(config, lead)}${flow.url}${clean(config, tail)}`;
}

/** What the user and the agent are told when the browser's redirect comes back. */
export const notices = {
	signedIn: (name: string) => `Signed in to MCP server "${name}". Calls to it can continue now.`,
	refused: (name: string, detail: string, words: Words = PI_WORDS) =>
		`Sign-in to MCP server "${name}" was refused by the authorization server (${detail}). Run ${words.login(name)} to try again.`,
	failed: (name: string, reason: string, words: Words = PI_WORDS) =>
		`Sign-in to MCP server "${name}" failed: ${reason.replace(/\.$/, "")}. Run ${words.login(name)} for a new link.`,
} as const;
