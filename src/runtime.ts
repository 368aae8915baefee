/**
 * The connection table: one SDK client per server, opened lazily by `connect.ts` and shared by
 * concurrent callers; independent calls; latched failures; reset and teardown. State per server
 * is a readonly record replaced whole; every `await` is followed by a re-read (a reconnect or
 * shutdown may have replaced it).
 */

import type { AuthProvider, CallToolResult, Client, InsufficientScopeError, Tool } from "@modelcontextprotocol/client";
import { awaitWith, settledWithin } from "./async.ts";
import { TailBuffer } from "./bounded.ts";
import type { ServerEntry } from "./config.ts";
import { type ClientInfo, closeLive, type Live, openServer } from "./connect.ts";
import { AuthRequired, CallFailed, SetupFailed } from "./errors.ts";
import { closedError, requestError, setupError } from "./failures.ts";
import { escapeName } from "./output.ts";
import { sanitize } from "./redact.ts";
import type { ServerConfig, ServerSource } from "./schema.ts";
import { loadSdk, type Sdk } from "./sdk.ts";
import { nextIndex, type ToolIndex } from "./toolindex.ts";

export type { ClientInfo } from "./connect.ts";

/**
 * What the runtime needs from credentials (`auth.ts` provides it; declared here so that the
 * runtime does not depend on the auth modules).
 */
export interface Credentials {
	/**
	 * The transport's auth provider, or `undefined`; throws `AuthRequired` when sign-in is needed.
	 * `signal` is the setup's (timeout, reconnect, shutdown): requests and keyring calls stop with it.
	 */
	prepare(config: ServerConfig, signal?: AbortSignal): Promise<AuthProvider | undefined>;
	/** A `403 insufficient_scope`: an error carrying a new link for the wider scope. */
	stepUp(config: ServerConfig, error: InsufficientScopeError): Promise<Error>;
	/** Every secret value seen this session, for the sanitiser. */
	secrets(): readonly string[];
}

export type RuntimeOptions = Readonly<{
	servers: readonly ServerEntry[];
	env: Readonly<Record<string, string | undefined>>;
	clientInfo: ClientInfo;
	/** Credentials for servers with `auth`; without it such servers fail with `AuthRequired`. */
	auth?: Credentials;
}>;

export type ConnectionState = "idle" | "connecting" | "ready" | "failed" | "disabled" | "invalid";

export type ServerStatus = Readonly<{
	name: string;
	source: ServerSource;
	state: ConnectionState;
	transport?: "stdio" | "http";
	description?: string;
	error?: string;
	era?: string;
	protocolVersion?: string;
	serverName?: string;
	toolCount?: number;
	stderrTail?: string;
	ignoredKeys: readonly string[];
}>;

export type Progress = Readonly<{ progress: number; total?: number; message?: string }>;

export type CallOptions = Readonly<{ signal?: AbortSignal; onProgress?: (progress: Progress) => void }>;

/** A server capability a request needs; checked before sending so a missing one gets a clear message. */
export type Capability = "resources" | "prompts" | "completions";

/** Options the SDK request methods take: the caller's cancel and the timeout (shutdown closes the client). */
export type RequestOptions = Readonly<{ signal?: AbortSignal; timeout: number }>;

type Connection =
	| Readonly<{ state: "idle" }>
	| Readonly<{ state: "connecting"; setup: Promise<Live>; abort: AbortController }>
	| Readonly<{ state: "ready"; live: Live; index?: ToolIndex; listing?: Promise<ToolIndex> }>
	| Readonly<{ state: "failed"; error: Error }>;

export interface Runtime {
	/** State of every configured server; never connects. */
	status(): readonly ServerStatus[];
	/** Names of all entries, for completions. */
	names(): readonly string[];
	/** Connects if needed and lists the model-visible tools (coalesced per server). */
	tools(server: string, signal?: AbortSignal): Promise<readonly Tool[]>;
	/** The definition of one model-visible tool. */
	tool(server: string, name: string, signal?: AbortSignal): Promise<Tool>;
	call(server: string, tool: string, args: Record<string, unknown>, options?: CallOptions): Promise<CallToolResult>;
	/**
	 * Runs one SDK request on a server's client (connecting if needed), after checking the
	 * capability; errors become `CallFailed` with the server named. `what` describes the request.
	 */
	request<T>(
		server: string,
		what: string,
		capability: Capability,
		run: (client: Client, options: RequestOptions) => Promise<T>,
		signal?: AbortSignal,
	): Promise<T>;
	/** Closes the client and resets the server to idle (and clears a latched failure). */
	reset(server: string): Promise<void>;
	/** Connects now (used by `/mcp reconnect`); resolves to the status afterwards. */
	connect(server: string, signal?: AbortSignal): Promise<ServerStatus>;
	/**
	 * Starts the shared setup of an idle, enabled server without waiting for it (the model is still
	 * writing the call that will join it), and with `tools` also the tool listing that call needs. A
	 * failure latches exactly as a call's would, and the call reports it. Anything else: nothing.
	 */
	start(server: string, options?: Readonly<{ tools?: boolean }>): void;
	/** Replaces the entries; connections whose entry changed or vanished are closed. */
	update(servers: readonly ServerEntry[]): Promise<void>;
	/** Aborts everything, closes every client and kills every process group. Idempotent. */
	dispose(): Promise<void>;
}

/** How long `dispose` waits for an aborted setup to wind down. */
const SHUTDOWN_SETUP_WAIT_MS = 2000;

export function createRuntime(options: RuntimeOptions): Runtime {
	const entries = new Map<string, ServerEntry>(options.servers.map((entry) => [entry.name, entry]));
	const connections = new Map<string, Connection>();
	const stderrTails = new Map<string, TailBuffer>();
	const shutdown = new AbortController();

	const connection = (name: string): Connection => connections.get(name) ?? { state: "idle" };
	/** Values never to show: those expanded from variables, the bearer token, and every credential seen. */
	const secretsOf = (name: string): readonly string[] => {
		const config = entries.get(name)?.config;
		const bearer = config?.bearerTokenEnv !== undefined ? options.env[config.bearerTokenEnv] : undefined;
		return [...(config?.secretValues ?? []), ...(bearer ? [bearer] : []), ...(options.auth?.secrets() ?? [])];
	};
	const clean = (name: string, text: string): string => sanitize(text, secretsOf(name));

	function tailOf(name: string): TailBuffer {
		const existing = stderrTails.get(name);
		if (existing) return existing;
		const created = new TailBuffer(4096);
		stderrTails.set(name, created);
		return created;
	}

	function knownNames(): string {
		const names = [...entries.keys()].map(escapeName);
		return names.length > 0 ? names.join(", ") : "none (add servers to mcp.json)";
	}

	/** The usable config of a server, or an error that says why not. */
	function configOf(name: string): ServerConfig {
		const entry = entries.get(name);
		if (!entry) throw new CallFailed(name, `unknown MCP server "${escapeName(name)}"; configured: ${knownNames()}`, "refused");
		if (entry.error !== undefined || entry.config === undefined) {
			throw new SetupFailed(name, entry.error ?? `server "${name}" has no usable configuration`);
		}
		if (!entry.enabled) {
			throw new CallFailed(name, `MCP server "${name}" is disabled in ${entry.source.path}`, "refused");
		}
		return entry.config;
	}

	async function stepUp(sdk: Sdk, name: string, error: unknown): Promise<unknown> {
		const config = entries.get(name)?.config;
		if (!options.auth || !config || !sdk.InsufficientScopeError.isInstance(error)) return error;
		return options.auth.stepUp(config, error);
	}

	async function credentials(config: ServerConfig, signal: AbortSignal): Promise<AuthProvider | undefined> {
		if (config.auth === undefined || config.transport !== "http") return undefined;
		if (!options.auth) throw new AuthRequired(config.name, `server "${config.name}": authentication is not available here`);
		// The setup ends with its signal even if a keyring call cannot be cancelled (it runs on a thread).
		return awaitWith(options.auth.prepare(config, signal), signal, () => signal.reason);
	}

	/** Credentials are checked before anything connects: a missing one never costs a process or a request. */
	async function open(config: ServerConfig, signal: AbortSignal): Promise<Live> {
		const name = config.name;
		const authProvider = await credentials(config, signal);
		const tail = tailOf(name);
		return openServer(config, {
			clientInfo: options.clientInfo,
			signal,
			authProvider,
			tail,
			mapError: async (error) => stepUp(await loadSdk(), name, error),
			onClose: (live) => {
				const current = connection(name);
				if (current.state !== "ready" || current.live !== live) return;
				connections.set(name, { state: "failed", error: closedError(name, tail.text(), (text) => clean(name, text)) });
			},
		});
	}

	function ready(name: string, signal?: AbortSignal): Promise<Live> {
		const config = configOf(name);
		if (shutdown.signal.aborted) return Promise.reject(new CallFailed(name, "the MCP session has ended", "shutdown"));
		const current = connection(name);
		if (current.state === "ready") return Promise.resolve(current.live);
		if (current.state === "failed") return Promise.reject(current.error);
		const cancelled = () => new CallFailed(name, `cancelled while waiting for MCP server "${name}" to start`, "cancelled");
		if (current.state === "connecting") return awaitWith(current.setup, signal, cancelled);

		const abort = new AbortController();
		const timer = setTimeout(() => abort.abort(new Error("setup timeout")), config.requestTimeoutMs);
		timer.unref();
		const onShutdown = () => abort.abort(new Error("shutdown"));
		shutdown.signal.addEventListener("abort", onShutdown, { once: true });
		const timedOut = () => (abort.signal.reason as Error | undefined)?.message === "setup timeout";
		const setup = open(config, abort.signal).then(
			(live) => {
				const now = connection(name);
				if (now.state === "connecting" && now.setup === setup) {
					connections.set(name, { state: "ready", live });
					return live;
				}
				// Superseded by a reconnect or shutdown while connecting: close what we opened.
				return closeLive(live).then(() => {
					throw new CallFailed(name, `the connection to MCP server "${name}" was reset while starting`, "closed");
				});
			},
			async (error: unknown) => {
				const end = { ended: shutdown.signal.aborted, aborted: abort.signal.aborted, timedOut: timedOut() };
				const failure = await setupError(config, error, end, stderrTails.get(name)?.text(), (text) => clean(name, text));
				const now = connection(name);
				// Missing credentials do not latch: once the user signs in, the next call connects.
				const next: Connection = failure instanceof AuthRequired ? { state: "idle" } : { state: "failed", error: failure };
				if (now.state === "connecting" && now.setup === setup) connections.set(name, next);
				throw failure;
			},
		);
		const settle = () => {
			clearTimeout(timer);
			shutdown.signal.removeEventListener("abort", onShutdown);
		};
		setup.then(settle, settle);
		connections.set(name, { state: "connecting", setup, abort });
		return awaitWith(setup, signal, cancelled);
	}

	/** Coalesced `tools/list`: concurrent callers share one request; the SDK keeps its own cache. */
	function index(name: string, live: Live, refresh: boolean, signal?: AbortSignal): Promise<ToolIndex> {
		const current = connection(name);
		if (current.state !== "ready" || current.live !== live) {
			return Promise.reject(new CallFailed(name, `the connection to MCP server "${name}" was reset`, "closed"));
		}
		if (current.listing) return awaitWith(current.listing, signal, () => cancelledCall(name));
		if (current.index && !refresh) return Promise.resolve(current.index);
		const timeout = entries.get(name)?.config?.requestTimeoutMs;
		const listing = (
			live.client.getServerCapabilities()?.tools
				? live.client.listTools(undefined, { timeout, signal: shutdown.signal })
				: Promise.resolve({ tools: [] as Tool[] })
		).then(
			(result) => {
				const now = connection(name);
				const built = nextIndex(now.state === "ready" ? now.index : undefined, result.tools);
				if (now.state === "ready" && now.live === live) connections.set(name, { ...now, index: built, listing: undefined });
				return built;
			},
			async (error: unknown) => {
				const now = connection(name);
				if (now.state === "ready" && now.live === live) connections.set(name, { ...now, listing: undefined });
				throw await callError(name, error, undefined);
			},
		);
		connections.set(name, { ...current, listing });
		return awaitWith(listing, signal, () => cancelledCall(name));
	}

	const cancelledCall = (name: string) => new CallFailed(name, `the request to MCP server "${name}" was cancelled`, "cancelled");

	/** A failed request as `CallFailed` naming the server (a step-up link for `403 insufficient_scope`). */
	async function callError(name: string, thrown: unknown, signal: AbortSignal | undefined, tool?: string, request?: string) {
		const sdk = await loadSdk();
		const error = await stepUp(sdk, name, thrown);
		const what = tool
			? `tool "${escapeName(tool)}" on MCP server "${name}"`
			: request
				? `${request} on MCP server "${name}"`
				: `the request to MCP server "${name}"`;
		const end = { cancelled: signal?.aborted === true, ended: shutdown.signal.aborted };
		const timeoutMs = entries.get(name)?.config?.requestTimeoutMs ?? 0;
		return requestError(sdk, error, { name, what, timeoutMs, ...end }, (text) => clean(name, text));
	}

	async function visibleTool(name: string, toolName: string, signal?: AbortSignal): Promise<{ live: Live; tool: Tool }> {
		const live = await ready(name, signal);
		const first = await index(name, live, false, signal);
		const found = first.byName.get(toolName);
		if (found) return { live, tool: found };
		// Not in the index we hold: the server may have added it since; list once more before refusing.
		const fresh = first.hidden.has(toolName) ? first : await index(name, live, true, signal);
		const again = fresh.byName.get(toolName);
		if (again) return { live, tool: again };
		const reason = fresh.hidden.get(toolName);
		if (reason) throw new CallFailed(name, `tool "${escapeName(toolName)}" on MCP server "${name}" ${reason}`, "refused");
		const names = fresh.tools.map((tool) => escapeName(tool.name));
		const list = names.length > 12 ? `${names.slice(0, 12).join(", ")}, …` : names.join(", ");
		throw new CallFailed(
			name,
			clean(name, `MCP server "${name}" has no tool "${escapeName(toolName)}"; available: ${list || "none"}`),
			"refused",
		);
	}

	async function reset(name: string): Promise<void> {
		const current = connection(name);
		connections.set(name, { state: "idle" });
		if (current.state === "connecting") {
			current.abort.abort(new Error("reset"));
			await current.setup.catch(() => undefined);
		}
		if (current.state === "ready") await closeLive(current.live);
	}

	function statusOf(entry: ServerEntry): ServerStatus {
		const base = {
			name: entry.name,
			source: entry.source,
			transport: entry.config?.transport,
			description: entry.config?.description ? sanitize(entry.config.description) : undefined,
			ignoredKeys: entry.ignoredKeys,
			stderrTail: clean(entry.name, stderrTails.get(entry.name)?.text() ?? "") || undefined,
		};
		if (entry.error !== undefined) return { ...base, state: "invalid", error: entry.error };
		if (!entry.enabled) return { ...base, state: "disabled" };
		const current = connection(entry.name);
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

	return {
		status: () => [...entries.values()].map(statusOf),
		names: () => [...entries.keys()],

		async tools(name, signal) {
			const live = await ready(name, signal);
			return (await index(name, live, true, signal)).tools;
		},

		async tool(name, toolName, signal) {
			return (await visibleTool(name, toolName, signal)).tool;
		},

		async call(name, toolName, args, callOptions = {}) {
			const { signal, onProgress } = callOptions;
			const { live, tool } = await visibleTool(name, toolName, signal);
			const timeout = configOf(name).requestTimeoutMs;
			// The caller's signal goes straight through (AbortSignal.any costs ~9 µs a call); shutdown closes
			// every client, which rejects calls in flight, and callError names the session's end.
			try {
				return (await live.client.callTool(
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
				)) as CallToolResult;
			} catch (error) {
				throw await callError(name, error, signal, toolName);
			}
		},

		async request(name, what, capability, run, signal) {
			const live = await ready(name, signal);
			if (!live.client.getServerCapabilities()?.[capability]) {
				throw new CallFailed(name, `MCP server "${name}" does not offer ${capability}`, "refused");
			}
			try {
				return await run(live.client, { signal, timeout: configOf(name).requestTimeoutMs });
			} catch (error) {
				throw await callError(name, error, signal, undefined, what);
			}
		},

		reset,

		async connect(name, signal) {
			await ready(name, signal).catch(() => undefined);
			const current = connection(name);
			if (current.state === "ready") await index(name, current.live, true, signal).catch(() => undefined);
			const entry = entries.get(name);
			if (!entry) throw new CallFailed(name, `unknown MCP server "${escapeName(name)}"; configured: ${knownNames()}`, "refused");
			return statusOf(entry);
		},

		start(name, startOptions = {}) {
			const entry = entries.get(name);
			if (!entry?.enabled || entry.config === undefined || entry.error !== undefined) return;
			if (shutdown.signal.aborted || connection(name).state !== "idle") return;
			const setup = ready(name);
			const listed = startOptions.tools ? setup.then((live) => index(name, live, false)) : setup;
			// The call that joins this setup (or listing) reports its failure.
			listed.catch(() => undefined);
		},

		async update(servers) {
			const next = new Map(servers.map((entry) => [entry.name, entry]));
			const changed = [...entries.keys()].filter((name) => JSON.stringify(entries.get(name)) !== JSON.stringify(next.get(name)));
			entries.clear();
			for (const [name, entry] of next) entries.set(name, entry);
			await Promise.all(changed.map((name) => reset(name)));
			for (const name of changed) if (!next.has(name)) connections.delete(name);
		},

		async dispose() {
			if (!shutdown.signal.aborted) shutdown.abort(new Error("shutdown"));
			const all = [...connections.entries()];
			for (const [name] of all) connections.set(name, { state: "idle" });
			await Promise.all(
				all.map(async ([, current]) => {
					if (current.state === "connecting") {
						current.abort.abort(new Error("shutdown"));
						// An aborted setup ends promptly (it closes what it opened); the bound is a backstop so
						// that nothing it waits on can keep Pi from exiting.
						await settledWithin(current.setup, SHUTDOWN_SETUP_WAIT_MS);
					}
					if (current.state === "ready") await closeLive(current.live);
				}),
			);
		},
	};
}
