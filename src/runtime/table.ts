/**
 * The connection table: one record per server (replaced whole, re-read after every `await`), the shared setup,
 * the coalesced tool listing, failures as errors naming the server, one tool call, status. It owns its state
 * (entries, connections, stderr tails, the eras its probes found, the shutdown). How one server is opened and
 * closed is `open.ts`'s; `runtime.ts` holds the `Runtime` face over this.
 */
import type { CallToolResult, Client, Tool } from "@modelcontextprotocol/client";
import { awaitWith, settledWithin } from "../async.ts";
import type { CallOptions, Capability, Live, Progress, RequestOptions, RuntimeOptions, ServerStatus } from "../contracts.ts";
import { AuthRequired, CallFailed, PI_WORDS, SdkUnavailable, SetupFailed, type Words } from "../errors.ts";
import { escapeName, sanitize } from "../output/text.ts";
import type { ServerConfig, ServerEntry } from "../schema.ts";
import { loadSdk } from "../sdk.ts";
import type { Connection } from "./connection.ts";
import { Eras } from "./era.ts";
import { cancelledRequest, closedError, type Exit, noSuchTool, requestError, setupError, unknownServer } from "./failures.ts";
import { closeLive, type OpenOptions, openServer } from "./open.ts";
import { PinnedServers } from "./pinned.ts";
import { secretsFor, withStoredSecrets } from "./secrets.ts";
import { serverStatus } from "./status.ts";
import { TailBuffer } from "./stderr-tail.ts";
import { checkedCall } from "./validate.ts";
import { filteredRefusal, filterFor, hiddenFor, nextIndex, type ToolIndex } from "./visible-tools.ts";

/** How long `dispose` waits for an aborted setup to wind down. */
const SHUTDOWN_SETUP_WAIT_MS = 2000;

const IDLE: Connection = { state: "idle" };

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

export class ConnectionTable {
	readonly #options: RuntimeOptions;
	readonly #entries: Map<string, ServerEntry>;
	readonly #connections = new Map<string, Connection>();
	readonly #tails = new Map<string, TailBuffer>();
	readonly #eras = new Eras();
	readonly #shutdown = new AbortController();
	/** What the user approved of each server (#47): list results are filtered through it. */ readonly pins: PinnedServers;
	constructor(options: RuntimeOptions) {
		this.#options = options;
		this.pins = new PinnedServers(options.pinsPath);
		this.#entries = new Map(options.servers.map((entry) => [entry.name, entry]));
	}
	/** Names of all entries, in the configuration's order. */
	names(): readonly string[] {
		return [...this.#entries.keys()];
	}
	/** The tools of the server's last listing, those hidden from the model included; never connects. */
	listed(name: string): readonly Tool[] {
		const current = this.#connection(name);
		return current.state === "ready" ? (current.index?.listed ?? []) : [];
	}
	/** Every configured server's status; never connects. */
	status(): readonly ServerStatus[] {
		return [...this.#entries.values()].map((entry) => this.#statusOf(entry));
	}
	/** One server's status, or an error for a name the table does not hold. */
	statusOf(name: string): ServerStatus {
		const entry = this.#entries.get(name);
		if (!entry) throw unknownServer(name, this.names());
		return this.#statusOf(entry);
	}
	/**
	 * The server's open connection: `ready` is used, `connecting` joined, `failed` rejects with the latched
	 * error, `idle` starts the shared setup. `signal` cancels only this caller's wait.
	 */
	ready(name: string, signal?: AbortSignal): Promise<Live> {
		const config = this.configOf(name);
		if (this.#shutdown.signal.aborted) return Promise.reject(new CallFailed(name, "the MCP session has ended", "shutdown"));
		const current = this.#connection(name);
		if (current.state === "ready") return Promise.resolve(current.live);
		if (current.state === "failed") return Promise.reject(current.error);
		const cancelled = () => new CallFailed(name, `cancelled while waiting for MCP server "${name}" to start`, "cancelled");
		const setup = current.state === "connecting" ? current.setup : this.#startSetup(config);
		return awaitWith(setup, signal, cancelled);
	}
	/**
	 * The listing path: the server's tools as the model may see them. Concurrent callers share one
	 * `tools/list` (the SDK keeps its own cache); `held`: a listing already held will do; `fresh`: the
	 * server lists again (joining a listing in flight). The result becomes the visible tools in `#visible`.
	 */
	listTools(name: string, live: Live, wanted: "held" | "fresh" | "refresh", signal?: AbortSignal): Promise<ToolIndex> {
		const current = this.#connection(name);
		if (current.state !== "ready" || current.live !== live) {
			return Promise.reject(new CallFailed(name, `the connection to MCP server "${name}" was reset`, "closed"));
		}
		if (current.listing && wanted !== "refresh") return awaitWith(current.listing, signal, () => cancelledRequest(name));
		if (current.index && wanted === "held" && !this.pins.changed(name)) return Promise.resolve(current.index);
		const timeout = this.#entries.get(name)?.config?.requestTimeoutMs;
		const options = { timeout, signal: this.#shutdown.signal, ...(wanted === "refresh" && { cacheMode: "refresh" as const }) };
		const listing = (
			live.client.getServerCapabilities()?.tools
				? live.client.listTools(undefined, options)
				: Promise.resolve({ tools: [] as Tool[] })
		).then(
			(result) => {
				const now = this.#connection(name);
				const built = this.#visible(name, now.state === "ready" ? now.index : undefined, result.tools);
				if (now.state === "ready" && now.live === live) this.#connections.set(name, { ...now, index: built, listing: undefined });
				return built;
			},
			async (error: unknown) => {
				const now = this.#connection(name);
				if (now.state === "ready" && now.live === live) this.#connections.set(name, { ...now, listing: undefined });
				throw await this.#requestError(name, error, undefined);
			},
		);
		this.#connections.set(name, { ...current, listing });
		return awaitWith(listing, signal, () => cancelledRequest(name));
	}
	/** A `tools/list` result as the visible tools: app-only and filtered tools left out (`visible-tools.ts`). */
	#visible(name: string, previous: ToolIndex | undefined, tools: readonly Tool[]): ToolIndex {
		return nextIndex(previous, tools, filterFor(this.#entries.get(name)));
	}

	/**
	 * One model-visible tool and the connection it is on; a hidden or unknown tool is refused naming
	 * the reason. A tool the user hid is refused from the configuration alone: nothing starts, nothing is sent.
	 */
	async visibleTool(name: string, toolName: string, signal?: AbortSignal): Promise<{ live: Live; tool: Tool }> {
		const refusal = filteredRefusal(filterFor(this.#entries.get(name)), toolName);
		if (refusal && this.configOf(name))
			throw new CallFailed(name, `tool "${escapeName(toolName)}" on MCP server "${name}" ${refusal}`, "refused");
		const live = await this.ready(name, signal);
		const first = await this.listTools(name, live, "held", signal);
		const found = first.byName.get(toolName);
		if (found) return { live, tool: found };
		// Not in the index we hold: the server may have added it since; list once more before refusing.
		const fresh = hiddenFor(first, toolName) !== undefined ? first : await this.listTools(name, live, "fresh", signal);
		const again = fresh.byName.get(toolName);
		if (again) return { live, tool: again };
		const reason = this.pins.refusal(this.#entries.get(name)?.config, "tools", toolName) ?? hiddenFor(fresh, toolName);
		if (reason) throw new CallFailed(name, `tool "${escapeName(toolName)}" on MCP server "${name}" ${reason}`, "refused");
		const listed = fresh.tools.map((tool) => tool.name);
		throw new CallFailed(name, this.#clean(name, noSuchTool(name, toolName, listed)), "refused");
	}

	/** One tool call, connecting first if needed; errors name the server and the tool. */
	async call(name: string, toolName: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
		const { signal, onProgress } = options;
		const { live, tool } = await this.visibleTool(name, toolName, signal);
		const timeout = this.configOf(name).requestTimeoutMs;
		// The caller's signal goes straight through (AbortSignal.any costs ~9 µs a call); shutdown closes
		// every client, which rejects calls in flight, and the request error names the session's end.
		// Structured results are checked off Pi's thread, within the call's timeout (#39).
		const onprogress = (p: Progress) =>
			onProgress?.({ progress: p.progress, total: p.total, message: p.message ? sanitize(p.message) : undefined });
		const sent = { signal, timeout, resetTimeoutOnProgress: true, maxTotalTimeout: Math.max(timeout, 30 * 60_000) };
		const call = () =>
			live.client.callTool(
				{ name: toolName, arguments: args },
				{ ...sent, toolDefinition: tool, ...(onProgress ? { onprogress } : {}) },
			) as Promise<CallToolResult>;
		try {
			return await checkedCall(live.outputChecks, tool.outputSchema, { timeoutMs: timeout, signal }, call);
		} catch (error) {
			throw await this.#requestError(name, error, signal, toolName);
		}
	}

	/** One SDK request on a server's client after checking the capability; errors name the server and `what`. */
	async request<T>(
		name: string,
		what: string,
		capability: Capability,
		run: (client: Client, options: RequestOptions) => Promise<T>,
		signal?: AbortSignal,
	): Promise<T> {
		const live = await this.ready(name, signal);
		if (!live.client.getServerCapabilities()?.[capability]) {
			throw new CallFailed(name, `MCP server "${name}" does not offer ${capability}`, "refused");
		}
		try {
			return await run(live.client, { signal, timeout: this.configOf(name).requestTimeoutMs });
		} catch (error) {
			throw await this.#requestError(name, error, signal, undefined, what);
		}
	}

	/** Connects now and lists anew, whatever happens; resolves to the status afterwards. */
	async connect(name: string, signal?: AbortSignal): Promise<ServerStatus> {
		await this.ready(name, signal).catch(() => undefined);
		const current = this.#connection(name);
		if (current.state === "ready") await this.listTools(name, current.live, "fresh", signal).catch(() => undefined);
		return this.statusOf(name);
	}

	/** Closes the server's client (or aborts its setup) and sets it idle, clearing a latched failure. */
	async reset(name: string): Promise<void> {
		const current = this.#connection(name);
		this.#connections.set(name, IDLE);
		if (current.state === "connecting") {
			current.abort.abort(new Error("reset"));
			await current.setup.catch(() => undefined);
		}
		if (current.state === "ready") await closeLive(current.live);
	}

	/** Replaces the entries; connections whose entry changed or vanished are closed. */
	async update(servers: readonly ServerEntry[]): Promise<void> {
		const next = new Map(servers.map((entry) => [entry.name, entry]));
		const entries = this.#entries;
		const changed = [...entries.keys()].filter((name) => JSON.stringify(entries.get(name)) !== JSON.stringify(next.get(name)));
		entries.clear();
		for (const [name, entry] of next) entries.set(name, entry);
		await Promise.all(changed.map((name) => this.reset(name)));
		for (const name of changed) if (!next.has(name)) this.#connections.delete(name);
	}

	/** Aborts everything, closes every client and kills every process group. Idempotent. */
	async dispose(): Promise<void> {
		if (!this.#shutdown.signal.aborted) this.#shutdown.abort(new Error("shutdown"));
		const all = [...this.#connections.entries()];
		for (const [name] of all) this.#connections.set(name, IDLE);
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

	#connection(name: string): Connection {
		return this.#connections.get(name) ?? IDLE;
	}

	/** How messages name the next step: the front end's words (Pi's by default). */
	get #words(): Words {
		return this.#options.words ?? PI_WORDS;
	}

	/** Values never to show (`secrets.ts`): the entry's configured secrets, its bearer token, every credential seen. */
	secrets(name: string): readonly string[] {
		return secretsFor(this.#entries.get(name)?.config, this.#options);
	}

	#clean(name: string, text: string): string {
		return sanitize(text, this.secrets(name));
	}

	#tail(name: string): TailBuffer {
		const existing = this.#tails.get(name);
		if (existing) return existing;
		const created = new TailBuffer(4096);
		this.#tails.set(name, created);
		return created;
	}

	#statusOf(entry: ServerEntry): ServerStatus {
		const name = entry.name;
		const stderrTail = this.#clean(name, this.#tails.get(name)?.text() ?? "");
		return serverStatus({
			entry,
			connection: this.#connection(name),
			stderrTail,
			secrets: this.secrets(name),
			pinned: this.pins,
		});
	}

	/** The usable config of a server, or an error that says why not. */
	configOf(name: string): ServerConfig {
		const entry = this.#entries.get(name);
		if (!entry) throw unknownServer(name, this.names());
		if (entry.error !== undefined || entry.config === undefined) {
			throw new SetupFailed(name, entry.error ?? `server "${name}" has no usable configuration`);
		}
		if (!entry.enabled) {
			throw new CallFailed(name, `MCP server "${name}" is disabled in ${entry.source.path}`, "refused");
		}
		return entry.config;
	}

	/** Starts the shared setup and records it as `connecting`; it ends `ready`, `failed`, or `idle` (sign-in needed). */
	#startSetup(config: ServerConfig): Promise<Live> {
		const name = config.name;
		const abort = new AbortController();
		const onShutdown = () => abort.abort(new Error("shutdown"));
		this.#shutdown.signal.addEventListener("abort", onShutdown, { once: true });
		const timedOut = () => (abort.signal.reason as Error | undefined)?.message === "setup timeout";
		const isCurrent = () => {
			const now = this.#connection(name);
			return now.state === "connecting" && now.setup === setup;
		};
		// The server's timeout bounds its own setup (credentials, spawn, handshake), not pi-mcp loading the
		// SDK, which the early start may still be waiting for: 100–150 ms inside Pi, seconds on a loaded machine.
		const setup: Promise<Live> = loadSdk()
			.then(() => within(config.requestTimeoutMs, abort, () => this.#open(config, abort.signal)))
			.then(
				(live) => {
					if (isCurrent()) {
						this.#connections.set(name, { state: "ready", live });
						return live;
					}
					// Superseded by a reconnect or shutdown while connecting: close what we opened.
					return closeLive(live).then(() => {
						throw new CallFailed(name, `the connection to MCP server "${name}" was reset while starting`, "closed");
					});
				},
				async (error: unknown) => {
					const end = { ended: this.#shutdown.signal.aborted, aborted: abort.signal.aborted, timedOut: timedOut() };
					const tail = this.#tails.get(name)?.text();
					// Missing credentials do not latch: once the user signs in, the next call connects. An SDK that
					// cannot load (a damaged installation) latches like any failed setup, naming the server.
					const failure =
						error instanceof AuthRequired
							? error
							: error instanceof SdkUnavailable
								? new SetupFailed(name, `MCP server "${name}" failed to start: ${error.message}`)
								: setupError(await loadSdk(), config, error, end, tail, (text) => this.#clean(name, text), this.#words);
					const next: Connection = failure instanceof AuthRequired ? IDLE : { state: "failed", error: failure };
					if (isCurrent()) this.#connections.set(name, next);
					throw failure;
				},
			);
		const settle = () => this.#shutdown.signal.removeEventListener("abort", onShutdown);
		setup.then(settle, settle);
		this.#connections.set(name, { state: "connecting", setup, abort });
		return setup;
	}

	/** Opens one server: credentials first (a missing one costs no process nor request), tail, step-up, close. */
	async #open(config: ServerConfig, signal: AbortSignal): Promise<Live> {
		const name = config.name;
		const filled = await withStoredSecrets(this.#options.auth, config, signal);
		const authProvider = await this.#credentials(config, signal);
		const tail = this.#tail(name);
		const options: OpenOptions = {
			clientInfo: this.#options.clientInfo,
			eras: this.#eras,
			signal,
			authProvider,
			tail,
			mapError: (error) => this.#stepUp(name, error),
			transports: this.#options.transports,
			onClose: (live, exited) => this.#dropped(name, live, tail, exited),
		};
		return this.pins.open(config, (hooks) => openServer(filled, { ...options, ...hooks }));
	}

	/** A connection closed without being asked to: it latches as failed, gaining how the process ended once known. */
	#dropped(name: string, live: Live, tail: TailBuffer, exited: Promise<Exit | undefined>): void {
		const current = this.#connection(name);
		if (current.state !== "ready" || current.live !== live) return;
		const clean = (text: string) => this.#clean(name, text);
		const failed: Connection = { state: "failed", error: closedError(name, tail.text(), clean, this.#words) };
		this.#connections.set(name, failed);
		// The exit comes a moment after the stream's end: the message gains it, unless a reset came first.
		void exited.then((exit) => {
			if (exit && this.#connections.get(name) === failed) {
				this.#connections.set(name, { state: "failed", error: closedError(name, tail.text(), clean, this.#words, exit) });
			}
		});
	}

	async #credentials(config: ServerConfig, signal: AbortSignal) {
		const auth = this.#options.auth;
		if (config.auth === undefined || config.transport !== "http") return undefined;
		if (!auth) throw new AuthRequired(config.name, `server "${config.name}": authentication is not available here`);
		// The setup ends with its signal even if a keyring call cannot be cancelled (it runs on a thread).
		return awaitWith(auth.prepare(config, signal), signal, () => signal.reason);
	}

	/** A `403 insufficient_scope` becomes an error carrying a link for the wider scope; others pass. */
	async #stepUp(name: string, error: unknown): Promise<unknown> {
		const sdk = await loadSdk();
		const config = this.#entries.get(name)?.config;
		if (!this.#options.auth || !config || !sdk.InsufficientScopeError.isInstance(error)) return error;
		return this.#options.auth.stepUp(config, error);
	}

	/** A failed request as `CallFailed` naming the server (a step-up link for `403 insufficient_scope`). */
	async #requestError(name: string, thrown: unknown, signal: AbortSignal | undefined, tool?: string, request?: string) {
		const sdk = await loadSdk();
		const error = await this.#stepUp(name, thrown);
		const what = tool
			? `tool "${escapeName(tool)}" on MCP server "${name}"`
			: request
				? `${request} on MCP server "${name}"`
				: `the request to MCP server "${name}"`;
		const end = { cancelled: signal?.aborted === true, ended: this.#shutdown.signal.aborted };
		const timeoutMs = this.#entries.get(name)?.config?.requestTimeoutMs ?? 0;
		return requestError(sdk, error, { name, what, timeoutMs, ...end }, (text) => this.#clean(name, text), this.#words);
	}
}
