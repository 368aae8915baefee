/**
 * The `mcp` tool as the model sees it: its actions, parameters, description and prompt line, and how a
 * call the model is still writing is read (the server and tool it names, from pi-ai's partial arguments
 * and parser; pi-ai is Pi's own and loads only when the model starts an `mcp` call). Kept apart from
 * `actions.ts` so that registering the tool loads only this small module; what the actions do (and the
 * runtime behind them) loads on first use.
 */
import { type Static, Type } from "typebox";
import { once } from "../async.ts";
import { isObject } from "../schema.ts";

export const ACTIONS = [
	"status",
	"tools",
	"describe",
	"call",
	"resources",
	"templates",
	"read",
	"prompts",
	"prompt",
	"complete",
] as const;
export type Action = (typeof ACTIONS)[number];

/** Most items one page of a listing (`tools`, `resources`, `templates`, `prompts`) may ask for. */
export const MAX_LIMIT = 200;

export const parameters = Type.Object({
	action: Type.Unsafe<Action>({ type: "string", enum: [...ACTIONS] }),
	server: Type.Optional(Type.String()),
	tool: Type.Optional(Type.String()),
	args: Type.Optional(Type.Unsafe<unknown>({ description: "tool or prompt arguments (object)" })),
	query: Type.Optional(Type.String()),
	limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT })),
	cursor: Type.Optional(Type.String()),
	uri: Type.Optional(Type.String()),
	prompt: Type.Optional(Type.String()),
	argument: Type.Optional(Type.String()),
	value: Type.Optional(Type.String()),
});

export type Params = Readonly<Static<typeof parameters>>;

/** The `/mcp` subcommands (completion in `index.ts`, the body in `command.ts`). */
export const SUBCOMMANDS: readonly string[] = ["status", "tools", "reconnect", "login", "logout"];

export const DESCRIPTION =
	"Use MCP servers. action=status: servers; tools: server?, query? (plain words; no server: all); describe: server, tool → schema; call: server, tool, args; resources|templates|prompts: server; read: server, uri; prompt: server, prompt, args; complete: server, prompt|uri, argument, value.";

/** The tool's line in the system prompt's tool list (Pi prefixes the tool name). */
export const PROMPT_SNIPPET = "tools of MCP servers (status, tools, describe, call)";

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
 * `Ended` for partial arguments `args` that were parsed from the raw argument text `raw`, read with
 * `parse` (pi-ai's streaming JSON parser, which Pi's providers use for the partial arguments): a string
 * value is complete when one more character after the text leaves it unchanged. Inside an open string
 * the character would join the value (after a pending escape too: the parser keeps an invalid escape as
 * text); after the closing quote the parser drops it. Answers false when `raw` does not give the value
 * Pi parsed (a provider that restarted its text), so the value then waits for the next member.
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
 * Has Pi's argument check for the `mcp` tool compiled before the first call needs it. Pi checks every
 * call's arguments with pi-ai's `validateToolArguments`, which compiles a validator the first time it
 * meets a tool's schema object and keeps it for that object: 5–7 ms for this schema inside Pi, spent
 * after the model has finished writing the first call. Checking a `status` call against the same
 * `parameters` object while the model is still writing moves that compile off the wait. True when the
 * check ran; a Pi without the function, or one that throws, only loses the head start.
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
export type StreamedCall = StreamedText & { startedFor?: string; preparedFor?: string; searchedFor?: string };

/**
 * The early steps one update of a streamed `mcp` call makes due, each at most once per call (marked in
 * `marks`): the server to start (`streamedServer`), the tool whose output check to prepare
 * (`streamedTool`), the server whose search index to build (`streamedSearch`). `delta` is the update's
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
}> {
	const ended = complete ? undefined : endedSoFar(marks, id, args, delta);
	const named = marks.startedFor === id ? undefined : streamedServer(args, complete, ended);
	if (named) marks.startedFor = id;
	const called = marks.preparedFor === id ? undefined : streamedTool(args, complete, ended);
	if (called) marks.preparedFor = id;
	const searched = marks.searchedFor === id ? undefined : streamedSearch(args, complete, ended);
	if (searched) marks.searchedFor = id;
	if (complete || (marks.startedFor === id && marks.preparedFor === id)) marks.streamed = undefined;
	return { named, called, searched };
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
