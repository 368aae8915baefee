/**
 * Reading an `mcp` call while the model still writes it: which server, tool or search its arguments name
 * once each name is certain. Pi hands extensions the partial arguments (pi-ai's streaming JSON parser: an
 * unterminated string shows the characters read so far, members keep their order); a name counts once
 * another member follows it, the call is complete, or its closing quote has arrived in the raw text.
 */
import { once } from "../../async.ts";
import { ACTIONS, type Action } from "../../catalog/requests.ts";
import { isObject } from "../../schema.ts";
import { DESCRIPTION, parameters } from "../definition.ts";

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
	const probe = once(() => parse(`${raw}x`));
	return (name) => {
		const value = args[name];
		if (typeof value !== "string") return false;
		const probed = probe();
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

/** The raw argument text kept per streamed call: the server and tool come first, so a few KiB are plenty. */
const RAW_ARGUMENTS_LIMIT = 4096;

/** The early steps one update of a streamed call makes due; each at most once per call. */
export type DueSteps = Readonly<{
	named?: Readonly<{ server: string; action: Action }>;
	called?: Readonly<{ server: string; tool: string }>;
	searched?: string;
	everywhere?: true;
}>;

/**
 * One `mcp` call as it streams: its raw argument text (kept while a step may still need it, at most
 * `RAW_ARGUMENTS_LIMIT`) and the steps already due. `due` says which steps an update makes due: the
 * server to start (`streamedServer`), the tool whose output check to prepare (`streamedTool`), the
 * server whose search index to build (`streamedSearch`), or every server (`streamedEverywhere`).
 */
export class StreamedCall {
	#raw: string | undefined = "";
	#started = false;
	#prepared = false;
	#searched = false;
	#everywhere = false;

	/**
	 * `delta`: the update's text (undefined for the call's end, `complete`); `parse`: pi-ai's streaming
	 * parser once loaded (without it a value waits for the next member).
	 */
	due(args: Readonly<Record<string, unknown>>, complete: boolean, delta?: unknown, parse?: (text: string) => unknown): DueSteps {
		const ended = complete ? undefined : this.#ended(args, delta, parse);
		const named = this.#started ? undefined : streamedServer(args, complete, ended);
		const called = this.#prepared ? undefined : streamedTool(args, complete, ended);
		const searched = this.#searched ? undefined : streamedSearch(args, complete, ended);
		const everywhere = !this.#everywhere && streamedEverywhere(args, complete, ended) ? true : undefined;
		this.#started ||= named !== undefined;
		this.#prepared ||= called !== undefined;
		this.#searched ||= searched !== undefined;
		this.#everywhere ||= everywhere === true;
		if (complete || (this.#started && this.#prepared)) this.#raw = undefined;
		return { named, called, searched, everywhere };
	}

	/** Whether the raw text is still kept (for the bounds' tests). */
	keepsText(): boolean {
		return this.#raw !== undefined;
	}

	/** The delta added to the raw text, and from it `Ended`; undefined once the text is dropped or too long. */
	#ended(args: Readonly<Record<string, unknown>>, delta: unknown, parse?: (text: string) => unknown): Ended | undefined {
		if (this.#raw === undefined) return undefined;
		if (typeof delta !== "string" || this.#raw.length + delta.length > RAW_ARGUMENTS_LIMIT) {
			this.#raw = undefined;
			return undefined;
		}
		this.#raw += delta;
		return parse ? endedIn(this.#raw, args, parse) : undefined;
	}
}

/** pi-ai as Pi hands it to extensions (already in memory inside Pi), loaded when the model starts an `mcp` call. */
const piAi = once(() => import("@earendil-works/pi-ai"));

/** Pi's argument check for the `mcp` tool, compiled once per process (see `compileArgumentCheck`). */
export const compileArguments = once(() =>
	piAi().then(({ validateToolArguments }) => compileArgumentCheck(validateToolArguments as unknown as ArgumentCheck)),
);

/**
 * pi-ai's streaming JSON parser (the one Pi's providers read partial arguments with), as a function of
 * the text; undefined in a Pi without it (a streamed value then counts once the next member follows it).
 */
export const loadJsonReader = once(() =>
	piAi().then(({ StreamingJsonParser }) => {
		if (typeof StreamingJsonParser !== "function") return undefined;
		return (text: string): unknown => {
			const parser = new StreamingJsonParser();
			parser.append(text);
			return parser.snapshot();
		};
	}),
);
