/**
 * Opens one server: the transport (a stdio child in its own process group, marked with an owner
 * value, or Streamable HTTP with the narrow auth provider) and era negotiation; on failure nothing
 * started is left running. Closing kills the process group and sweeps what escaped it. The
 * connection table that decides when to open lives in `connections.ts` (`runtime.ts` hands it these
 * two functions); messages in `failures.ts`.
 */
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { ClientInfo, Live, TransportAuth } from "../contracts.ts";
import type { ServerConfig } from "../schema.ts";
import { loadSdk } from "../sdk.ts";
import { type Exit, ExitedDuringSetup } from "./failures.ts";
import { killAll, OWNER_ENV, setsid } from "./processes.ts";
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

/** Connects one server; on failure everything started is closed and killed before rejecting. */
export async function openServer(config: ServerConfig, options: OpenOptions): Promise<Live> {
	const { signal, tail } = options;
	const sdk = await loadSdk();
	if (signal.aborted) throw signal.reason;
	tail.clear();
	const wrapper = config.transport === "stdio" ? setsid() : null;
	const owner = randomUUID();
	const auth = options.authProvider;
	// The transport gets only the narrow provider; for DPoP-bound tokens its fetch adds each request's proof.
	const narrow = auth && {
		authProvider: { token: () => auth.token(), onUnauthorized: auth.onUnauthorized?.bind(auth) },
		...(auth.fetch ? { fetch: auth.fetch(unredirected) } : {}),
	};
	const transport =
		config.transport === "stdio"
			? new sdk.StdioClientTransport({
					command: wrapper ?? config.command,
					args: wrapper ? [config.command, ...config.args] : [...config.args],
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
	const spawned: { pid?: number; child?: ChildProcess } = {};
	if (transport instanceof sdk.StdioClientTransport) {
		transport.stderr?.on("data", (chunk: Buffer) => tail.push(chunk));
		// The SDK forgets the pid when a connect fails; keep it to kill the group. An own-property
		// wrapper leaves the class untouched, so the SDK still runs its probe sibling.
		const start = transport.start.bind(transport);
		transport.start = async () => {
			await start();
			spawned.pid = transport.pid ?? undefined;
			// The process itself (a private field: without it, only the exit code is missing from the
			// error) tells how it ended, which the SDK's "Connection closed" does not.
			spawned.child = (transport as unknown as { _process?: ChildProcess })._process;
		};
	}
	const checks = outputChecks();
	const client = new sdk.Client(
		{ name: options.clientInfo.name, version: options.clientInfo.version },
		{ capabilities: {}, versionNegotiation: negotiation(config), jsonSchemaValidator: checks },
	);
	const closing = { value: false };
	client.onerror = () => {
		// Transport errors surface through the failing request or `onclose`; never on the console.
	};
	try {
		await client.connect(transport, { timeout: config.requestTimeoutMs, signal });
	} catch (error) {
		// Read before closing: how the server ended by itself, not by our kill.
		const exit = spawned.child ? { code: spawned.child.exitCode, signal: spawned.child.signalCode } : undefined;
		closing.value = true;
		checks.close();
		await client.close().catch(() => undefined);
		if (config.transport === "stdio") await killAll(wrapper ? spawned.pid : undefined, owner);
		const mapped = await options.mapError(error);
		throw exit && (exit.code !== null || exit.signal !== null) ? new ExitedDuringSetup(mapped, exit) : mapped;
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
		outputChecks: checks,
	};
	client.onclose = () => {
		if (live.closing.value) return;
		checks.close();
		options.onClose(live, exitOf(spawned.child));
		void killAll(live.pgid, live.owner);
	};
	return live;
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
	live.closing.value = true;
	live.outputChecks.close();
	await live.client.close().catch(() => undefined);
	await killAll(live.pgid, live.owner);
}
