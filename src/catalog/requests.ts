/**
 * What a face may ask the core for: the `mcp` tool's actions and their parameters, as plain data. The
 * model's face declares the same shape as its tool schema (`tool/definition.ts`, checked against this
 * type there); the shell builds them from its arguments.
 */

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

/** The actions that list what a server offers besides tools (their early listing is the early start's). */
export type ListAction = Extract<Action, "resources" | "templates" | "prompts">;

/** Most items one page of a listing (`tools`, `resources`, `templates`, `prompts`) may ask for. */
export const MAX_LIMIT = 200;

export type Params = Readonly<{
	action: Action;
	server?: string;
	tool?: string;
	/** Tool or prompt arguments: an object, or its JSON text. */
	args?: unknown;
	query?: string;
	limit?: number;
	cursor?: string;
	uri?: string;
	prompt?: string;
	argument?: string;
	value?: string;
}>;
