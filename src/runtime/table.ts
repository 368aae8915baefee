/**
 * The connection table's operations: per-server state records (replaced whole, re-read after every
 * `await`), the shared setup, the coalesced tool listing, failures turned into errors naming the
 * server, and status. How one server is opened and closed is not known here: `runtime.ts` builds
 * the table with its `open` and `close` (bound to `connect.ts`) and holds the `Runtime` face.
 */
import type { AuthProvider, Tool } from "@modelcontextprotocol/client";
import { awaitWith } from "../async.ts";
import type { Live, RuntimeOptions, ServerStatus } from "../contracts.ts";
import { AuthRequired, CallFailed, SdkUnavailable, SetupFailed } from "../errors.ts";
import { escapeName, sanitize } from "../output/text.ts";
import type { ServerConfig, ServerEntry } from "../schema.ts";
import type { Sdk } from "../sdk.lazy.ts";
import { loadSdk } from "../sdk.ts";
import { requestError, setupError } from "./failures.ts";
import { TailBuffer } from "./stderr-tail.ts";
import { nextIndex, type ToolIndex } from "./visible-tools.ts";

export type Connection =
	| Readonly<{ state: "idle" }>
	| Readonly<{ state: "connecting"; setup: Promise<Live>; abort: AbortController }>
	| Readonly<{ state: "ready"; live: Live; index?: ToolIndex; listedAt?: number; listing?: Promise<ToolIndex> }>
	| Readonly<{ state: "failed"; error: Error }>;

/**
 * One runtime's state: its options, the entries, the connection records, stderr tails and its
 * shutdown, and how to open one server (credentials first, nothing started on failure) and close one.
 */
export type Table = Readonly<{
	options: RuntimeOptions;
	entries: Map<string, ServerEntry>;
	connections: Map<string, Connection>;
	stderrTails: Map<string, TailBuffer>;
	shutdown: AbortController;
	open: (config: ServerConfig, signal: AbortSignal) => Promise<Live>;
	close: (live: Live) => Promise<void>;
}>;

export function connection(t: Table, name: string): Connection {
	return t.connections.get(name) ?? { state: "idle" };
}
/** Values never to show: those expanded from variables, the bearer token, and every credential seen. */
function secretsOf(t: Table, name: string): readonly string[] {
	const config = t.entries.get(name)?.config;
	const bearer = config?.bearerTokenEnv !== undefined ? t.options.env[config.bearerTokenEnv] : undefined;
	return [...(config?.secretValues ?? []), ...(bearer ? [bearer] : []), ...(t.options.auth?.secrets() ?? [])];
}
export function clean(t: Table, name: string, text: string): string {
	return sanitize(text, secretsOf(t, name));
}

export function tailOf(t: Table, name: string): TailBuffer {
	const existing = t.stderrTails.get(name);
	if (existing) return existing;
	const created = new TailBuffer(4096);
	t.stderrTails.set(name, created);
	return created;
}

export function knownNames(t: Table): string {
	const names = [...t.entries.keys()].map(escapeName);
	return names.length > 0 ? names.join(", ") : "none (add servers to mcp.json)";
}

/** The error for a server name the table does not hold. */
export function unknownServer(t: Table, name: string): CallFailed {
	return new CallFailed(name, `unknown MCP server "${escapeName(name)}"; configured: ${knownNames(t)}`, "refused");
}

/** The usable config of a server, or an error that says why not. */
export function configOf(t: Table, name: string): ServerConfig {
	const entry = t.entries.get(name);
	if (!entry) throw unknownServer(t, name);
	if (entry.error !== undefined || entry.config === undefined) {
		throw new SetupFailed(name, entry.error ?? `server "${name}" has no usable configuration`);
	}
	if (!entry.enabled) {
		throw new CallFailed(name, `MCP server "${name}" is disabled in ${entry.source.path}`, "refused");
	}
	return entry.config;
}

export async function stepUp(t: Table, sdk: Sdk, name: string, error: unknown): Promise<unknown> {
	const config = t.entries.get(name)?.config;
	if (!t.options.auth || !config || !sdk.InsufficientScopeError.isInstance(error)) return error;
	return t.options.auth.stepUp(config, error);
}

export async function credentials(t: Table, config: ServerConfig, signal: AbortSignal): Promise<AuthProvider | undefined> {
	if (config.auth === undefined || config.transport !== "http") return undefined;
	if (!t.options.auth) throw new AuthRequired(config.name, `server "${config.name}": authentication is not available here`);
	// The setup ends with its signal even if a keyring call cannot be cancelled (it runs on a thread).
	return awaitWith(t.options.auth.prepare(config, signal), signal, () => signal.reason);
}

export function ready(t: Table, name: string, signal?: AbortSignal): Promise<Live> {
	const config = configOf(t, name);
	if (t.shutdown.signal.aborted) return Promise.reject(new CallFailed(name, "the MCP session has ended", "shutdown"));
	const current = connection(t, name);
	if (current.state === "ready") return Promise.resolve(current.live);
	if (current.state === "failed") return Promise.reject(current.error);
	const cancelled = () => new CallFailed(name, `cancelled while waiting for MCP server "${name}" to start`, "cancelled");
	if (current.state === "connecting") return awaitWith(current.setup, signal, cancelled);

	const abort = new AbortController();
	const timer: { handle?: ReturnType<typeof setTimeout> } = {};
	const onShutdown = () => abort.abort(new Error("shutdown"));
	t.shutdown.signal.addEventListener("abort", onShutdown, { once: true });
	const timedOut = () => (abort.signal.reason as Error | undefined)?.message === "setup timeout";
	// The server's timeout bounds its own setup (credentials, spawn, handshake), not pi-mcp loading the
	// SDK, which the early start may still be waiting for: 100–150 ms inside Pi, seconds on a loaded machine.
	const setup = loadSdk()
		.then(() => {
			timer.handle = setTimeout(() => abort.abort(new Error("setup timeout")), config.requestTimeoutMs);
			timer.handle.unref();
			return t.open(config, abort.signal);
		})
		.then(
			(live) => {
				const now = connection(t, name);
				if (now.state === "connecting" && now.setup === setup) {
					t.connections.set(name, { state: "ready", live });
					return live;
				}
				// Superseded by a reconnect or shutdown while connecting: close what we opened.
				return t.close(live).then(() => {
					throw new CallFailed(name, `the connection to MCP server "${name}" was reset while starting`, "closed");
				});
			},
			async (error: unknown) => {
				const end = { ended: t.shutdown.signal.aborted, aborted: abort.signal.aborted, timedOut: timedOut() };
				const tail = t.stderrTails.get(name)?.text();
				// Missing credentials do not latch: once the user signs in, the next call connects. An SDK that
				// cannot load (a damaged installation) latches like any failed setup, naming the server.
				const failure =
					error instanceof AuthRequired
						? error
						: error instanceof SdkUnavailable
							? new SetupFailed(name, `MCP server "${name}" failed to start: ${error.message}`)
							: setupError(await loadSdk(), config, error, end, tail, (text) => clean(t, name, text));
				const now = connection(t, name);
				const next: Connection = failure instanceof AuthRequired ? { state: "idle" } : { state: "failed", error: failure };
				if (now.state === "connecting" && now.setup === setup) t.connections.set(name, next);
				throw failure;
			},
		);
	const settle = () => {
		clearTimeout(timer.handle);
		t.shutdown.signal.removeEventListener("abort", onShutdown);
	};
	setup.then(settle, settle);
	t.connections.set(name, { state: "connecting", setup, abort });
	return awaitWith(setup, signal, cancelled);
}

/** `index`'s `since`: any listing held will do (`HELD`), or only one sent from now on (`NEW`). */
export const HELD = Number.NEGATIVE_INFINITY;
export const NEW = Number.POSITIVE_INFINITY;

/**
 * Coalesced `tools/list`: concurrent callers share one request; the SDK keeps its own cache. A listing
 * held is used when it was sent at or after `since` (`performance.now()`), else the server lists again.
 */
export function index(t: Table, name: string, live: Live, since: number, signal?: AbortSignal): Promise<ToolIndex> {
	const current = connection(t, name);
	if (current.state !== "ready" || current.live !== live) {
		return Promise.reject(new CallFailed(name, `the connection to MCP server "${name}" was reset`, "closed"));
	}
	if (current.listing) return awaitWith(current.listing, signal, () => cancelledCall(t, name));
	if (current.index && (current.listedAt ?? HELD) >= since) return Promise.resolve(current.index);
	const timeout = t.entries.get(name)?.config?.requestTimeoutMs;
	const listedAt = performance.now();
	const listing = (
		live.client.getServerCapabilities()?.tools
			? live.client.listTools(undefined, { timeout, signal: t.shutdown.signal })
			: Promise.resolve({ tools: [] as Tool[] })
	).then(
		(result) => {
			const now = connection(t, name);
			const built = nextIndex(now.state === "ready" ? now.index : undefined, result.tools);
			if (now.state === "ready" && now.live === live)
				t.connections.set(name, { ...now, index: built, listedAt, listing: undefined });
			return built;
		},
		async (error: unknown) => {
			const now = connection(t, name);
			if (now.state === "ready" && now.live === live) t.connections.set(name, { ...now, listing: undefined });
			throw await callError(t, name, error, undefined);
		},
	);
	t.connections.set(name, { ...current, listing });
	return awaitWith(listing, signal, () => cancelledCall(t, name));
}

const cancelledCall = (_t: Table, name: string) =>
	new CallFailed(name, `the request to MCP server "${name}" was cancelled`, "cancelled");

/** A failed request as `CallFailed` naming the server (a step-up link for `403 insufficient_scope`). */
export async function callError(
	t: Table,
	name: string,
	thrown: unknown,
	signal: AbortSignal | undefined,
	tool?: string,
	request?: string,
) {
	const sdk = await loadSdk();
	const error = await stepUp(t, sdk, name, thrown);
	const what = tool
		? `tool "${escapeName(tool)}" on MCP server "${name}"`
		: request
			? `${request} on MCP server "${name}"`
			: `the request to MCP server "${name}"`;
	const end = { cancelled: signal?.aborted === true, ended: t.shutdown.signal.aborted };
	const timeoutMs = t.entries.get(name)?.config?.requestTimeoutMs ?? 0;
	return requestError(sdk, error, { name, what, timeoutMs, ...end }, (text) => clean(t, name, text));
}

export async function visibleTool(
	t: Table,
	name: string,
	toolName: string,
	signal?: AbortSignal,
): Promise<{ live: Live; tool: Tool }> {
	const live = await ready(t, name, signal);
	const first = await index(t, name, live, HELD, signal);
	const found = first.byName.get(toolName);
	if (found) return { live, tool: found };
	// Not in the index we hold: the server may have added it since; list once more before refusing.
	const fresh = first.hidden.has(toolName) ? first : await index(t, name, live, NEW, signal);
	const again = fresh.byName.get(toolName);
	if (again) return { live, tool: again };
	const reason = fresh.hidden.get(toolName);
	if (reason) throw new CallFailed(name, `tool "${escapeName(toolName)}" on MCP server "${name}" ${reason}`, "refused");
	const names = fresh.tools.map((tool) => escapeName(tool.name));
	const list = names.length > 12 ? `${names.slice(0, 12).join(", ")}, …` : names.join(", ");
	throw new CallFailed(
		name,
		clean(t, name, `MCP server "${name}" has no tool "${escapeName(toolName)}"; available: ${list || "none"}`),
		"refused",
	);
}

export async function reset(t: Table, name: string): Promise<void> {
	const current = connection(t, name);
	t.connections.set(name, { state: "idle" });
	if (current.state === "connecting") {
		current.abort.abort(new Error("reset"));
		await current.setup.catch(() => undefined);
	}
	if (current.state === "ready") await t.close(current.live);
}

export function statusOf(t: Table, entry: ServerEntry): ServerStatus {
	const base = {
		name: entry.name,
		source: entry.source,
		transport: entry.config?.transport,
		description: entry.config?.description ? sanitize(entry.config.description) : undefined,
		ignoredKeys: entry.ignoredKeys,
		stderrTail: clean(t, entry.name, t.stderrTails.get(entry.name)?.text() ?? "") || undefined,
	};
	if (entry.error !== undefined) return { ...base, state: "invalid", error: entry.error };
	if (!entry.enabled) return { ...base, state: "disabled" };
	const current = connection(t, entry.name);
	if (current.state === "failed") return { ...base, state: "failed", error: current.error.message };
	if (current.state !== "ready") return { ...base, state: current.state };
	return {
		...base,
		state: "ready",
		era: current.live.era,
		protocolVersion: current.live.protocolVersion,
		serverName: current.live.serverName ? sanitize(current.live.serverName) : undefined,
		toolCount: current.index?.tools.length,
	};
}
