/**
 * The `mcp` tool as the model sees it: its actions, parameters, description and prompt line. Kept
 * apart from `actions.ts` so that registering the tool loads only this small module; what the
 * actions do (and the runtime behind them) loads on first use.
 */
import { type Static, Type } from "typebox";
import { isObject } from "./schema.ts";

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
 * The server a partly written `mcp` call will connect to, once that is certain: its action needs a
 * connection (every action but `status`) and names a server, and both values are complete, either
 * because another argument follows them or because the call is complete. `args` are the partial
 * arguments Pi hands extensions while the model streams (pi-ai's streaming JSON parser: an
 * unterminated string shows the characters read so far, members keep the order they were written in).
 */
export function streamedServer(args: unknown, complete: boolean): Readonly<{ server: string; action: Action }> | undefined {
	if (!isObject(args)) return undefined;
	const { action, server } = args;
	if (typeof action !== "string" || typeof server !== "string" || server === "") return undefined;
	if (action === "status" || !(ACTIONS as readonly string[]).includes(action)) return undefined;
	if (mayGrow(args, complete, "action", "server")) return undefined;
	return { server, action: action as Action };
}

/** Whether one of `names` is the member still being written (the last one, in an incomplete call). */
function mayGrow(args: Readonly<Record<string, unknown>>, complete: boolean, ...names: readonly string[]): boolean {
	if (complete) return false;
	const keys = Object.keys(args);
	return names.includes(keys[keys.length - 1] ?? "");
}

/**
 * The tool a partly written `call` will call, once its name is complete (another argument follows it,
 * or the call is complete), with the server it names; as `streamedServer` reads the partial arguments.
 */
export function streamedTool(args: unknown, complete: boolean): Readonly<{ server: string; tool: string }> | undefined {
	const named = streamedServer(args, complete);
	if (named?.action !== "call" || !isObject(args)) return undefined;
	const { tool } = args;
	if (typeof tool !== "string" || tool === "" || mayGrow(args, complete, "tool")) return undefined;
	return { server: named.server, tool };
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
