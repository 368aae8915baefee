/**
 * Opens one server: the transport (a stdio child in its own process group, marked with an owner
 * value, or Streamable HTTP with the narrow auth provider) and era negotiation; on failure nothing
 * started is left running. Closing kills the process group and sweeps what escaped it. When to open
 * is the connection table's (`table.ts`); messages are `failures.ts`'s.
 */
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { Client, Transport, VersionNegotiationOptions } from "@modelcontextprotocol/client";
import { serverIdentity } from "../config/identity.ts";
import type { ClientInfo, Live, OutputChecks, TransportAuth, Transports } from "../contracts.ts";
import type { HttpServerConfig, ServerConfig } from "../schema.ts";
import { loadSdk } from "../sdk.ts";
import { connectStdio, type Eras, Started } from "./era.ts";
import { type Exit, ExitedDuringSetup } from "./failures.ts";
import { ENV_BINARY, hangUp, killAll, OWNER_ENV, setsid } from "./processes.ts";
import type { TailBuffer } from "./stderr-tail.ts";
import { realTransports } from "./transports.ts";
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
	/** Defaults to the real ones. */
	transports?: Transports;
	/** The eras this session's probes found: a reconnect in `auto` reuses its server's and probes nothing. */
	eras?: Eras;
	/** Sees each message from the server before the SDK parses it, and may change it (pinning, #47). */
	filter?: (message: Readonly<Record<string, unknown>>) => Readonly<Record<string, unknown>>;
	/** The server said a list changed (a `list_changed` notification). */
	onListChanged?: (kind: "tools" | "prompts" | "resources") => void;
}>;

/**
 * After connect, each message from the server passes `filter` before the SDK parses it: the SDK parses list
 * results into its own types, dropping keys no spec names, and pinning must see them first. `onmessage` is
 * the Transport interface's public callback, which the SDK set at connect.
 */
function filterMessages(transport: Transport, filter: OpenOptions["filter"]): void {
	const port = transport as unknown as { onmessage?: (message: Readonly<Record<string, unknown>>, extra?: unknown) => void };
	const deliver = port.onmessage;
	if (filter && deliver) port.onmessage = (message, extra) => deliver(filter(message), extra);
}

/**
 * A probe that gets no answer reads as legacy once this has passed: half the setup's time (the request
 * timeout bounds the whole setup), at most 10 s, so a silent sibling leaves the other half to connect in.
 */
const probeTimeout = (config: ServerConfig) => Math.min(Math.ceil(config.requestTimeoutMs / 2), 10_000);

function negotiation(config: ServerConfig): VersionNegotiationOptions {
	if (config.protocolVersion === "legacy") return { mode: "legacy" };
	const probe = { timeoutMs: probeTimeout(config) };
	return config.protocolVersion === "2026-07-28" ? { mode: { pin: "2026-07-28" }, probe } : { mode: "auto", probe };
}

/**
 * The fetch under the HTTP transport never follows a redirect (#39): the SDK follows one itself only
 * within the origin, through this again (so each hop gets its own DPoP proof), and fails on any other,
 * naming where it pointed. Credentials, headers and proofs never reach another origin, whatever its default.
 */
const unredirected = (url: string | URL, init?: RequestInit) => fetch(url, { ...init, redirect: "manual" });

function httpTransport(transports: Transports, config: HttpServerConfig, auth: TransportAuth | undefined): Promise<Transport> {
	// The transport gets only the narrow provider; for DPoP-bound tokens its fetch adds each request's proof.
	const narrow = auth && {
		authProvider: { token: () => auth.token(), onUnauthorized: auth.onUnauthorized?.bind(auth) },
		...(auth.fetch ? { fetch: auth.fetch(unredirected) } : {}),
	};
	return transports.http(new URL(config.url), {
		requestInit: { headers: { ...config.headers } },
		redirectPolicy: "same-origin",
		fetch: unredirected,
		...narrow,
	});
}

/** Connects one server; on failure everything started is closed and killed before rejecting. */
export async function openServer(config: ServerConfig, options: OpenOptions): Promise<Live> {
	const { signal, tail } = options;
	const sdk = await loadSdk();
	if (signal.aborted) throw signal.reason;
	tail.clear();
	const transports = options.transports ?? realTransports;
	const checks = outputChecks();
	const watched = options.onListChanged;
	// A changed list is listed again only when next used: no request unless someone asks.
	const changed = (kind: "tools" | "prompts" | "resources") => ({
		autoRefresh: false,
		debounceMs: 0,
		onChanged: () => watched?.(kind),
	});
	const listChanged = watched && { tools: changed("tools"), prompts: changed("prompts"), resources: changed("resources") };
	// A client told how to negotiate is the probe's (`era.ts`): it asks the sibling one thing and listens to nothing.
	const client = (told?: VersionNegotiationOptions) => {
		const listens = told === undefined && listChanged;
		const made = new sdk.Client(
			{ name: options.clientInfo.name, version: options.clientInfo.version },
			{
				capabilities: {},
				versionNegotiation: told ?? negotiation(config),
				jsonSchemaValidator: checks,
				...(listens ? { listChanged } : {}),
			},
		);
		made.onerror = () => {
			// Transport errors surface through the failing request or `onclose`; never on the console.
		};
		return made;
	};
	const request = { timeout: config.requestTimeoutMs, signal };
	if (config.transport === "http") {
		const http = client();
		try {
			const transport = await httpTransport(transports, config, options.authProvider);
			await http.connect(transport, request);
			filterMessages(transport, options.filter);
		} catch (error) {
			checks.close();
			await http.close().catch(() => undefined);
			throw await options.mapError(error);
		}
		return watchClose(new Connection(http, checks, {}), undefined, options);
	}
	const wrapper = setsid();
	const owner = randomUUID();
	const marker = `${OWNER_ENV}=${owner}`;
	const made: Started[] = [];
	const start = async (stderr: "pipe" | "ignore") => {
		const inner = await transports.stdio({
			// `env` (same process, exec'd) carries the owner mark in the command line too, where `watchSpawns` sees it.
			command: wrapper ?? config.command,
			args: wrapper ? [ENV_BINARY, marker, config.command, ...config.args] : [...config.args],
			env: { ...config.env, [OWNER_ENV]: owner },
			cwd: config.cwd,
			stderr,
		});
		if (signal.aborted) throw signal.reason;
		// A probe sibling is signalled if it lingers once closed; the resident's stderr goes to the tail.
		const started = new Started(inner, stderr === "ignore" ? hangUp : undefined);
		made.push(started);
		if (stderr === "pipe") {
			tail.clear();
			started.stderr?.on("data", (chunk: Buffer) => tail.push(chunk));
		}
		return started;
	};
	const spawns = watchSpawns(marker);
	try {
		const { client: connected, resident } = await connectStdio(config, {
			start,
			client,
			request,
			probeMs: probeTimeout(config),
			eras: options.eras,
			key: serverIdentity(config).key,
		});
		filterMessages(resident, options.filter);
		const child = spawns.stop();
		const pgid = wrapper ? (resident.pid ?? undefined) : undefined;
		return watchClose(new Connection(connected, checks, { pgid, owner }), child, options);
	} catch (error) {
		const child = spawns.stop();
		// Read before closing: how the server ended by itself, not by our kill.
		const exit = child ? { code: child.exitCode, signal: child.signalCode } : undefined;
		checks.close();
		await Promise.all(made.map((transport) => transport.close()));
		await killAll(wrapper ? child?.pid : undefined, owner);
		const mapped = await options.mapError(error);
		throw exit && (exit.code !== null || exit.signal !== null) ? new ExitedDuringSetup(mapped, exit) : mapped;
	}
}

/** From now on, the connection closing by itself (the server exited, the stream ended) is reported. */
function watchClose(live: Connection, child: ChildProcess | undefined, options: OpenOptions): Live {
	live.client.onclose = () => {
		if (live.closing) return;
		live.outputChecks.close();
		options.onClose(live, exitOf(child));
		void killAll(live.pgid, live.owner);
	};
	return live;
}

/**
 * One open connection, the owner of its client and processes: only `close` closes it on purpose, so
 * the client's `onclose` can tell that from the server going away (which latches a failure).
 */
class Connection implements Live {
	readonly era: string;
	readonly protocolVersion: string;
	readonly serverName?: string;
	readonly instructions?: string;
	readonly pgid?: number;
	readonly owner?: string;
	#closing = false;

	constructor(
		readonly client: Client,
		readonly outputChecks: OutputChecks,
		processes: Readonly<{ pgid?: number; owner?: string }>,
	) {
		this.era = client.getProtocolEra() ?? "legacy";
		this.protocolVersion = client.getNegotiatedProtocolVersion() ?? "unknown";
		this.serverName = client.getServerVersion()?.name;
		this.instructions = client.getInstructions();
		this.pgid = processes.pgid;
		this.owner = processes.owner;
	}

	get closing(): boolean {
		return this.#closing;
	}

	/** Closes on purpose: the client, then the process group and whatever carries the owner mark. */
	async close(): Promise<void> {
		this.#closing = true;
		this.outputChecks.close();
		await this.client.close().catch(() => undefined);
		await killAll(this.pgid, this.owner);
	}
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
export function closeLive(live: Live): Promise<void> {
	return live.close();
}
