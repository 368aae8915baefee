/**
 * The loopback receiver for OAuth redirects, one per extension instance. Flows register a random
 * `state` and get the redirect URI to put in their authorization link; the browser's redirect
 * back to that URI completes exactly one flow. Everything else is refused without consuming
 * anything: wrong method, path, `Host` (DNS rebinding), foreign `Origin`, unknown, expired or
 * spent `state`, oversized requests. Listeners exist only while a flow is pending. The paste
 * fallback (`completeFromUrl`) applies the same checks to a URL the user copied from the browser.
 * Nothing here ever starts a browser. What the service promises (`LoginService`) is `login.ts`'s.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { errorCode } from "../errors.ts";
import {
	DEFAULT_CALLBACK_PATH,
	FLOW_TTL_MS,
	type LoginFlow,
	type LoginService,
	MAX_CALLBACK_URL,
	type PasteOutcome,
} from "../login.ts";

/** A pasted callback URL was refused; the message says why (never quoting the URL). */
export class CallbackRejected extends Error {
	override readonly name = "CallbackRejected";
}

class Listener {
	readonly key: string;
	/** One server per loopback address (two for `localhost`: 127.0.0.1 and ::1). */
	readonly servers: Server[] = [];
	/** Resolves to the bound port. */
	readonly ready: Promise<number>;
	#bound: Readonly<{ host?: string; origin?: string }> = {};
	#busy = 0;

	/** `start` binds the servers (it runs at once) and resolves to the port. */
	constructor(key: string, start: (listener: Listener) => Promise<number>) {
		this.key = key;
		this.ready = start(this);
	}

	/** Exact `Host` header and `Origin` a legitimate callback carries, known once bound. */
	get bound(): Readonly<{ host?: string; origin?: string }> {
		return this.#bound;
	}

	boundAs(host: string, origin: string): void {
		this.#bound = { host, origin };
	}

	/** Callbacks being answered (the listener stays open until they are). */
	get busy(): number {
		return this.#busy;
	}

	enter(): void {
		this.#busy += 1;
	}

	leave(): void {
		this.#busy -= 1;
	}
}

type Pending = Readonly<{
	flow: LoginFlow;
	listener: string;
	/** Exact redirect URI, as given to the authorization server. */
	redirect: URL;
	expiresAt: number;
	timer: NodeJS.Timeout;
}>;

type Verdict =
	| Readonly<{ ok: true; pending: Pending; params: URLSearchParams }>
	| Readonly<{ ok: false; status: number; reason: string }>;

const HEADERS = {
	"Content-Type": "text/plain; charset=utf-8",
	"Cache-Control": "no-store",
	"Referrer-Policy": "no-referrer",
	"X-Content-Type-Options": "nosniff",
	Connection: "close",
} as const;

/**
 * Where a redirect URI's listener binds: the loopback addresses its host names. `localhost` gets
 * both families, because browsers may resolve it to ::1 first; the IPv6 one is optional (a machine
 * without an IPv6 loopback listens on 127.0.0.1 only).
 */
function bindAddresses(url: URL): readonly string[] {
	if (url.hostname === "[::1]") return ["::1"];
	if (url.hostname === "localhost") return ["127.0.0.1", "::1"];
	return [url.hostname];
}

/** No IPv6 loopback on this machine (as opposed to a busy port). */
const noAddress = (error: unknown) => ["EADDRNOTAVAIL", "EAFNOSUPPORT"].includes(errorCode(error) ?? "");

function bind(server: Server, port: number, address: string): Promise<number> {
	return new Promise<number>((resolve, reject) => {
		server.once("error", reject);
		server.listen(port, address, () => {
			server.off("error", reject);
			resolve((server.address() as AddressInfo).port);
		});
	});
}

function reply(res: ServerResponse, status: number, body: string, extra: Readonly<Record<string, string>> = {}): void {
	res.writeHead(status, { ...HEADERS, ...extra });
	res.end(`${body}\n`);
}

const REFUSED = "pi-mcp: this is not a sign-in callback pi-mcp is waiting for.";

/** The service's state: pending flows by `state`, listeners by address (the maps change in place). */
type Service = Readonly<{
	now: () => number;
	onClosed?: (port: number) => void;
	flows: Map<string, Pending>;
	listeners: Map<string, Listener>;
	/** Aborted once the service is disposed (one way: a disposed service stays so). */
	disposed: AbortController;
}>;

function flowsOn(s: Service, key: string): number {
	return [...s.flows.values()].filter((pending) => pending.listener === key).length;
}

function closeIfIdle(s: Service, key: string): void {
	const listener = s.listeners.get(key);
	if (!listener || flowsOn(s, key) > 0 || listener.busy > 0) return;
	s.listeners.delete(key);
	const closed = listener.servers.map(
		(server) =>
			new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeIdleConnections();
			}),
	);
	Promise.all([listener.ready, ...closed]).then(
		([port]) => s.onClosed?.(port),
		() => undefined,
	);
}

function forget(s: Service, state: string): void {
	const pending = s.flows.get(state);
	if (!pending) return;
	s.flows.delete(state);
	clearTimeout(pending.timer);
	closeIfIdle(s, pending.listener);
}

/** The checks shared by the receiver and the paste fallback, after the address was matched. */
function judgeQuery(s: Service, listenerKey: string, path: string, query: URLSearchParams): Verdict {
	const states = query.getAll("state");
	if (states.length !== 1 || !states[0]) return { ok: false, status: 400, reason: "the callback carries no state" };
	const pending = s.flows.get(states[0]);
	if (!pending || pending.listener !== listenerKey || pending.redirect.pathname !== path) {
		return {
			ok: false,
			status: 400,
			reason: "the callback's state matches no pending sign-in (unknown, already used or superseded)",
		};
	}
	if (s.now() > pending.expiresAt) {
		forget(s, states[0]);
		return { ok: false, status: 400, reason: "the sign-in link has expired; ask for a new one" };
	}
	const codes = query.getAll("code");
	const errors = query.getAll("error");
	if (codes.length + errors.length !== 1 || query.getAll("iss").length > 1) {
		return { ok: false, status: 400, reason: "the callback carries neither a single code nor an error" };
	}
	return { ok: true, pending, params: query };
}

function judgeRequest(s: Service, listener: Listener, req: IncomingMessage): Verdict {
	const target = req.url ?? "";
	if (target.length > MAX_CALLBACK_URL) return { ok: false, status: 414, reason: "too long" };
	if (req.method !== "GET") return { ok: false, status: 405, reason: "method" };
	if (listener.bound.host === undefined || req.headers.host !== listener.bound.host) {
		return { ok: false, status: 421, reason: "host" };
	}
	const origin = req.headers.origin;
	if (origin !== undefined && origin !== listener.bound.origin) return { ok: false, status: 403, reason: "origin" };
	if (!target.startsWith("/")) return { ok: false, status: 400, reason: "target" };
	const url = new URL(target, listener.bound.origin);
	const paths = new Set([...s.flows.values()].filter((p) => p.listener === listener.key).map((p) => p.redirect.pathname));
	if (!paths.has(url.pathname)) return { ok: false, status: 404, reason: "path" };
	return judgeQuery(s, listener.key, url.pathname, url.searchParams);
}

/** Spends the flow, then runs its completion; resolves to the outcome. */
async function consume(s: Service, pending: Pending, params: URLSearchParams): Promise<PasteOutcome> {
	s.flows.delete(pending.flow.state);
	clearTimeout(pending.timer);
	try {
		await pending.flow.onCallback(params);
		return "completed";
	} catch {
		return "failed";
	}
}

async function handle(s: Service, listener: Listener, req: IncomingMessage, res: ServerResponse): Promise<void> {
	const verdict = judgeRequest(s, listener, req);
	if (!verdict.ok) {
		const extra: Record<string, string> = verdict.status === 405 ? { Allow: "GET" } : {};
		reply(res, verdict.status, REFUSED, extra);
		return;
	}
	listener.enter();
	try {
		const server = verdict.pending.flow.server;
		const outcome = await consume(s, verdict.pending, verdict.params);
		if (outcome === "completed") {
			reply(res, 200, `pi-mcp: signed in to MCP server "${server}". You can close this tab and return to Pi.`);
		} else {
			reply(res, 400, `pi-mcp: sign-in to MCP server "${server}" did not complete. Return to Pi for details.`);
		}
	} finally {
		listener.leave();
		res.once("close", () => closeIfIdle(s, listener.key));
		if (res.writableFinished) closeIfIdle(s, listener.key);
	}
}

/** `configured`: the redirect URI whose host the browser will send; default: the ephemeral one. */
function listen(s: Service, key: string, addresses: readonly string[], port: number, configured: URL | undefined): Listener {
	const existing = s.listeners.get(key);
	if (existing) return existing;
	const listener = new Listener(key, (self) => bindAll(s, self, addresses, port, configured));
	s.listeners.set(key, listener);
	return listener;
}

/** Binds the listener's servers, one per address; resolves to the port, or closes them all and rejects. */
async function bindAll(
	s: Service,
	listener: Listener,
	addresses: readonly string[],
	port: number,
	configured: URL | undefined,
): Promise<number> {
	const { servers } = listener;
	const open = (): Server => {
		const server = createServer({ maxHeaderSize: 8192, requestTimeout: 30_000, headersTimeout: 10_000, keepAliveTimeout: 1 });
		server.on("request", (req: IncomingMessage, res: ServerResponse) => {
			handle(s, listener, req, res).catch(() => {
				if (!res.headersSent) reply(res, 500, REFUSED);
			});
		});
		servers.push(server);
		return server;
	};
	const [first = "127.0.0.1", ...more] = addresses;
	try {
		const actual = await bind(open(), port, first);
		// The other family on the same port; only a missing IPv6 loopback is tolerated.
		for (const address of more) {
			const server = open();
			await bind(server, actual, address).catch((error: unknown) => {
				servers.splice(servers.indexOf(server), 1);
				if (!noAddress(error)) throw Object.assign(error as Error, { address });
			});
		}
		listener.boundAs(
			configured ? configured.host : `${first}:${actual}`,
			configured ? configured.origin : `http://${first}:${actual}`,
		);
		return actual;
	} catch (error) {
		for (const server of servers) server.close();
		throw error;
	}
}

/** See `LoginService.begin`. */
async function begin(s: Service, flow: LoginFlow): Promise<string> {
	if (s.disposed.signal.aborted) throw new Error("the sign-in service has been shut down");
	if (!/^[A-Za-z0-9._~-]{16,512}$/.test(flow.state)) throw new Error("state must be 16 or more unreserved characters");
	if (s.flows.has(flow.state)) throw new Error("state is already in use");
	const configured = flow.redirectUri === undefined ? undefined : new URL(flow.redirectUri);
	if (configured && configured.protocol !== "http:") throw new Error("the redirect URI must be an http: loopback URL");
	const addresses = configured ? bindAddresses(configured) : ["127.0.0.1"];
	const port = configured ? Number(configured.port || 80) : 0;
	// A configured URI binds its own address; the ephemeral listener is shared by all other s.flows.
	const key = configured ? `${configured.hostname}:${port}` : "ephemeral";
	const listener = listen(s, key, addresses, port, configured);
	const placeholder = new URL(configured ? configured.href : `http://127.0.0.1${DEFAULT_CALLBACK_PATH}`);
	const expiresAt = s.now() + FLOW_TTL_MS;
	const timer = setTimeout(() => forget(s, flow.state), FLOW_TTL_MS);
	timer.unref();
	s.flows.set(flow.state, { flow, listener: key, redirect: placeholder, expiresAt, timer });
	try {
		const actual = await listener.ready;
		const redirect = configured
			? new URL(`${configured.origin}${configured.pathname}`)
			: new URL(`http://127.0.0.1:${actual}${DEFAULT_CALLBACK_PATH}`);
		const current = s.flows.get(flow.state);
		if (!current) throw new Error("the sign-in was cancelled");
		s.flows.set(flow.state, { ...current, redirect });
		return redirect.href;
	} catch (error) {
		forget(s, flow.state);
		if (s.listeners.get(key) === listener && flowsOn(s, key) === 0) s.listeners.delete(key);
		const code = errorCode(error);
		if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
			throw new Error(
				`cannot listen on ${placeholder.origin} for the sign-in redirect (${code}); free that port or change "oauth.redirectUri"`,
			);
		}
		throw error;
	}
}

/** See `LoginService.completeFromUrl`. */
async function completeFromUrl(s: Service, redirectedUrl: string, server?: string): Promise<PasteOutcome> {
	const text = redirectedUrl.trim();
	if (text.length > MAX_CALLBACK_URL) throw new CallbackRejected(`the pasted URL is longer than ${MAX_CALLBACK_URL} characters`);
	if (!URL.canParse(text))
		throw new CallbackRejected("the pasted text is not a URL; paste the whole address from the browser's address bar");
	const url = new URL(text);
	const state = url.searchParams.get("state") ?? "";
	const pending = s.flows.get(state);
	if (pending && `${url.origin}${url.pathname}` !== pending.redirect.href) {
		throw new CallbackRejected("the pasted URL is not the redirect address of a pending sign-in");
	}
	if (pending && server !== undefined && pending.flow.server !== server) {
		throw new CallbackRejected(`the pasted URL belongs to the sign-in of another server, not "${server}"`);
	}
	const verdict = judgeQuery(s, pending?.listener ?? "", url.pathname, url.searchParams);
	if (!verdict.ok) throw new CallbackRejected(verdict.reason);
	return consume(s, verdict.pending, verdict.params);
}

/** See `LoginService.dispose`. */
async function dispose(s: Service): Promise<void> {
	s.disposed.abort();
	for (const pending of s.flows.values()) clearTimeout(pending.timer);
	s.flows.clear();
	const all = [...s.listeners.values()];
	s.listeners.clear();
	await Promise.all(
		all.map(
			(listener) =>
				new Promise<void>((resolve) => {
					listener.ready.then(
						() => {
							Promise.all(
								listener.servers.map(
									(server) =>
										new Promise<void>((closed) => {
											server.close(() => closed());
											server.closeAllConnections();
										}),
								),
							).then(() => resolve());
						},
						() => resolve(),
					);
				}),
		),
	);
}

export type LoginServiceOptions = Readonly<{
	/** Defaults to Date.now. */
	now?: () => number;
	/** Called with a listener's port once it has stopped listening (the port is free); for tests. */
	onClosed?: (port: number) => void;
}>;

export function createLoginService(options: LoginServiceOptions = {}): LoginService {
	const s: Service = {
		now: options.now ?? Date.now,
		onClosed: options.onClosed,
		flows: new Map(),
		listeners: new Map(),
		disposed: new AbortController(),
	};
	return {
		begin: (flow) => begin(s, flow),
		cancel: (state) => forget(s, state),
		completeFromUrl: (redirectedUrl, server) => completeFromUrl(s, redirectedUrl, server),
		pending: () => s.flows.size,
		dispose: () => dispose(s),
	};
}
