/**
 * Opens one server: the transport (a stdio child in its own process group, marked with an owner
 * value, or Streamable HTTP with the narrow auth provider) and era negotiation; on failure nothing
 * started is left running. Closing kills the process group and sweeps what escaped it. When to open
 * is the connection table's (`table.ts`); messages are `failures.ts`'s.
 */
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { ClientInfo, Live, TransportAuth } from "../contracts.ts";
import type { ServerConfig } from "../schema.ts";
import { loadSdk } from "../sdk.ts";
import { type Exit, ExitedDuringSetup } from "./failures.ts";
import { ENV_BINARY, killAll, OWNER_ENV, setsid } from "./processes.ts";
import type { TailBuffer } from "./stderr-tail.ts";
import { outputChecks } from "./validate.ts";

export type OpenOptions = Readonly<{
	clientInfo: ClientInfo;
	signal: AbortSignal;
	authProvider?: TransportAuth;
	/** The server's stderr tail (cleared here). */
	tail: TailBuffer;
	/**
	 * The connection closed without being asked to (the server exited or the stream ended); `exited`: how a
	 * stdio server's process ended, once it has (its stdout may close just before), else undefined.
	 */
	onClose: (live: Live, exited: Promise<Exit | undefined>) => void;
	/** Maps a failed connect's error (a step-up link for `403 insufficient_scope`). */
	mapError: (error: unknown) => Promise<unknown>;
	/** Sees each message from the server before the SDK parses it, and may change it (pinning, #47). */
	filter?: (message: Readonly<Record<string, unknown>>) => Readonly<Record<string, unknown>>;
	/** The server said a list changed (a `list_changed` notification). */
	onListChanged?: (kind: "tools" | "prompts" | "resources") => void;
}>;

function negotiation(config: ServerConfig): { mode: "auto" | "legacy" | { pin: string }; probe?: { timeoutMs: number } } {
	if (config.protocolVersion === "legacy") return { mode: "legacy" };
	const probe = { timeoutMs: Math.min(config.requestTimeoutMs, 10_000) };
	return config.protocolVersion === "2026-07-28" ? { mode: { pin: "2026-07-28" }, probe } : { mode: "auto", probe };
}

/**
 * The fetch under the HTTP transport never follows a redirect (#39): the SDK follows one itself only
 * within the origin, through this again (so each hop gets its own DPoP proof), and fails on any other,
 * naming where it pointed. Credentials, headers and proofs never reach another origin, whatever its default.
 */
const unredirected = (url: string | URL, init?: RequestInit) => fetch(url, { ...init, redirect: "manual" });

/** Set once we close on purpose, so that `onclose` does not latch a failure. */
class Closing {
	#on = false;
	set(): void {
		this.#on = true;
	}
	get on(): boolean {
		return this.#on;
	}
}

/** Connects one server; on failure everything started is closed and killed before rejecting. */
export async function openServer(config: ServerConfig, options: OpenOptions): Promise<Live> {
	const { signal, tail } = options;
	const sdk = await loadSdk();
	if (signal.aborted) throw signal.reason;
	tail.clear();
	const wrapper = config.transport === "stdio" ? setsid() : null;
	const owner = randomUUID();
	const marker = `${OWNER_ENV}=${owner}`;
	const auth = options.authProvider;
	// The transport gets only the narrow provider; for DPoP-bound tokens its fetch adds each request's proof.
	const narrow = auth && {
		authProvider: { token: () => auth.token(), onUnauthorized: auth.onUnauthorized?.bind(auth) },
		...(auth.fetch ? { fetch: auth.fetch(unredirected) } : {}),
	};
	const transport =
		config.transport === "stdio"
			? new sdk.StdioClientTransport({
					// `env` (same process, exec'd) carries the owner mark in the command line too, where `watchSpawns` sees it.
					command: wrapper ?? config.command,
					args: wrapper ? [ENV_BINARY, marker, config.command, ...config.args] : [...config.args],
					env: { ...config.env, [OWNER_ENV]: owner },
					cwd: config.cwd,
					stderr: "pipe",
				})
			: new sdk.StreamableHTTPClientTransport(new URL(config.url), {
					requestInit: { headers: { ...config.headers } },
					redirectPolicy: "same-origin",
					fetch: unredirected,
					...narrow,
				});
	const spawns = config.transport === "stdio" ? watchSpawns(marker) : undefined;
	if (transport instanceof sdk.StdioClientTransport) transport.stderr?.on("data", (chunk: Buffer) => tail.push(chunk));
	const checks = outputChecks();
	const watched = options.onListChanged;
	// A changed list is listed again only when next used: no request unless someone asks.
	const changed = (kind: "tools" | "prompts" | "resources") => ({
		autoRefresh: false,
		debounceMs: 0,
		onChanged: () => watched?.(kind),
	});
	const client = new sdk.Client(
		{ name: options.clientInfo.name, version: options.clientInfo.version },
		{
			capabilities: {},
			versionNegotiation: negotiation(config),
			jsonSchemaValidator: checks,
			...(watched
				? { listChanged: { tools: changed("tools"), prompts: changed("prompts"), resources: changed("resources") } }
				: {}),
		},
	);
	const closing = new Closing();
	client.onerror = () => {
		// Transport errors surface through the failing request or `onclose`; never on the console.
	};
	try {
		await client.connect(transport, { timeout: config.requestTimeoutMs, signal });
	} catch (error) {
		const child = spawns?.stop();
		// Read before closing: how the server ended by itself, not by our kill.
		const exit = child ? { code: child.exitCode, signal: child.signalCode } : undefined;
		closing.set();
		checks.close();
		await client.close().catch(() => undefined);
		if (config.transport === "stdio") await killAll(wrapper ? child?.pid : undefined, owner);
		const mapped = await options.mapError(error);
		throw exit && (exit.code !== null || exit.signal !== null) ? new ExitedDuringSetup(mapped, exit) : mapped;
	}
	const child = spawns?.stop();
	// The SDK parses list results into its own types, dropping keys no spec names: pinning sees them first.
	// `onmessage` is the Transport interface's public callback, which the SDK set at connect.
	const port = transport as unknown as { onmessage?: (message: Readonly<Record<string, unknown>>, extra?: unknown) => void };
	const deliver = port.onmessage;
	const filter = options.filter;
	if (filter && deliver) port.onmessage = (message, extra) => deliver(filter(message), extra);
	const live: Live = {
		client,
		pgid: wrapper && transport instanceof sdk.StdioClientTransport ? (transport.pid ?? undefined) : undefined,
		owner: config.transport === "stdio" ? owner : undefined,
		era: client.getProtocolEra?.() ?? "legacy",
		protocolVersion: client.getNegotiatedProtocolVersion?.() ?? "unknown",
		serverName: client.getServerVersion()?.name,
		instructions: client.getInstructions(),
		closing,
		outputChecks: checks,
	};
	client.onclose = () => {
		if (live.closing.on) return;
		checks.close();
		options.onClose(live, exitOf(child));
		void killAll(live.pgid, live.owner);
	};
	return live;
}

/**
 * The server's own process, as Node created it, for how it ended (the SDK's "Connection closed" does not
 * say, and it forgets the process when a connect fails). Seen through Node's public `child_process`
 * diagnostics channel while this connect runs, picked by the owner mark in its command line; the SDK's
 * probe sibling carries the same mark but no stderr pipe. Not a transport of our own over a child we
 * spawn: the SDK runs its probe sibling only for its own stdio transport, and a server that exits when
 * probed would then fail instead of falling back to the legacy era.
 */
function watchSpawns(marker: string): Readonly<{ stop: () => ChildProcess | undefined }> {
	const seen: ChildProcess[] = [];
	const onSpawn = (message: unknown) => {
		const child = (message as { process?: ChildProcess }).process;
		if (child) seen.push(child);
	};
	subscribe("child_process", onSpawn);
	return {
		stop() {
			unsubscribe("child_process", onSpawn);
			return seen.findLast((child) => child.spawnargs?.includes(marker) && child.stderr !== null);
		},
	};
}

/** How a process ended: at once if it has, else at its `exit` within half a second; undefined otherwise. */
function exitOf(child: ChildProcess | undefined): Promise<Exit | undefined> {
	if (!child) return Promise.resolve(undefined);
	const now = (): Exit | undefined =>
		child.exitCode !== null || child.signalCode !== null ? { code: child.exitCode, signal: child.signalCode } : undefined;
	const ended = now();
	if (ended) return Promise.resolve(ended);
	return new Promise((resolve) => {
		const done = () => {
			clearTimeout(timer);
			child.off("exit", done);
			resolve(now());
		};
		const timer = setTimeout(done, 500);
		child.once("exit", done);
	});
}

/** Closes on purpose: the client, then the process group and whatever carries the owner mark. */
export async function closeLive(live: Live): Promise<void> {
	live.closing.set();
	live.outputChecks.close();
	await live.client.close().catch(() => undefined);
	await killAll(live.pgid, live.owner);
}
