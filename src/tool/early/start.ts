/**
 * The early start's work, loaded when the model begins its first `mcp` call: once the streamed arguments
 * name an action that connects and an enabled server, that server's shared setup starts with what the call
 * will ask first (its tool listing, or the resources, templates or prompts listing); then the output check
 * of the tool a `call` names and the search index of a `tools` query. The call gets a runtime that answers
 * those asks with what was sent for it (`forCall`); everything else is the runtime's own.
 *
 * Bounds: nothing while `mcp` is not an active tool or for a server with `"earlyStart": false`; one record
 * per call id, at most `MAX_CALLS`; a server begun for a call that Pi blocks, rejects or never runs, that
 * the executed call does not use, or that the user declined (`confirm.ts`), is closed (unless another call
 * being written named it or a running call uses it).
 */
import type { MessageUpdateEvent } from "@earendil-works/pi-coding-agent";
import type { Client, Tool } from "@modelcontextprotocol/client";
import { awaitWith } from "../../async.ts";
import { LISTINGS } from "../../catalog/actions.ts";
import { loadSearch } from "../../catalog/listing.ts";
import type { Action } from "../../catalog/requests.ts";
import type { CallStart, Calls, Capability, RequestOptions, Runtime, Session } from "../../contracts.ts";
import { CallFailed } from "../../errors.ts";
import { isObject, type ServerEntry } from "../../schema.ts";
import { compileArguments, loadJsonReader, StreamedCall, type ToolDefinition } from "./stream.ts";

/** Calls written at once that keep a record; past it the oldest is ended. */
const MAX_CALLS = 16;

type Request = (client: Client, options: RequestOptions) => Promise<unknown>;

/** What the early start sent for one call while the model wrote it, and the servers it began and named. */
class Written {
	readonly reader = new StreamedCall();
	/** Servers this call's steps reached: in use by it, so no other call's end closes them. */
	readonly named = new Set<string>();
	/** Servers this start began (they were idle): closed if the call never uses them. */
	readonly started = new Set<string>();
	/** The tool listing sent for this call, by server. */
	readonly listings = new Map<string, Promise<readonly Tool[]>>();
	/** The resources, templates or prompts listing sent for this call, by server, with the request it runs. */
	readonly requests = new Map<string, Readonly<{ run: Request; sent: Promise<unknown> }>>();
}

/** A server the early start may begin: configured, usable, enabled and not opted out. */
const startable = (entry: ServerEntry | undefined): entry is ServerEntry & { config: NonNullable<ServerEntry["config"]> } =>
	entry?.enabled === true && entry.config !== undefined && entry.error === undefined && entry.config.earlyStart !== false;

const stateOf = (runtime: Runtime, server: string) => runtime.status().find((status) => status.name === server)?.state;

/** Sent without the call's signal (the call did not exist yet): cancelling the call ends only its wait. */
const cancelled = (server: string) => () =>
	new CallFailed(server, `the request to MCP server "${server}" was cancelled`, "cancelled");

/** The runtime a call gets: its first asks answered by what the early start sent for it. */
function forCall(runtime: Runtime, call: Written): Runtime {
	return {
		...runtime,
		tools: (server, signal) => {
			const held = call.listings.get(server);
			return held ? awaitWith(held, signal, cancelled(server)) : runtime.tools(server, signal);
		},
		request: <T>(
			server: string,
			what: string,
			capability: Capability,
			run: (client: Client, options: RequestOptions) => Promise<T>,
			signal?: AbortSignal,
		) => {
			const held = call.requests.get(server);
			if (held?.run !== run) return runtime.request(server, what, capability, run, signal);
			return awaitWith(held.sent as Promise<T>, signal, cancelled(server));
		},
	};
}

/** The `mcp` call a `message_update` is about: its id, its partial arguments, and how it changed. */
function streamedCall(event: MessageUpdateEvent) {
	const update = event.assistantMessageEvent;
	if (update.type !== "toolcall_start" && update.type !== "toolcall_delta" && update.type !== "toolcall_end") return undefined;
	const block = update.type === "toolcall_end" ? update.toolCall : update.partial.content[update.contentIndex];
	if (block?.type !== "toolCall" || block.name !== "mcp") return undefined;
	const delta = update.type === "toolcall_delta" ? update.delta : undefined;
	return {
		id: block.id,
		args: block.arguments,
		begins: update.type === "toolcall_start",
		complete: update.type === "toolcall_end",
		delta,
	};
}

/** Whether an executed call uses `server`: the one it names, or every server for a search without one. */
const uses = (call: CallStart, server: string) =>
	call.action !== "status" && (call.server === undefined ? call.action === "tools" : call.server === server);

/** Whether a call's result says the user declined it (`confirm.ts`): it never ran, like a blocked call. */
const declined = (result: unknown) => isObject(result) && isObject(result.details) && result.details.declined === true;

/** A running call and the servers this start began for it: closed if the user declines the call. */
type Running = Readonly<{ start: CallStart; started: readonly string[] }>;

export class EarlyStart {
	readonly #calls = new Map<string, Written>();
	/** Calls that run with servers begun for them, until Pi reports their end; at most `MAX_CALLS`. */
	readonly #running = new Map<string, Running>();
	readonly #inner: Calls;
	readonly #active: () => boolean;
	#parse?: (text: string) => unknown;

	constructor(inner: Calls, active: () => boolean, tool: ToolDefinition) {
		this.#inner = inner;
		this.#active = active;
		compileArguments(tool).catch(() => undefined);
		loadJsonReader().then(
			(parse) => {
				this.#parse = parse;
			},
			() => undefined,
		);
	}

	/** `message_update`: an `mcp` call begins, grows or is complete. */
	update(event: MessageUpdateEvent): void {
		const call = streamedCall(event);
		if (call?.begins) this.#begin(call.id);
		else if (call) this.#advance(call.id, call.args, call.complete, call.delta);
	}

	/**
	 * The call runs: it takes what was sent for it. Servers this start began that the call does not use are
	 * closed, as for a blocked call; those it uses are in use now, so no other call's end closes them.
	 */
	take(start: CallStart): (session: Session) => Session {
		const call = this.#calls.get(start.id);
		this.#calls.delete(start.id);
		for (const other of this.#calls.values()) {
			for (const name of other.started) if (uses(start, name)) other.started.delete(name);
		}
		for (const [id, other] of this.#running) {
			this.#running.set(id, { ...other, started: other.started.filter((name) => !uses(start, name)) });
		}
		if (!call) return (session) => session;
		this.#close([...call.started].filter((name) => !uses(start, name)));
		const kept = [...call.started].filter((name) => uses(start, name));
		if (this.#running.size >= MAX_CALLS) this.#running.delete([...this.#running.keys()][0] ?? "");
		if (kept.length > 0) this.#running.set(start.id, { start, started: kept });
		return (session) => ({ ...session, runtime: forCall(session.runtime, call) });
	}

	/** `tool_execution_end`: a call ended; one that never ran (blocked, rejected, declined by the user) is closed. */
	ended(id: string, result?: unknown): void {
		const ran = this.#running.get(id);
		this.#running.delete(id);
		if (ran && declined(result)) this.#close(ran.started);
		const call = this.#calls.get(id);
		if (!call) return;
		this.#calls.delete(id);
		this.#close([...call.started]);
	}

	/** `turn_end`, `agent_end`: every call still held has ended. */
	sweep(): void {
		for (const id of [...this.#calls.keys()]) this.ended(id);
		this.#running.clear();
	}

	/** Whether `call` is still being written (not run, not ended). */
	#holds(call: Written): boolean {
		return [...this.#calls.values()].includes(call);
	}

	/** Closes servers begun early that no call being written has named and no running call uses. */
	#close(names: readonly string[]): void {
		const runtime = this.#inner.runtime();
		for (const name of names) {
			if ([...this.#calls.values()].some((other) => other.named.has(name))) continue;
			if ([...this.#running.values()].some((other) => uses(other.start, name))) continue;
			runtime?.reset(name).catch(() => undefined);
		}
	}

	#begin(id: string): void {
		if (!this.#active() || !this.#inner.entries().some(startable)) return;
		if (this.#calls.size >= MAX_CALLS) this.ended([...this.#calls.keys()][0] ?? "");
		this.#calls.set(id, new Written());
		void this.#inner.preload();
	}

	#advance(id: string, args: Readonly<Record<string, unknown>>, complete: boolean, delta: unknown): void {
		const call = this.#calls.get(id);
		if (!call) return;
		const { named, called, searched, everywhere } = call.reader.due(args, complete, delta, this.#parse);
		if (named) this.#step(call, named.server, (runtime) => this.#open(call, runtime, named.server, named.action));
		if (called) {
			this.#step(call, called.server, async (runtime) => {
				// Only from the listing sent for this call: this step sends nothing of its own.
				const tools = await call.listings.get(called.server);
				// Re-read after the wait: the call may have ended and its server been closed, which this must not undo.
				if (!this.#holds(call) || stateOf(runtime, called.server) !== "ready") return;
				if (tools?.some((tool) => tool.name === called.tool)) await runtime.tool(called.server, called.tool);
			});
		}
		if (searched) {
			this.#step(call, searched, async () => {
				const [tools, { indexOf }] = await Promise.all([call.listings.get(searched), loadSearch()]);
				if (tools) await indexOf([{ server: searched, tools }]);
			});
		}
		if (everywhere) {
			for (const entry of this.#inner.entries().filter(startable)) {
				this.#step(call, entry.name, (runtime) => this.#open(call, runtime, entry.name, "tools"));
			}
		}
	}

	/** Starts `server`'s setup with what `action` asks first; the call reports a failure. */
	#open(call: Written, runtime: Runtime, server: string, action: Action): void {
		const begins = stateOf(runtime, server) === "idle";
		if (begins) call.started.add(server);
		if (action === "tools" || (begins && (action === "call" || action === "describe"))) {
			if (!call.listings.has(server)) call.listings.set(server, quiet(runtime.tools(server)));
		} else if (action === "resources" || action === "templates" || action === "prompts") {
			const { what, capability, run }: Readonly<{ what: string; capability: Capability; run: Request }> = LISTINGS[action];
			call.requests.set(server, { run, sent: quiet(runtime.request(server, what, capability, run)) });
		} else if (begins) {
			quiet(runtime.connect(server));
		}
	}

	/** One step for server `name` once the configuration is read; a failure is left to the call, which reports it. */
	#step(call: Written, name: string, run: (runtime: Runtime) => unknown): void {
		this.#stepOnce(call, name, run).catch(() => undefined);
	}

	async #stepOnce(call: Written, name: string, run: (runtime: Runtime) => unknown): Promise<void> {
		const session = await this.#inner.open();
		// Re-read after the wait: the configuration may have changed, the call may have ended.
		if (!startable(session.config.servers.find((entry) => entry.name === name))) return;
		if (!this.#holds(call)) return;
		call.named.add(name);
		await run(session.runtime);
	}
}

/** The same promise, with its rejection marked as handled: the call that awaits it reports it. */
function quiet<T>(promise: Promise<T>): Promise<T> {
	promise.catch(() => undefined);
	return promise;
}
