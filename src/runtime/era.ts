/**
 * `auto` for a stdio server at the cost of one start. The SDK's own `auto` probes a short-lived sibling
 * first and starts the server only once the sibling has answered: two starts, one after the other. Here
 * the resident starts at the same moment as the sibling and hears nothing until the sibling has answered
 * `server/discover`; it is then connected in the era found (the SDK's `prior`), so the SDK probes nothing
 * itself. The probe is the SDK's: a client pinned to the modern era, over the sibling (a transport that
 * is not the SDK's own stdio class probes in place); any failure means legacy, as the SDK's stdio probe
 * decides. A server that exits on a pre-`initialize` request only loses the sibling; one that cannot run twice
 * at once (a lock: whichever process loses it exits, or waits) starts again alone once the sibling has gone,
 * or goes on once the sibling, idle past its answer, has been ended.
 */
import type {
	Client,
	DiscoverResult,
	JSONRPCMessage,
	Transport,
	TransportSendOptions,
	VersionNegotiationOptions,
} from "@modelcontextprotocol/client";
import type { StdioTransport } from "../contracts.ts";
import { errorCode } from "../errors.ts";

export type Prior = Readonly<{ kind: "legacy" }> | Readonly<{ kind: "modern"; discover: DiscoverResult }>;

/** The modern revision the probe asks for (the one the SDK speaks). */
export const MODERN = "2026-07-28";

/**
 * What each stdio server's probe found in this session, by server identity: a reconnect connects in
 * that era with no new probe. Never written to disk: a new Pi process probes again.
 */
export class Eras {
	readonly #found = new Map<string, Prior>();

	get(key: string): Prior | undefined {
		return this.#found.get(key);
	}

	set(key: string, prior: Prior): void {
		this.#found.delete(key);
		this.#found.set(key, prior);
		// Bounded: entries of servers long gone from the configuration are dropped first.
		for (const old of this.#found.keys()) {
			if (this.#found.size <= 256) break;
			this.#found.delete(old);
		}
	}
}

/**
 * How long a probe sibling has to exit once its stdin has ended, before it gets SIGTERM. Servers exit on
 * their stdin's end in ~20-35 ms (the fixture, server-everything, server-filesystem), running their exit
 * handlers: a lock file taken at start is removed then, and not by a signal the server may not handle.
 */
export const SIBLING_GRACE_MS = 300;

/**
 * How long a probe sibling that has answered idles, waiting for the resident's outcome, before it is ended
 * anyway (its stdin first, as above). A resident that waits for a lock the sibling took, rather than exiting,
 * goes on only then; any other resident has usually answered long before (both started together).
 */
export const SIBLING_IDLE_MS = 1000;

/**
 * A transport started at once: its `start()` (a client's connect calls it) returns that first start, so
 * a server spawns before anyone talks to it. It remembers whether its other end went away by itself
 * (the process exited) before anyone closed it. With `hangUp` (a probe sibling), `close()` resolves at
 * once, and the caller awaits the end through `closed()` while it goes on: the stdin ends first (the
 * MCP shutdown order), then `hangUp` signals it if it still runs after `SIBLING_GRACE_MS`, or at once
 * through `hurry()`.
 */
export class Started implements Transport {
	onclose?: () => void;
	onerror?: (error: Error) => void;
	onmessage?: <T extends JSONRPCMessage>(message: T) => void;
	readonly #inner: StdioTransport;
	readonly #start: Promise<void>;
	readonly #hangUp?: (pid: number) => void;
	#ended = false;
	#endedFirst?: boolean;
	#closed?: Promise<void>;
	#closingPid?: number | null;
	#hurried = false;
	#first?: () => Promise<void>;

	constructor(inner: StdioTransport, hangUp?: (pid: number) => void) {
		this.#inner = inner;
		this.#hangUp = hangUp;
		inner.onclose = () => {
			this.#ended = true;
			this.onclose?.();
		};
		inner.onerror = (error) => this.onerror?.(error);
		inner.onmessage = (message) => this.onmessage?.(message);
		this.#start = inner.start();
		// A failed spawn is reported by the connect that awaits the start.
		this.#start.catch(() => undefined);
	}

	start(): Promise<void> {
		return this.#start;
	}

	send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
		return this.#inner.send(message, options);
	}

	/**
	 * While set, a close first awaits `first`. A resident's close waits for the probe sibling's end, so that the
	 * sibling (waiting for a lock the resident holds) cannot take what the resident frees on its way out.
	 */
	closeAfter(first: (() => Promise<void>) | undefined): void {
		this.#first = first;
	}

	close(): Promise<void> {
		if (!this.#closed) {
			this.#endedFirst = this.#ended;
			// Read before the SDK's close, which forgets the process.
			this.#closingPid = this.pid;
			const first = this.#first?.() ?? Promise.resolve();
			// The SDK's close ends the stdin, then waits 2 s before its own SIGTERM (to the process alone).
			this.#closed = first.then(() => this.#inner.close()).catch(() => undefined);
			if (this.#hangUp) {
				const timer = setTimeout(() => this.hurry(), SIBLING_GRACE_MS);
				void this.#closed.then(() => clearTimeout(timer));
			}
		}
		return this.#hangUp ? Promise.resolve() : this.#closed;
	}

	/** A probe sibling closed but still running: signalled now, without the rest of its grace. */
	hurry(): void {
		const pid = this.#closingPid;
		if (!this.#hangUp || pid === null || pid === undefined || this.#ended || this.#hurried) return;
		this.#hurried = true;
		this.#hangUp(pid);
	}

	/** Resolves once closed (after `close()`). */
	closed(): Promise<void> {
		return this.#closed ?? this.close().then(() => this.#closed);
	}

	/** Whether the other end went away by itself (the process exited) before it was closed. */
	get endedByItself(): boolean {
		return this.#endedFirst ?? this.#ended;
	}

	/** The SDK tells a stdio transport by these two (on the probe: a closed sibling means legacy). */
	get pid(): number | null {
		return this.#inner.pid ?? null;
	}

	get stderr() {
		return this.#inner.stderr ?? null;
	}
}

/**
 * The era `sibling` answers to `server/discover`, through `probe` (a client pinned to the modern
 * revision); any failure short of an abort means legacy. `answered`: the sibling was still running when
 * the verdict came (it answered or stayed silent), as opposed to exiting by itself. The caller closes
 * `probe`, and so the sibling, as `connectStdio` says.
 */
export async function probeEra(
	probe: Client,
	sibling: Started,
	options: Readonly<{ timeout: number; signal: AbortSignal }>,
): Promise<Readonly<{ prior: Prior; answered: boolean }>> {
	const prior = await probe.connect(sibling, options).then(
		(): Prior => {
			const discover = probe.getDiscoverResult();
			return discover ? { kind: "modern", discover } : { kind: "legacy" };
		},
		(error: unknown): Prior => {
			if (options.signal.aborted) throw options.signal.reason ?? error;
			return { kind: "legacy" };
		},
	);
	return { prior, answered: !sibling.endedByItself };
}

type Request = Readonly<{ timeout: number; signal: AbortSignal }>;

export type StdioContext = Readonly<{
	/** Starts one more process of the server: the resident (stderr to the tail) or a probe sibling. */
	start: (stderr: "pipe" | "ignore") => Promise<Started>;
	/** A new client, negotiating as the entry says unless told otherwise. */
	client: (negotiation?: VersionNegotiationOptions) => Client;
	request: Request;
	probeMs: number;
	eras?: Eras;
	/** The server's identity, for `eras`. */
	key: string;
}>;

/**
 * Connects a stdio server; resolves with the client and the resident it runs over. `legacy` and a pinned
 * era start one process (a pin probes the resident in place); `auto` is the overlap above, or one start
 * in the era a probe of this session already found.
 */
export async function connectStdio(
	config: Readonly<{ protocolVersion: string }>,
	c: StdioContext,
): Promise<Readonly<{ client: Client; resident: Started }>> {
	const known = config.protocolVersion === "auto" ? c.eras?.get(c.key) : undefined;
	if (config.protocolVersion !== "auto" || known) {
		const resident = await c.start("pipe");
		return { client: await connectWith(c.client(), resident, known, c.request), resident };
	}
	// The sibling spawns first: its answer is what the call waits for, while the resident has the probe's
	// round trip to spare (a spawn takes ~10 ms of this thread).
	const sibling = await c.start("ignore");
	const resident = await c.start("pipe");
	const probe = c.client({ mode: { pin: MODERN }, probe: { timeoutMs: c.probeMs } });
	const { prior, answered } = await probeEra(probe, sibling, c.request);
	// The sibling idles until the resident's outcome is known: connected, it is signalled at once. A failed
	// connect closes the resident (the SDK does so in the handshake), and the sibling is ended first, gracefully:
	// its stdin ends, and a signal follows only after its grace. Its exit handlers run (they may remove a lock
	// file, which a signal would leave behind, and the server may start again), and a sibling waiting for a lock
	// the resident holds cannot take it as the resident goes. Signalled as soon as it answered, a sibling left
	// such a lock behind whenever the resident's exit was seen late (a loaded machine). Waiting costs the usual
	// first call ~2-3 % (measured on the fixture): the sibling's end (~9 ms) no longer overlaps the resident's
	// connect. Past SIBLING_IDLE_MS the sibling is ended gracefully anyway, for a resident waiting on its lock.
	const client = c.client();
	const gracefully = () => endSibling(probe, sibling, "gracefully");
	const idle = setTimeout(() => void gracefully(), SIBLING_IDLE_MS);
	resident.closeAfter(gracefully);
	const outcome = await connectWith(client, resident, prior, c.request)
		.finally(() => {
			clearTimeout(idle);
			resident.closeAfter(undefined);
		})
		.then(
			() => "connected" as const,
			(error: unknown) => {
				if (c.request.signal.aborted) throw error;
				// The resident exited while the sibling ran: a server that cannot run twice at once (it holds a lock,
				// a port or a database file).
				if (answered && resident.endedByItself) return "exited" as const;
				// The probe read legacy, but the resident refused the legacy handshake and still runs: a modern-only
				// server whose sibling lost such a lock to the resident, and exited or waits for it, silent until the
				// probe's timeout. (A resident that timed out as well is not one: it is not started again.)
				const refused = !answered || errorCode(error) !== "REQUEST_TIMEOUT";
				if (prior.kind === "legacy" && !resident.endedByItself && refused) return { refused: error };
				throw error;
			},
		)
		.catch(async (error: unknown) => {
			await endSibling(probe, sibling, "now");
			throw error;
		});
	await (outcome === "connected" ? endSibling(probe, sibling, "now") : gracefully());
	if (outcome === "connected") {
		c.eras?.set(c.key, prior);
		return { client, resident };
	}
	// Now that the sibling has gone, the server starts again, alone: in the era found, or probed in place.
	const again = await c.start("pipe");
	if (outcome === "exited") {
		const alone = await connectWith(c.client(), again, prior, c.request);
		c.eras?.set(c.key, prior);
		return { client: alone, resident: again };
	}
	const alone = await connectWith(c.client({ mode: { pin: MODERN } }), again, undefined, c.request).catch(() => {
		throw outcome.refused;
	});
	const discover = alone.getDiscoverResult();
	if (discover) c.eras?.set(c.key, { kind: "modern", discover });
	return { client: alone, resident: again };
}

/** Closes the probe client and its sibling, signalled `now` or given its grace; resolves once it has gone. */
async function endSibling(probe: Client, sibling: Started, how: "now" | "gracefully"): Promise<void> {
	void sibling.close();
	if (how === "now") sibling.hurry();
	await probe.close().catch(() => undefined);
	await sibling.closed();
}

/** Connects `client` over `transport`, from `prior` if given; on failure the client is closed. */
async function connectWith(client: Client, transport: Started, prior: Prior | undefined, request: Request): Promise<Client> {
	try {
		await client.connect(transport, prior ? { ...request, prior } : request);
		// Connecting from a modern prior exchanges nothing: asking the resident itself says that it runs.
		if (prior?.kind === "modern") await client.discover(request);
		return client;
	} catch (error) {
		await client.close().catch(() => undefined);
		throw error;
	}
}
