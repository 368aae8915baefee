/**
 * One SDK client per server: lazy shared setup, independent calls, latched failures, teardown
 * that leaves no process behind. State per server is a readonly record replaced whole; every
 * `await` is followed by a re-read (a reconnect or shutdown may have replaced it).
 */

import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import type { AuthProvider, CallToolResult, Client, Tool } from "@modelcontextprotocol/client";
import type { Auth } from "./auth.ts";
import type { ServerConfig, ServerEntry, ServerSource } from "./config.ts";
import { AuthRequired, CallFailed, SetupFailed } from "./errors.ts";
import { escapeName, sanitize, TailBuffer } from "./output.ts";

type Sdk = typeof import("./sdk.lazy.ts");

export type ClientInfo = Readonly<{ name: string; version: string }>;

export type RuntimeOptions = Readonly<{
	servers: readonly ServerEntry[];
	env: Readonly<Record<string, string | undefined>>;
	clientInfo: ClientInfo;
	/** Credentials for servers with `auth`; without it such servers fail with `AuthRequired`. */
	auth?: Auth;
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

export type ToolIndex = Readonly<{
	tools: readonly Tool[];
	byName: ReadonlyMap<string, Tool>;
	/** Tools kept from the model, with the reason. */
	hidden: ReadonlyMap<string, string>;
}>;

export type Progress = Readonly<{ progress: number; total?: number; message?: string }>;

export type CallOptions = Readonly<{ signal?: AbortSignal; onProgress?: (progress: Progress) => void }>;

/** A server capability a request needs; checked before sending so a missing one gets a clear message. */
export type Capability = "resources" | "prompts" | "completions";

/** Options the SDK request methods take: the caller's cancel and the timeout (shutdown closes the client). */
export type RequestOptions = Readonly<{ signal?: AbortSignal; timeout: number }>;

type Live = Readonly<{
	client: Client;
	/** Process group of a stdio server (setsid makes the child its leader). */
	pgid?: number;
	/** Value of `OWNER_ENV` given to a stdio server's processes. */
	owner?: string;
	era: string;
	protocolVersion: string;
	serverName?: string;
	instructions?: string;
	/** Set when we close on purpose, so `onclose` does not latch a failure. */
	closing: { value: boolean };
}>;

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

const sdkHolder: { promise?: Promise<Sdk> } = {};

/** Loads the SDK once; the first load also contains the SDK's console chatter. */
export function loadSdk(): Promise<Sdk> {
	sdkHolder.promise ??= import("./sdk.lazy.ts").then((sdk) => {
		containSdkConsole();
		return sdk;
	});
	return sdkHolder.promise;
}

/** SDK notices diverted from the console (the SDK logs with `console.*`, which would draw over Pi's TUI). */
export const sdkNotices: string[] = [];
const SDK_CONSOLE = /^(\[mcp-sdk\]|Client\.list\w*\(\) called)/;

function containSdkConsole(): void {
	const methods = ["debug", "warn", "log", "info", "error"] as const;
	for (const method of methods) {
		const original = console[method];
		if ((original as { piMcpContained?: boolean }).piMcpContained) continue;
		const wrapped = (...args: unknown[]) => {
			if (typeof args[0] === "string" && SDK_CONSOLE.test(args[0])) {
				sdkNotices.push(sanitize(args[0]).slice(0, 300));
				if (sdkNotices.length > 20) sdkNotices.shift();
				return;
			}
			original.apply(console, args);
		};
		Object.assign(wrapped, { piMcpContained: true });
		console[method] = wrapped;
	}
}

const setsidPath: { value?: string | null } = {};

/** `setsid` puts a stdio server in its own process group, so teardown reaches wrappers' children (npx). */
function setsid(): string | null {
	if (setsidPath.value === undefined) {
		setsidPath.value =
			process.platform === "linux" ? (["/usr/bin/setsid", "/bin/setsid"].find((path) => existsSync(path)) ?? null) : null;
	}
	return setsidPath.value;
}

function groupAlive(pgid: number): boolean {
	try {
		process.kill(-pgid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === "EPERM";
	}
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(-pgid, signal);
	} catch {
		// Already gone.
	}
}

// Not unref()ed: teardown must finish even when nothing else keeps the event loop alive.
const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** SIGTERM the group, give it a moment, then SIGKILL whatever is left. */
async function killGroup(pgid: number | undefined): Promise<void> {
	if (pgid === undefined || !groupAlive(pgid)) return;
	signalGroup(pgid, "SIGTERM");
	for (const _ of Array.from({ length: 20 })) {
		if (!groupAlive(pgid)) return;
		await sleep(50);
	}
	signalGroup(pgid, "SIGKILL");
}

/** Environment variable that marks every process of one stdio connection (probe sibling included). */
export const OWNER_ENV = "PI_MCP_OWNER";

/**
 * Processes that carry `OWNER_ENV=<owner>`: what is left of a connection after its group was killed
 * (the SDK's probe sibling lives in a group we never learn, and its children too). Linux only;
 * elsewhere the group kill is all we do.
 */
async function ownedPids(owner: string): Promise<number[]> {
	if (process.platform !== "linux") return [];
	const needle = Buffer.from(`${OWNER_ENV}=${owner}\0`);
	const entries = await readdir("/proc").catch(() => [] as string[]);
	const found = await Promise.all(
		entries
			.filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
			.map(async (entry) => {
				const environ = await readFile(`/proc/${entry}/environ`).catch(() => undefined);
				return environ?.includes(needle) ? Number(entry) : undefined;
			}),
	);
	return found.filter((pid): pid is number => pid !== undefined);
}

/** Kills the connection's process group, then any process still carrying its owner mark. */
async function killAll(pgid: number | undefined, owner: string | undefined): Promise<void> {
	await killGroup(pgid);
	if (owner === undefined) return;
	const left = await ownedPids(owner);
	for (const pid of left) signalPid(pid, "SIGKILL");
	// Return only once they are gone (a zombie waiting for its reaper counts as gone).
	for (const _ of Array.from({ length: 20 })) {
		if (!left.some(running)) return;
		await sleep(25);
	}
}

function running(pid: number): boolean {
	try {
		process.kill(pid, 0);
	} catch {
		return false;
	}
	return !/^\d+ \(.*\) Z/.test(readStat(pid));
}

function readStat(pid: number): string {
	try {
		return readFileSync(`/proc/${pid}/stat`, "utf8");
	} catch {
		return "";
	}
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(pid, signal);
	} catch {
		// Already gone.
	}
}

/**
 * Why a tool is kept from the model, if it is: tools whose `_meta.ui.visibility` lacks "model" are
 * for MCP Apps only; tools that require task augmentation cannot run without the tasks extension,
 * which pi-mcp does not advertise.
 */
function hiddenReason(tool: Tool): string | undefined {
	const ui = (tool._meta as { ui?: { visibility?: unknown } } | undefined)?.ui;
	const visibility = ui?.visibility;
	if (Array.isArray(visibility) && !visibility.includes("model")) return "is for MCP Apps only and cannot be called by the model";
	if ((tool as { execution?: { taskSupport?: unknown } }).execution?.taskSupport === "required") {
		return "requires MCP tasks, which pi-mcp does not support";
	}
	return undefined;
}

function buildIndex(tools: readonly Tool[]): ToolIndex {
	const hidden = new Map(
		tools.flatMap((tool) => (hiddenReason(tool) ? [[tool.name, hiddenReason(tool) as string] as const] : [])),
	);
	const visible = tools.filter((tool) => !hidden.has(tool.name));
	return { tools: visible, byName: new Map(visible.map((tool) => [tool.name, tool])), hidden };
}

function errorText(error: unknown): string {
	if (error instanceof Error) return error.message;
	return String(error);
}

function firstLines(text: string, lines: number): string {
	return text.split("\n").slice(-lines).join("\n");
}

/** Races a promise against a caller's signal, without cancelling the shared work. */
function awaitWith<T>(promise: Promise<T>, signal: AbortSignal | undefined, onAbort: () => Error): Promise<T> {
	if (!signal) return promise;
	if (signal.aborted) return Promise.reject(onAbort());
	return new Promise<T>((resolve, reject) => {
		const abort = () => reject(onAbort());
		signal.addEventListener("abort", abort, { once: true });
		promise.then(
			(value) => {
				signal.removeEventListener("abort", abort);
				resolve(value);
			},
			(error: unknown) => {
				signal.removeEventListener("abort", abort);
				reject(error);
			},
		);
	});
}

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

	function setupMessage(config: ServerConfig, error: unknown, signal: AbortSignal, timedOut: boolean): Error {
		const name = config.name;
		if (error instanceof AuthRequired) return error;
		const raw = errorText(error);
		const code = (error as { code?: unknown }).code;
		const reason = shutdown.signal.aborted
			? "setup was cancelled because the session ended"
			: signal.aborted && !timedOut
				? "setup was cancelled by a reconnect"
				: timedOut
					? `setup did not finish within ${Math.round(config.requestTimeoutMs / 1000)} s`
					: code === "ENOENT"
						? `command "${config.command}" was not found (check "command" and PATH)`
						: code === "ERA_NEGOTIATION_FAILED" && config.protocolVersion === "2026-07-28"
							? `the server does not offer protocol 2026-07-28, which "protocolVersion" pins; set "protocolVersion" to "auto" or "legacy" to use it (${raw})`
							: code === "CONNECTION_CLOSED" || /connection closed/i.test(raw)
								? `the server closed the connection during setup (${raw})`
								: raw;
		const tail = config.transport === "stdio" ? stderrTails.get(name)?.text() : undefined;
		const stderr = tail ? `\nstderr (last lines):\n${firstLines(tail, 8)}` : "";
		return new SetupFailed(
			name,
			clean(name, `MCP server "${name}" failed to start: ${reason}.${stderr}\nFix the cause, then run /mcp reconnect ${name}.`),
		);
	}

	function negotiation(config: ServerConfig): { mode: "auto" | "legacy" | { pin: string }; probe?: { timeoutMs: number } } {
		if (config.protocolVersion === "legacy") return { mode: "legacy" };
		const probe = { timeoutMs: Math.min(config.requestTimeoutMs, 10_000) };
		return config.protocolVersion === "2026-07-28" ? { mode: { pin: "2026-07-28" }, probe } : { mode: "auto", probe };
	}

	/** A `403 insufficient_scope` becomes a new sign-in link for the wider scope; anything else is returned as is. */
	async function stepUp(name: string, error: unknown): Promise<unknown> {
		const config = entries.get(name)?.config;
		if (!options.auth || !config || !(await loadSdk()).InsufficientScopeError.isInstance(error)) return error;
		return options.auth.stepUp(config, error);
	}

	async function credentials(config: ServerConfig): Promise<AuthProvider | undefined> {
		if (config.auth === undefined || config.transport !== "http") return undefined;
		if (!options.auth) throw new AuthRequired(config.name, `server "${config.name}": authentication is not available here`);
		return options.auth.prepare(config);
	}

	async function open(config: ServerConfig, signal: AbortSignal): Promise<Live> {
		const name = config.name;
		// Credentials are checked before anything connects: a missing one never costs a process or a request.
		const authProvider = await credentials(config);
		const sdk = await loadSdk();
		if (signal.aborted) throw signal.reason;
		const tail = tailOf(name);
		tail.clear();
		const wrapper = config.transport === "stdio" ? setsid() : null;
		const owner = randomUUID();
		const transport =
			config.transport === "stdio"
				? new sdk.StdioClientTransport({
						command: wrapper ?? (config.command as string),
						args: wrapper ? [config.command as string, ...config.args] : [...config.args],
						env: { ...config.env, [OWNER_ENV]: owner },
						cwd: config.cwd,
						stderr: "pipe",
					})
				: new sdk.StreamableHTTPClientTransport(new URL(config.url as string), {
						requestInit: { headers: { ...config.headers } },
						...(authProvider ? { authProvider } : {}),
					});
		const spawned: { pid?: number } = {};
		if (transport instanceof sdk.StdioClientTransport) {
			transport.stderr?.on("data", (chunk: Buffer) => tail.push(chunk));
			// The SDK forgets the pid when a connect fails; keep it to kill the group. An own-property
			// wrapper leaves the class untouched, so the SDK still runs its probe sibling.
			const start = transport.start.bind(transport);
			transport.start = async () => {
				await start();
				spawned.pid = transport.pid ?? undefined;
			};
		}
		const client = new sdk.Client(
			{ name: options.clientInfo.name, version: options.clientInfo.version },
			{ capabilities: {}, versionNegotiation: negotiation(config) },
		);
		const closing = { value: false };
		client.onerror = () => {
			// Transport errors surface through the failing request or `onclose`; never on the console.
		};
		try {
			await client.connect(transport, { timeout: config.requestTimeoutMs, signal });
		} catch (error) {
			closing.value = true;
			await client.close().catch(() => undefined);
			if (config.transport === "stdio") await killAll(wrapper ? spawned.pid : undefined, owner);
			throw await stepUp(name, error);
		}
		const live: Live = {
			client,
			pgid: wrapper ? spawned.pid : undefined,
			owner: config.transport === "stdio" ? owner : undefined,
			era: client.getProtocolEra?.() ?? "legacy",
			protocolVersion: client.getNegotiatedProtocolVersion?.() ?? "unknown",
			serverName: client.getServerVersion()?.name,
			instructions: client.getInstructions(),
			closing,
		};
		client.onclose = () => {
			if (live.closing.value) return;
			const current = connection(name);
			if (current.state !== "ready" || current.live !== live) return;
			const tailText = tail.text();
			const stderr = tailText ? `\nstderr (last lines):\n${firstLines(tailText, 8)}` : "";
			connections.set(name, {
				state: "failed",
				error: new SetupFailed(
					name,
					clean(name, `MCP server "${name}" closed the connection.${stderr}\nRun /mcp reconnect ${name} to start it again.`),
				),
			});
			void killAll(live.pgid, live.owner);
		};
		return live;
	}

	/** Shared setup: the first caller starts it; everyone awaits the same promise. */
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
			(error: unknown) => {
				const failure = setupMessage(config, error, abort.signal, timedOut());
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
				const built = buildIndex(result.tools);
				const now = connection(name);
				if (now.state === "ready" && now.live === live) connections.set(name, { ...now, index: built, listing: undefined });
				return built;
			},
			async (error: unknown) => {
				const now = connection(name);
				if (now.state === "ready" && now.live === live) connections.set(name, { ...now, listing: undefined });
				throw callError(name, await stepUp(name, error), undefined);
			},
		);
		connections.set(name, { ...current, listing });
		return awaitWith(listing, signal, () => cancelledCall(name));
	}

	const cancelledCall = (name: string) => new CallFailed(name, `the request to MCP server "${name}" was cancelled`, "cancelled");

	function callError(name: string, error: unknown, signal: AbortSignal | undefined, tool?: string, request?: string): Error {
		if (error instanceof CallFailed || error instanceof SetupFailed || error instanceof AuthRequired) return error;
		const what = tool
			? `tool "${escapeName(tool)}" on MCP server "${name}"`
			: request
				? `${request} on MCP server "${name}"`
				: `the request to MCP server "${name}"`;
		if (signal?.aborted) return new CallFailed(name, `${what} was cancelled`, "cancelled");
		if (shutdown.signal.aborted) return new CallFailed(name, `${what} was stopped because the session ended`, "shutdown");
		const code = (error as { code?: unknown }).code;
		const timeout = entries.get(name)?.config?.requestTimeoutMs ?? 0;
		if (code === "REQUEST_TIMEOUT") {
			return new CallFailed(name, `${what} timed out after ${Math.round(timeout / 1000)} s without progress`, "timeout");
		}
		if (code === "CONNECTION_CLOSED" || code === "NOT_CONNECTED") {
			return new CallFailed(
				name,
				clean(name, `${what} failed: the connection closed (${errorText(error)}). Run /mcp reconnect ${name}.`),
				"closed",
			);
		}
		if (code === "CAPABILITY_NOT_SUPPORTED" || code === "UNSUPPORTED_RESULT_TYPE" || code === -32021) {
			return new CallFailed(
				name,
				clean(
					name,
					`${what} asked for interactive input (elicitation, sampling or roots), which pi-mcp does not support: ${errorText(error)}`,
				),
				"refused",
			);
		}
		return new CallFailed(name, clean(name, `${what} failed: ${errorText(error)}`), "error");
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

	async function closeLive(live: Live): Promise<void> {
		live.closing.value = true;
		await live.client.close().catch(() => undefined);
		await killAll(live.pgid, live.owner);
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
				throw callError(name, await stepUp(name, error), signal, toolName);
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
				throw callError(name, await stepUp(name, error), signal, undefined, what);
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
						await current.setup.catch(() => undefined);
					}
					if (current.state === "ready") await closeLive(current.live);
				}),
			);
		},
	};
}
