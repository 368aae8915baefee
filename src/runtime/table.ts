/**
 * The connection table: one record per server (replaced whole, re-read after every `await`), the shared setup,
 * the coalesced tool listing, failures as errors naming the server, status. It owns its state (entries,
 * connections, stderr tails, the eras its probes found, the shutdown). How one server is opened and closed is
 * `open.ts`'s, the call path over the table `calls.ts`'s, what credentials and secrets a connection needs
 * `credentials.ts`'s; `runtime.ts` holds the `Runtime` face over this.
 */
import type { Tool } from "@modelcontextprotocol/client";
import { awaitWith, settledWithin } from "../async.ts";
import type { Live, RuntimeOptions, ServerStatus } from "../contracts.ts";
import { AuthRequired, CallFailed, PI_WORDS, SdkUnavailable, SetupFailed, type Words } from "../errors.ts";
import { sanitize } from "../output/text.ts";
import type { ServerConfig, ServerEntry } from "../schema.ts";
import { loadSdk } from "../sdk.ts";
import type { Connection } from "./connection.ts";
import { secretsFor, stepUp, transportAuth, withStoredSecrets } from "./credentials.ts";
import { Eras } from "./era.ts";
import { cancelledRequest, closedError, type Exit, requestError, setupError, unknownServer } from "./failures.ts";
import { closeLive, type OpenOptions, openServer } from "./open.ts";
import { PinnedServers } from "./pinned.ts";
import { serverStatus } from "./status.ts";
import { TailBuffer } from "./stderr-tail.ts";
import { filterFor, nextIndex, type ToolIndex } from "./visible-tools.ts";

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
	/** What the user approved of each server (#47): list results are filtered through it. */
	readonly pins: PinnedServers;

	constructor(options: RuntimeOptions) {
		this.#options = options;
		this.pins = new PinnedServers(options.pinsPath, (config) => secretsFor(config, options));
		this.#entries = new Map(options.servers.map((entry) => [entry.name, entry]));
	}

	/** Names of all entries, in the configuration's order. */
	names(): readonly string[] {
		return [...this.#entries.keys()];
	}

	/** The entry of that name as configured, usable or not. */
	entry(name: string): ServerEntry | undefined {
		return this.#entries.get(name);
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
				throw await this.requestError(name, error, undefined);
			},
		);
		this.#connections.set(name, { ...current, listing });
		return awaitWith(listing, signal, () => cancelledRequest(name));
	}

	/** A `tools/list` result as the visible tools: app-only and filtered tools left out (`visible-tools.ts`). */
	#visible(name: string, previous: ToolIndex | undefined, tools: readonly Tool[]): ToolIndex {
		return nextIndex(previous, tools, filterFor(this.#entries.get(name)));
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

	/** Values never to show (`credentials.ts`): the entry's configured secrets, its bearer token, every credential seen. */
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
		const authProvider = await transportAuth(this.#options.auth, config, signal);
		const tail = this.#tail(name);
		const options: OpenOptions = {
			clientInfo: this.#options.clientInfo,
			eras: this.#eras,
			signal,
			authProvider,
			tail,
			mapError: (error) => stepUp(this.#options.auth, this.#entries.get(name)?.config, error),
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

	/**
	 * A failed request as `CallFailed` naming the server and `what` was asked (a step-up link for
	 * `403 insufficient_scope`); `signal` is the caller's, to tell a cancel from a failure.
	 */
	async requestError(
		name: string,
		thrown: unknown,
		signal: AbortSignal | undefined,
		what = `the request to MCP server "${name}"`,
	): Promise<Error> {
		const sdk = await loadSdk();
		const error = await stepUp(this.#options.auth, this.#entries.get(name)?.config, thrown);
		const end = { cancelled: signal?.aborted === true, ended: this.#shutdown.signal.aborted };
		const timeoutMs = this.#entries.get(name)?.config?.requestTimeoutMs ?? 0;
		return requestError(sdk, error, { name, what, timeoutMs, ...end }, (text) => this.#clean(name, text), this.#words);
	}
}
