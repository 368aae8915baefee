/**
 * The connection table's operations: per-server state records (replaced whole, re-read after every
 * `await`), the shared setup, the coalesced tool listing, failures turned into errors naming the
 * server, one tool call, and status; one lookup of a server (`configOf`: configured, usable, enabled).
 * How one server is opened and closed is `open.ts`'s; `runtime.ts` holds the `Runtime` face over this.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/client";
import { awaitWith, settledWithin } from "../async.ts";
import type { CallOptions, Live, RuntimeOptions, ServerStatus, TransportAuth } from "../contracts.ts";
import { AuthRequired, CallFailed, PI_WORDS, SdkUnavailable, SetupFailed } from "../errors.ts";
import { escapeName, sanitize } from "../output/text.ts";
import type { ServerConfig, ServerEntry } from "../schema.ts";
import type { Sdk } from "../sdk.lazy.ts";
import { loadSdk } from "../sdk.ts";
import { closedError, requestError, setupError } from "./failures.ts";
import { boundedInstructions } from "./instructions.ts";
import { closeLive, openServer } from "./open.ts";
import { filterMessage, type PinnedServers } from "./pinned.ts";
import { TailBuffer } from "./stderr-tail.ts";
import { checkedCall } from "./validate.ts";
import { filteredRefusal, filterFor, hiddenFor, hiddenSummary, nextIndex, type ToolIndex } from "./visible-tools.ts";

export type Connection =
	| Readonly<{ state: "idle" }>
	| Readonly<{ state: "connecting"; setup: Promise<Live>; abort: AbortController }>
	| Readonly<{ state: "ready"; live: Live; index?: ToolIndex; listing?: Promise<ToolIndex> }>
	| Readonly<{ state: "failed"; error: Error }>;

/**
 * One runtime's state: its options, the entries, the connection records, stderr tails and its shutdown.
 */
export type Table = Readonly<{
	options: RuntimeOptions;
	entries: Map<string, ServerEntry>;
	connections: Map<string, Connection>;
	stderrTails: Map<string, TailBuffer>;
	shutdown: AbortController;
	/** What the user approved of each server (#47) */ pins: PinnedServers;
}>;

/** How messages name the next step: the front end's words (Pi's by default). */
const wordsOf = (t: Table) => t.options.words ?? PI_WORDS;

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

export async function credentials(t: Table, config: ServerConfig, signal: AbortSignal): Promise<TransportAuth | undefined> {
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
	const onShutdown = () => abort.abort(new Error("shutdown"));
	t.shutdown.signal.addEventListener("abort", onShutdown, { once: true });
	const timedOut = () => (abort.signal.reason as Error | undefined)?.message === "setup timeout";
	// The server's timeout bounds its own setup (credentials, spawn, handshake), not pi-mcp loading the
	// SDK, which the early start may still be waiting for: 100–150 ms inside Pi, seconds on a loaded machine.
	const setup = loadSdk()
		.then(() => within(config.requestTimeoutMs, abort, () => openFor(t, config, abort.signal)))
		.then(
			(live) => {
				const now = connection(t, name);
				if (now.state === "connecting" && now.setup === setup) {
					t.connections.set(name, { state: "ready", live });
					return live;
				}
				// Superseded by a reconnect or shutdown while connecting: close what we opened.
				return closeLive(live).then(() => {
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
							: setupError(await loadSdk(), config, error, end, tail, (text) => clean(t, name, text), wordsOf(t));
				const now = connection(t, name);
				const next: Connection = failure instanceof AuthRequired ? { state: "idle" } : { state: "failed", error: failure };
				if (now.state === "connecting" && now.setup === setup) t.connections.set(name, next);
				throw failure;
			},
		);
	const settle = () => t.shutdown.signal.removeEventListener("abort", onShutdown);
	setup.then(settle, settle);
	t.connections.set(name, { state: "connecting", setup, abort });
	return awaitWith(setup, signal, cancelled);
}

/** `run`, aborted through `abort` once `ms` pass (the timer does not hold the process). */
async function within<T>(ms: number, abort: AbortController, run: () => Promise<T>): Promise<T> {
	const timer = setTimeout(() => abort.abort(new Error("setup timeout")), ms);
	timer.unref();
	try {
		return await run();
	} finally {
		clearTimeout(timer);
	}
}

type Wanted = "held" | "fresh" | "refresh";
/**
 * Coalesced `tools/list`: concurrent callers share one request; the SDK keeps its own cache. `held`: a
 * listing already held will do; `fresh`: the server lists again (joining a listing in flight).
 */
export function index(t: Table, name: string, live: Live, wanted: Wanted, signal?: AbortSignal): Promise<ToolIndex> {
	const current = connection(t, name);
	if (current.state !== "ready" || current.live !== live) {
		return Promise.reject(new CallFailed(name, `the connection to MCP server "${name}" was reset`, "closed"));
	}
	if (current.listing && wanted !== "refresh") return awaitWith(current.listing, signal, () => cancelledCall(t, name));
	if (current.index && wanted === "held") return Promise.resolve(current.index);
	const timeout = t.entries.get(name)?.config?.requestTimeoutMs;
	const options = { timeout, signal: t.shutdown.signal, ...(wanted === "refresh" && { cacheMode: "refresh" as const }) };
	const listing = (
		live.client.getServerCapabilities()?.tools
			? live.client.listTools(undefined, options)
			: Promise.resolve({ tools: [] as Tool[] })
	).then(
		(result) => {
			const now = connection(t, name);
			const built = nextIndex(now.state === "ready" ? now.index : undefined, result.tools, filterFor(t.entries.get(name)));
			if (now.state === "ready" && now.live === live) t.connections.set(name, { ...now, index: built, listing: undefined });
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
	return requestError(sdk, error, { name, what, timeoutMs, ...end }, (text) => clean(t, name, text), wordsOf(t));
}

export async function visibleTool(
	t: Table,
	name: string,
	toolName: string,
	signal?: AbortSignal,
): Promise<{ live: Live; tool: Tool }> {
	// A tool the user hid is refused from the configuration alone: nothing starts, nothing is sent.
	const refusal = filteredRefusal(filterFor(t.entries.get(name)), toolName);
	if (refusal && configOf(t, name))
		throw new CallFailed(name, `tool "${escapeName(toolName)}" on MCP server "${name}" ${refusal}`, "refused");
	const live = await ready(t, name, signal);
	const first = await index(t, name, live, "held", signal);
	const found = first.byName.get(toolName);
	if (found) return { live, tool: found };
	// Not in the index we hold: the server may have added it since; list once more before refusing.
	const fresh = hiddenFor(first, toolName) !== undefined ? first : await index(t, name, live, "fresh", signal);
	const again = fresh.byName.get(toolName);
	if (again) return { live, tool: again };
	const reason = t.pins.refusal(t.entries.get(name)?.config, "tools", toolName) ?? hiddenFor(fresh, toolName);
	if (reason) throw new CallFailed(name, `tool "${escapeName(toolName)}" on MCP server "${name}" ${reason}`, "refused");
	const names = fresh.tools.map((tool) => escapeName(tool.name));
	const list = names.length > 12 ? `${names.slice(0, 12).join(", ")}, …` : names.join(", ");
	throw new CallFailed(
		name,
		clean(t, name, `MCP server "${name}" has no tool "${escapeName(toolName)}"; available: ${list || "none"}`),
		"refused",
	);
}

const forget = (t: Table, name: string, now = connection(t, name)) =>
	now.state === "ready" && t.connections.set(name, { ...now, index: undefined });
export async function reset(t: Table, name: string): Promise<void> {
	const current = connection(t, name);
	t.connections.set(name, { state: "idle" });
	if (current.state === "connecting") {
		current.abort.abort(new Error("reset"));
		await current.setup.catch(() => undefined);
	}
	if (current.state === "ready") await closeLive(current.live);
}

export function statusOf(t: Table, entry: ServerEntry): ServerStatus {
	const base = {
		name: entry.name,
		source: entry.source,
		transport: entry.config?.transport,
		description: entry.config?.description ? sanitize(entry.config.description) : undefined,
		ignoredKeys: entry.ignoredKeys,
		stderrTail: clean(t, entry.name, t.stderrTails.get(entry.name)?.text() ?? "") || undefined,
		pins: t.pins.status(entry.config),
	};
	if (entry.error !== undefined) return { ...base, state: "invalid", error: entry.error };
	if (!entry.enabled) return { ...base, state: "disabled" };
	const current = connection(t, entry.name);
	if (current.state === "failed") return { ...base, state: "failed", error: current.error.message };
	const hiddenTools = hiddenSummary(filterFor(entry), current.state === "ready" ? current.index : undefined);
	if (current.state !== "ready") return { ...base, state: current.state, hiddenTools };
	const instructions = t.pins.instructions(entry.config, current.live.instructions);
	return {
		...base,
		hiddenTools,
		instructions: boundedInstructions(instructions, secretsOf(t, entry.name)),
		state: "ready",
		era: current.live.era,
		protocolVersion: current.live.protocolVersion,
		serverName: current.live.serverName ? sanitize(current.live.serverName) : undefined,
		toolCount: current.index?.tools.length,
	};
}

/**
 * Opens one server for the table: its credentials, stderr tail, step-up mapping and close handling.
 * Credentials are checked before anything connects: a missing one never costs a process or a request.
 */
export async function openFor(t: Table, config: ServerConfig, signal: AbortSignal): Promise<Live> {
	const name = config.name;
	const authProvider = await credentials(t, config, signal);
	const pins = await t.pins.prepare(config);
	const tail = tailOf(t, name);
	const live = await openServer(config, {
		clientInfo: t.options.clientInfo,
		signal,
		authProvider,
		tail,
		mapError: async (error) => stepUp(t, await loadSdk(), name, error),
		filter: pins && ((message) => filterMessage(pins, message)),
		onListChanged: (kind) => kind === "tools" && forget(t, name), // the next use (and `confirm`) lists anew
		onClose: (live, exited) => {
			const current = connection(t, name);
			if (current.state !== "ready" || current.live !== live) return;
			const failed: Connection = {
				state: "failed",
				error: closedError(name, tail.text(), (text) => clean(t, name, text), wordsOf(t)),
			};
			t.connections.set(name, failed);
			// The exit comes a moment after the stream's end: the message gains it, unless a reset came first.
			void exited.then((exit) => {
				if (exit && t.connections.get(name) === failed) {
					t.connections.set(name, {
						state: "failed",
						error: closedError(name, tail.text(), (text) => clean(t, name, text), wordsOf(t), exit),
					});
				}
			});
		},
	});
	pins?.instructions(live.instructions); // pinned at the first connection
	return live;
}

/** One tool call on a server's client, connecting first if needed; errors name the server and the tool. */
export async function callTool(
	t: Table,
	name: string,
	toolName: string,
	args: Record<string, unknown>,
	callOptions: CallOptions,
): Promise<CallToolResult> {
	const { signal, onProgress } = callOptions;
	const { live, tool } = await visibleTool(t, name, toolName, signal);
	const timeout = configOf(t, name).requestTimeoutMs;
	// The caller's signal goes straight through (AbortSignal.any costs ~9 µs a call); shutdown closes
	// every client, which rejects calls in flight, and callError names the session's end.
	// Structured results are checked off Pi's thread, within the call's timeout (#39).
	const call = () =>
		live.client.callTool(
			{ name: toolName, arguments: args },
			{
				signal,
				timeout,
				resetTimeoutOnProgress: true,
				maxTotalTimeout: Math.max(timeout, 30 * 60_000),
				toolDefinition: tool,
				...(onProgress
					? {
							onprogress: (p: { progress: number; total?: number; message?: string }) =>
								onProgress({ progress: p.progress, total: p.total, message: p.message ? sanitize(p.message) : undefined }),
						}
					: {}),
			},
		) as Promise<CallToolResult>;
	try {
		return await checkedCall(live.outputChecks, tool.outputSchema, { timeoutMs: timeout, signal }, call);
	} catch (error) {
		throw await callError(t, name, error, signal, toolName);
	}
}

/** Replaces the entries; connections whose entry changed or vanished are closed. */
export async function update(t: Table, servers: readonly ServerEntry[]): Promise<void> {
	const next = new Map(servers.map((entry) => [entry.name, entry]));
	const changed = [...t.entries.keys()].filter((name) => JSON.stringify(t.entries.get(name)) !== JSON.stringify(next.get(name)));
	t.entries.clear();
	for (const [name, entry] of next) t.entries.set(name, entry);
	await Promise.all(changed.map((name) => reset(t, name)));
	for (const name of changed) if (!next.has(name)) t.connections.delete(name);
}

/** How long `dispose` waits for an aborted setup to wind down. */
const SHUTDOWN_SETUP_WAIT_MS = 2000;

/** Aborts everything, closes every client and kills every process group. Idempotent. */
export async function dispose(t: Table): Promise<void> {
	if (!t.shutdown.signal.aborted) t.shutdown.abort(new Error("shutdown"));
	const all = [...t.connections.entries()];
	for (const [name] of all) t.connections.set(name, { state: "idle" });
	await Promise.all(
		all.map(async ([, current]) => {
			if (current.state === "connecting") {
				current.abort.abort(new Error("shutdown"));
				// An aborted setup ends promptly (it closes what it opened); the bound is a backstop so that
				// nothing it waits on can keep Pi from exiting.
				await settledWithin(current.setup, SHUTDOWN_SETUP_WAIT_MS);
			}
			if (current.state === "ready") await closeLive(current.live);
		}),
	);
}
