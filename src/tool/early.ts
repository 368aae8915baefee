/**
 * The early start: while the model is still writing an `mcp` call, prepare what the call will need. Pi's
 * check of its arguments and the modules behind the tool with the MCP SDK (100–150 ms inside Pi) load when
 * the call begins; once the streamed arguments name an action that connects and an enabled server, that
 * server's shared setup starts (the call joins it), with its tool listing for `call`, `describe` and
 * `tools`, or the listing a `resources`, `templates` or `prompts` call needs; then the output check of the
 * tool a `call` names and the search index of a `tools` query. A `tools` query without a server starts
 * every enabled server not yet connected. A name counts as written at its closing quote (`endedSoFar`): a
 * real model streams the rest of the call for longer than a local server takes to start.
 *
 * Bounds: nothing while `mcp` is not an active tool or for a server with `"earlyStart": false`; each
 * call's steps happen once (one record per call id, at most `MAX_CALLS`); a server this start began for a
 * call that Pi then blocks, rejects or never runs is closed when Pi reports that call's end (or its turn's).
 * This module is the only place that reads a call as it streams; `index.ts` only registers its handlers.
 */
import type { ExtensionAPI, MessageUpdateEvent } from "@earendil-works/pi-coding-agent";
import { once } from "../async.ts";
import type { Runtime, Session } from "../contracts.ts";
import { isObject, type ServerEntry } from "../schema.ts";
import { ACTIONS, type Action, DESCRIPTION, type ListAction, parameters } from "./definition.ts";

/**
 * Whether the value of the member `name`, the last one written so far, is already complete: its closing
 * quote has arrived although no other member follows yet. Without it a value counts as complete only once
 * another member follows it or the call is complete.
 */
export type Ended = (name: string) => boolean;

/**
 * The server a partly written `mcp` call will connect to, once that is certain: its action needs a
 * connection (every action but `status`) and names a server, and both values are complete: another
 * argument follows them, the call is complete, or `ended` says so. `args` are the partial arguments Pi
 * hands extensions while the model streams (pi-ai's streaming JSON parser: an unterminated string shows
 * the characters read so far, members keep the order they were written in).
 */
export function streamedServer(
	args: unknown,
	complete: boolean,
	ended?: Ended,
): Readonly<{ server: string; action: Action }> | undefined {
	if (!isObject(args)) return undefined;
	const { action, server } = args;
	if (typeof action !== "string" || typeof server !== "string" || server === "") return undefined;
	if (action === "status" || !(ACTIONS as readonly string[]).includes(action)) return undefined;
	if (mayGrow(args, complete, ended, "action", "server")) return undefined;
	return { server, action: action as Action };
}

/** Whether one of `names` is the member still being written (the last one, in an incomplete call, not ended). */
function mayGrow(
	args: Readonly<Record<string, unknown>>,
	complete: boolean,
	ended: Ended | undefined,
	...names: readonly string[]
): boolean {
	if (complete) return false;
	const keys = Object.keys(args);
	const last = keys[keys.length - 1] ?? "";
	return names.includes(last) && ended?.(last) !== true;
}

/**
 * The tool a partly written `call` will call, once its name is complete (another argument follows it,
 * the call is complete, or `ended` says so), with the server it names; as `streamedServer` reads the
 * partial arguments.
 */
export function streamedTool(
	args: unknown,
	complete: boolean,
	ended?: Ended,
): Readonly<{ server: string; tool: string }> | undefined {
	const named = streamedServer(args, complete, ended);
	if (named?.action !== "call" || !isObject(args)) return undefined;
	const { tool } = args;
	if (typeof tool !== "string" || tool === "" || mayGrow(args, complete, ended, "tool")) return undefined;
	return { server: named.server, tool };
}

/**
 * The server a partly written `tools` call will search, once that server is certain (as `streamedServer`
 * reads it) and a query has begun.
 */
export function streamedSearch(args: unknown, complete: boolean, ended?: Ended): string | undefined {
	const named = streamedServer(args, complete, ended);
	return named?.action === "tools" && isObject(args) && typeof args.query === "string" ? named.server : undefined;
}

/**
 * Whether a partly written `tools` call searches every server: its action is complete, its query has begun
 * and it names no server. A model writes the members in the schema's order (server before query), so a
 * query begun without a server is a search across servers; starting then gives the servers the time the
 * model spends writing the query.
 */
export function streamedEverywhere(args: unknown, complete: boolean, ended?: Ended): boolean {
	if (!isObject(args) || args.action !== "tools" || "server" in args || typeof args.query !== "string") return false;
	return !mayGrow(args, complete, ended, "action");
}

/**
 * `Ended` for partial arguments `args` that were parsed from the raw argument text `raw`, read with
 * `parse` (pi-ai's streaming JSON parser, which Pi's providers use): a string value is complete when one
 * more character after the text leaves it unchanged (inside an open string, even after a pending escape,
 * it would join the value; after the closing quote the parser drops it). False when `raw` does not give
 * the value Pi parsed (a provider that restarted its text): the value then waits for the next member.
 */
export function endedIn(raw: string, args: Readonly<Record<string, unknown>>, parse: (text: string) => unknown): Ended {
	// One parse serves every name: the extra character can only join the last open value or be dropped, so
	// a value the probe shows unchanged is also the value of `raw` itself.
	const parsed: { probed?: unknown } = {};
	return (name) => {
		const value = args[name];
		if (typeof value !== "string") return false;
		parsed.probed ??= parse(`${raw}x`);
		const { probed } = parsed;
		return isObject(probed) && probed[name] === value;
	};
}

/** pi-ai's `validateToolArguments`, as far as `compileArgumentCheck` uses it. */
export type ArgumentCheck = (
	tool: Readonly<{ name: string; description: string; parameters: typeof parameters }>,
	call: Readonly<{ type: "toolCall"; id: string; name: string; arguments: Record<string, unknown> }>,
) => unknown;

/**
 * Has Pi's argument check for the `mcp` tool compiled before the first call needs it: pi-ai compiles a
 * validator the first time it meets a schema object (5–7 ms inside Pi, after the model finished writing);
 * checking a `status` call against the same `parameters` object while the model writes moves that off the
 * wait. True when the check ran; a Pi without the function, or one that throws, only loses the head start.
 */
export function compileArgumentCheck(check: ArgumentCheck | undefined): boolean {
	if (typeof check !== "function") return false;
	try {
		check(
			{ name: "mcp", description: DESCRIPTION, parameters },
			{ type: "toolCall", id: "pi-mcp-argument-check", name: "mcp", arguments: { action: "status" } },
		);
		return true;
	} catch {
		return false;
	}
}

/** The raw argument text of the `mcp` call being written, kept while its early steps may still need it. */
export type StreamedText = { streamed?: { id: string; raw: string } };

/** The raw argument text kept per streamed call: the server and tool come first, so a few KiB are plenty. */
const RAW_ARGUMENTS_LIMIT = 4096;

/**
 * Adds a delta to the raw text kept for the `mcp` call being written and says, from that text, whether a
 * value is already complete (`endedIn`). Undefined (values wait for the next member) before pi-ai's
 * parser has loaded, for another call, and once the text is too long or a delta is missing.
 */
export function endedSoFar(
	holder: StreamedText,
	id: string,
	args: Readonly<Record<string, unknown>>,
	delta: unknown,
): Ended | undefined {
	const streamed = holder.streamed;
	if (streamed?.id !== id) return undefined;
	if (typeof delta !== "string" || streamed.raw.length + delta.length > RAW_ARGUMENTS_LIMIT) {
		holder.streamed = undefined;
		return undefined;
	}
	const raw = streamed.raw + delta;
	holder.streamed = { id, raw };
	return jsonReader.parse ? endedIn(raw, args, jsonReader.parse) : undefined;
}

/** What the early steps of the `mcp` call being written have done: its raw text and, by call id, the steps taken. */
export type StreamedCall = StreamedText & {
	startedFor?: string;
	preparedFor?: string;
	searchedFor?: string;
	everywhereFor?: string;
};

/**
 * The early steps one update of a streamed `mcp` call makes due, each at most once per call (marked in
 * `marks`): the server to start (`streamedServer`), the tool whose output check to prepare
 * (`streamedTool`), the server whose search index to build (`streamedSearch`), or every server for a
 * search across them (`streamedEverywhere`). `delta` is the update's
 * text (undefined for the call's end, `complete`); the raw text is dropped once nothing needs it.
 */
export function dueSteps(
	marks: StreamedCall,
	id: string,
	args: Readonly<Record<string, unknown>>,
	complete: boolean,
	delta?: unknown,
): Readonly<{
	named?: Readonly<{ server: string; action: Action }>;
	called?: Readonly<{ server: string; tool: string }>;
	searched?: string;
	everywhere?: true;
}> {
	const ended = complete ? undefined : endedSoFar(marks, id, args, delta);
	const named = marks.startedFor === id ? undefined : streamedServer(args, complete, ended);
	if (named) marks.startedFor = id;
	const called = marks.preparedFor === id ? undefined : streamedTool(args, complete, ended);
	if (called) marks.preparedFor = id;
	const searched = marks.searchedFor === id ? undefined : streamedSearch(args, complete, ended);
	if (searched) marks.searchedFor = id;
	const everywhere = marks.everywhereFor !== id && streamedEverywhere(args, complete, ended) ? true : undefined;
	if (everywhere) marks.everywhereFor = id;
	if (complete || (marks.startedFor === id && marks.preparedFor === id)) marks.streamed = undefined;
	return { named, called, searched, everywhere };
}

/** pi-ai as Pi hands it to extensions (already in memory inside Pi), loaded when the model starts an `mcp` call. */
const piAi = once(() => import("@earendil-works/pi-ai"));

/** Pi's argument check for the `mcp` tool, compiled once per process (see `compileArgumentCheck`). */
export const compileArguments = once(() =>
	piAi().then(({ validateToolArguments }) => compileArgumentCheck(validateToolArguments as unknown as ArgumentCheck)),
);

/**
 * pi-ai's streaming JSON parser (the one Pi's providers read partial arguments with), set once pi-ai has
 * loaded (`loadJsonReader` also resolves with it); until then, or in a Pi without it, a streamed value
 * counts as complete only once the next member follows it (see `endedIn`).
 */
const jsonReader: { parse?: (text: string) => unknown } = {};
export const loadJsonReader = once(() =>
	piAi().then(({ StreamingJsonParser }) => {
		if (typeof StreamingJsonParser !== "function") return undefined;
		jsonReader.parse = (text) => {
			const parser = new StreamingJsonParser();
			parser.append(text);
			return parser.snapshot();
		};
		return jsonReader.parse;
	}),
);

/** The modules an early step uses, loaded with the tool's (see `index.ts`). */
export type EarlyModules = Readonly<{
	actions: Readonly<{
		isListAction: (action: string) => action is ListAction;
		listEarly: (runtime: Runtime, server: string, action: ListAction) => NonNullable<Early["listing"]>;
	}>;
	listing: Readonly<{ prepareSearch: (session: Session, server: string) => Promise<void> }>;
	sdk: Readonly<{ loadSdk: () => Promise<unknown> }>;
}>;

/**
 * What the early start did for one call while the model wrote it: when the model began (`performance.now()`;
 * a tool listing sent since then is as new as the call's own) and the listing request of a `resources`,
 * `templates` or `prompts` call, sent once its server was named. The call takes it (`take`).
 */
export type Early = {
	readonly begun: number;
	listing?: Readonly<{ server: string; action: ListAction; sent: Promise<unknown> }>;
};

/** One call being written: its `Early`, its steps so far, the servers it named and those it started. */
type Written = Early & { readonly marks: StreamedCall; readonly named: Set<string>; readonly started: Set<string> };

/** Calls written at once that keep a record; past it the oldest is ended. */
const MAX_CALLS = 16;

export type EarlyHost = Readonly<{
	pi: ExtensionAPI;
	/** Resolves once the session's configuration is read (a no-op when it is). */
	loaded: () => Promise<void>;
	/** The configured entries (empty before the session starts). */
	entries: () => readonly ServerEntry[];
	/** The runtime, only if it exists already (closing never creates one). */
	runtime: () => Runtime | undefined;
	/** The session with its runtime (created on first use) and the tool's modules. */
	live: () => Promise<Readonly<{ session: Session; mods: EarlyModules }>>;
	/** Loads the tool's modules and the SDK ahead of the call. */
	preload: () => void;
}>;

/** A server the early start may begin: configured, usable, enabled and not opted out. */
const startable = (entry: ServerEntry | undefined): entry is ServerEntry & { config: NonNullable<ServerEntry["config"]> } =>
	entry?.enabled === true && entry.config !== undefined && entry.error === undefined && entry.config.earlyStart !== false;

type Step = (session: Session, mods: EarlyModules) => unknown;

/** One step for server `name` once the configuration is read; a failure is left to the call, which reports it. */
function runStep(host: EarlyHost, open: () => boolean, call: Written, name: string, run: Step): void {
	(async () => {
		await host.loaded();
		if (!startable(host.entries().find((entry) => entry.name === name))) return;
		const { session, mods } = await host.live();
		if (!open()) return;
		call.named.add(name);
		await run(session, mods);
	})().catch(() => undefined);
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

export function createEarlyStart(host: EarlyHost) {
	const calls = new Map<string, Written>();
	// A host without an active-tool list (before Pi 1.6) has every registered tool active.
	const active = () => typeof host.pi.getActiveTools !== "function" || host.pi.getActiveTools().includes("mcp");

	const step = (call: Written, name: string, run: Step) =>
		runStep(host, () => [...calls.values()].includes(call), call, name, run);
	const start = (call: Written, session: Session, name: string, options: Parameters<Runtime["start"]>[1]) => {
		if (session.runtime.start(name, options)) call.started.add(name);
	};

	function begin(id: string): void {
		compileArguments().catch(() => undefined);
		if (!active() || !host.entries().some(startable)) return;
		if (calls.size >= MAX_CALLS) end([...calls.keys()][0] ?? "");
		calls.set(id, { begun: performance.now(), marks: { streamed: { id, raw: "" } }, named: new Set(), started: new Set() });
		loadJsonReader().catch(() => undefined);
		host.preload();
	}

	function advance(id: string, args: Readonly<Record<string, unknown>>, complete: boolean, delta: unknown): void {
		const call = calls.get(id);
		if (!call) return;
		const { named, called, searched, everywhere } = dueSteps(call.marks, id, args, complete, delta);
		if (named) {
			const tools = named.action === "call" || named.action === "describe" || named.action === "tools";
			step(call, named.server, (session, mods) => {
				start(call, session, named.server, { tools, since: named.action === "tools" ? call.begun : undefined });
				// The listing a `resources`, `templates` or `prompts` call needs, sent once for this call.
				if (mods.actions.isListAction(named.action) && !call.listing)
					call.listing = mods.actions.listEarly(session.runtime, named.server, named.action);
			});
		}
		if (called) step(call, called.server, (session) => session.runtime.prepare(called.server, called.tool));
		if (searched) step(call, searched, (session, mods) => mods.listing.prepareSearch(session, searched));
		if (everywhere) {
			for (const entry of host.entries().filter(startable)) {
				step(call, entry.name, (session) => start(call, session, entry.name, { tools: true, since: call.begun }));
			}
		}
	}

	/** Running calls whose early start began a server, with the server each uses (none: all), until their end. */
	const running = new Map<string, Readonly<{ call: Written; server: string | undefined }>>();
	const used = (name: string) => [...running.values()].some(({ server }) => server === undefined || server === name);
	/** A call that will not run: close what its early start began and nobody else is waiting for or using. */
	function end(id: string, ran?: Written): void {
		const [call, runtime] = [ran ?? calls.get(id), host.runtime()];
		calls.delete(id);
		for (const name of call?.started ?? []) {
			if (used(name) || [...calls.values()].some((other) => other.named.has(name))) continue;
			runtime?.reset(name).catch(() => undefined);
		}
	}

	return {
		/** `message_update`: an `mcp` call begins, grows or is complete. */
		update(event: MessageUpdateEvent): void {
			const call = streamedCall(event);
			if (call?.begins) begin(call.id);
			else if (call) advance(call.id, call.args, call.complete, call.delta);
		},
		/**
		 * The call runs: it takes what its early start did. The servers it uses are in use now, so no other call's
		 * end closes them (a search without a server uses them all).
		 */
		take(id: string, server: string | undefined): Early | undefined {
			const call = calls.get(id);
			calls.delete(id);
			for (const other of calls.values()) {
				if (server === undefined) other.started.clear();
				else other.started.delete(server);
			}
			if (call && call.started.size > 0) running.set(id, { call, server });
			return call;
		},
		/** `tool_execution_end`: a call that never ran (blocked, rejected, or declined by the user: `confirm.ts`) ended. */
		ended: (id: string, result?: unknown) => {
			const taken = running.get(id);
			running.delete(id);
			const declined = isObject(result) && isObject(result.details) && result.details.declined === true;
			end(id, declined ? taken?.call : undefined);
		},
		sweep: () => {
			for (const id of [...calls.keys()]) end(id);
			running.clear();
		},
	};
}
