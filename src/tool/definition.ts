/**
 * The `mcp` tool as the model sees it: its actions, parameters, description and prompt line. Kept apart
 * from `catalog/actions.ts` so that registering the tool loads only this small module; what the actions do (and
 * the runtime behind them) loads on first use. How a call still being written is read is `early.ts`.
 */
import { type Static, Type } from "typebox";
import { ACTIONS, type Action, MAX_LIMIT } from "../catalog/requests.ts";

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

/** The schema's values, which are the core's requests (`catalog/requests.ts`: `execute.ts` hands one to the other). */
export type ToolParams = Readonly<Static<typeof parameters>>;

export const DESCRIPTION =
	"Use MCP servers. action=status: servers; tools: server?, query? (plain words; no server: all); describe: server, tool → schema; call: server, tool, args; resources|templates|prompts: server; read: server, uri; prompt: server, prompt, args; complete: server, prompt|uri, argument, value.";

/** The tool's line in the system prompt's tool list (Pi prefixes the tool name). */
export const PROMPT_SNIPPET = "tools of MCP servers (status, tools, describe, call)";
