/**
 * What each action of the `mcp` tool does (`runAction`): status, tools (in `listing.ts`), describe,
 * call (with progress), resources, templates, read, prompts, prompt and complete. Every result goes
 * through the output rules (`content.ts`); errors the model should read are thrown. Loaded on first use.
 */
import type { Client, ListPromptsResult, ListResourcesResult, ListResourceTemplatesResult } from "@modelcontextprotocol/client";
import { fileProblems, unknownServer } from "../config.ts";
import type { Capability, Progress, RequestOptions, Runtime, Session } from "../contracts.ts";
import { isAppResource, present, promptResultParts, resourceResultParts, toolResultParts } from "../output/content.ts";
import { escapeName, oneLine, stripProse } from "../output/text.ts";
import type { McpDetails } from "../render.ts";
import { isObject } from "../schema.ts";
import { hintWords, instructionLines, pendingLines } from "./hints.ts";
import { blocksResult, listingResult, page, type Result, toolsAction } from "./listing.ts";
import { ACTIONS, type ListAction, type Params } from "./requests.ts";
import { modelStatus } from "./status.ts";

/**
 * A face's gate before a call goes out (the model's face asks the user, `tool/confirm.ts`): undefined to go
 * ahead, else the refusal to return. Called only for a server whose `confirm` setting can ask.
 */
export type ConfirmGate = (
	session: Session,
	server: string,
	tool: string,
	args: Readonly<Record<string, unknown>>,
	signal: AbortSignal | undefined,
) => Promise<Result | undefined>;

/** One name shown on one line: escaped (`escapeName`) and cut to `max` characters. */
function nameLine(name: string | undefined, max: number): string {
	const shown = escapeName(name ?? "");
	return shown.length > max ? `${shown.slice(0, max - 1)}…` : shown;
}

/**
 * The tool a model means: its exact name, else the one tool whose escaped name (as listings show
 * it, e.g. `odd\nname`) is what the model wrote. Only names with a backslash can be escaped forms.
 */
async function toolNamed(runtime: Runtime, server: string, name: string, signal: AbortSignal | undefined): Promise<string> {
	if (
		!name.includes("\\") ||
		(await runtime.tool(server, name, signal).then(
			() => true,
			() => false,
		))
	)
		return name;
	const matches = (await runtime.tools(server, signal)).filter((tool) => escapeName(tool.name) === name);
	return matches.length === 1 && matches[0] ? matches[0].name : name;
}

/** `args` as an object; `what` names the call in an error (built only then: escaping a name compiles a
 * Unicode-property pattern on first use, which the first call would otherwise pay for nothing). */
function parseArgs(what: () => string, args: unknown): Record<string, unknown> {
	const value = typeof args === "string" ? parseJsonArgs(what, args) : (args ?? {});
	if (!isObject(value)) throw new Error(`${what()}: "args" must be a JSON object of arguments`);
	return value;
}

function parseJsonArgs(what: () => string, text: string): unknown {
	if (text.trim() === "") return {};
	try {
		return JSON.parse(text);
	} catch (error) {
		throw new Error(`${what()}: "args" is not valid JSON (${(error as Error).message})`);
	}
}

export function progressText(progress: Progress): string {
	const percent =
		progress.total && progress.total > 0 ? `${Math.round((progress.progress / progress.total) * 100)}%` : `${progress.progress}`;
	return progress.message ? `${percent} · ${oneLine(progress.message, 80)}` : percent;
}

function textResult(details: McpDetails, text: string): Result {
	return { content: [{ type: "text", text }], details: { ...details, textChars: text.length } };
}

function required(params: Params, key: "server" | "tool" | "uri" | "prompt" | "argument", hint: string): string {
	const value = params[key];
	if (value === undefined || value === "") throw new Error(`mcp ${params.action}: "${key}" is required; ${hint}`);
	return value;
}

type Listed = Readonly<{ address: string; name: string; mimeType?: string; description?: string }>;

/** A page of resources or templates, MCP App ones left out: `address — name (type; description)`. */
function resourceList(session: Session, noun: string, items: readonly Listed[], params: Params): Promise<Result> {
	const visible = items.filter((item) => !isAppResource(item.address, item.mimeType));
	const { shown, more } = page(visible, params);
	const lines = shown.map((item) => {
		const extra = [item.mimeType ? nameLine(item.mimeType, 80) : "", oneLine(item.description, 100)].filter(Boolean).join("; ");
		return `${nameLine(item.address, 300)} — ${nameLine(item.name, 80)}${extra ? ` (${extra})` : ""}`;
	});
	const header = `${params.server}: ${visible.length} ${noun}${visible.length === 1 ? "" : "s"}`;
	return listingResult(
		session,
		params,
		header,
		[...lines, ...pendingLines(session.runtime.status(), [params.server ?? ""])],
		more,
	);
}

type Update = ((partial: Result) => void) | undefined;

/** What `resources`, `templates` and `prompts` ask a server for: its whole list, paged here (`page`). */
type Listings = Readonly<{
	resources: ListResourcesResult;
	templates: ListResourceTemplatesResult;
	prompts: ListPromptsResult;
}>;

export const LISTINGS: {
	readonly [A in ListAction]: Readonly<{
		what: string;
		capability: Capability;
		run: (client: Client, options: RequestOptions) => Promise<Listings[A]>;
	}>;
} = {
	resources: {
		what: "listing resources",
		capability: "resources",
		run: (client, options) => client.listResources(undefined, options),
	},
	templates: {
		what: "listing resource templates",
		capability: "resources",
		run: (client, options) => client.listResourceTemplates(undefined, options),
	},
	prompts: { what: "listing prompts", capability: "prompts", run: (client, options) => client.listPrompts(undefined, options) },
};

export const isListAction = (action: string): action is ListAction => Object.hasOwn(LISTINGS, action);

/** A listing call (`resources`, `templates`, `prompts`). */
function listing<A extends ListAction>(runtime: Runtime, server: string, action: A, signal?: AbortSignal): Promise<Listings[A]> {
	const { what, capability, run } = LISTINGS[action];
	return runtime.request(server, what, capability, run, signal);
}

/** `describe`: a tool's description and input and output schemas, through the output rules. */
async function describeAction(
	session: Session,
	params: Params,
	server: string,
	signal: AbortSignal | undefined,
): Promise<Result> {
	const { runtime, overflow } = session;
	const toolName = await toolNamed(
		runtime,
		server,
		required(params, "tool", `use action "tools" to list ${server}'s tools`),
		signal,
	);
	const tool = await runtime.tool(server, toolName, signal);
	const lines = [
		`${server}/${escapeName(tool.name)}`,
		hintWords(tool).length > 0 ? `hints: ${hintWords(tool).join(", ")}` : undefined,
		tool.description ? stripProse(tool.description) : undefined,
		`input schema: ${stripProse(JSON.stringify(tool.inputSchema))}`,
		tool.outputSchema ? `output schema: ${stripProse(JSON.stringify(tool.outputSchema))}` : undefined,
		...instructionLines(escapeName(server), runtime.instructionsOnce(server)),
		...pendingLines(runtime.status(), [server]),
	].filter((line): line is string => line !== undefined);
	const presented = await present([{ kind: "text", text: lines.join("\n") }], overflow, `${server}-${toolName}-schema`);
	return blocksResult({ action: params.action, server, tool: toolName }, presented.content, presented.info);
}

/** `call`: one tool call with progress updates; a tool error is an error result, not a throw. */
async function callAction(
	session: Session,
	params: Params,
	server: string,
	signal: AbortSignal | undefined,
	onUpdate: Update,
	gate: ConfirmGate | undefined,
): Promise<Result> {
	const { runtime, overflow } = session;
	const asked = required(params, "tool", `use action "tools" to list ${server}'s tools`);
	const args = parseArgs(() => `mcp call ${server}/${escapeName(asked)}`, params.args);
	const toolName = await toolNamed(runtime, server, asked, signal);
	// The gate runs only for a server whose `confirm` can ask (and `pi-mcp call`, the user's own act, has none).
	const confirm = gate && session.config.servers.find((entry) => entry.name === server)?.config?.confirm;
	const refused = confirm && confirm !== "none" ? await gate?.(session, server, toolName, args, signal) : undefined;
	if (refused) return refused;
	const details: McpDetails = { action: params.action, server, tool: toolName };
	const result = await runtime.call(server, toolName, args, {
		signal,
		onProgress: (progress) => onUpdate?.({ content: [{ type: "text", text: progressText(progress) }], details }),
	});
	const presented = await present(toolResultParts(result), overflow, `${server}-${toolName}`);
	if (result.isError) {
		return blocksResult({ ...details, error: oneLine(presented.text, 200) }, presented.content, presented.info, true);
	}
	return blocksResult(details, presented.content, presented.info);
}

/** `complete`: values a server suggests for a prompt's or resource template's argument. */
async function completeAction(
	runtime: Runtime,
	params: Params,
	server: string,
	signal: AbortSignal | undefined,
): Promise<Result> {
	const action = params.action;
	const argument = required(params, "argument", "name the argument to complete");
	const ref =
		params.prompt !== undefined
			? { type: "ref/prompt" as const, name: params.prompt }
			: params.uri !== undefined
				? { type: "ref/resource" as const, uri: params.uri }
				: undefined;
	if (!ref) throw new Error('mcp complete: give "prompt" (a prompt name) or "uri" (a resource template)');
	const result = await runtime.request(
		server,
		"completing an argument",
		"completions",
		(client, options) => client.complete({ ref, argument: { name: argument, value: params.value ?? "" } }, options),
		signal,
		ref.type === "ref/prompt" ? { kind: "prompts", name: ref.name } : { kind: "templates", name: ref.uri },
	);
	const values = result.completion.values.map((value) => oneLine(value, 200));
	const total = result.completion.total ?? values.length;
	const more = result.completion.hasMore ? ` (more available: ${total})` : "";
	return textResult(
		{ action, server },
		`${values.length} completion${values.length === 1 ? "" : "s"}${more}\n${values.join("\n")}`.trimEnd(),
	);
}

/**
 * Runs one `mcp` action. Throws for errors the model should see as a tool error. `gate`: the face's question
 * to the user before a call (the model's face passes its dialog); without it (the shell's `pi-mcp call`) nothing asks.
 */
export async function runAction(
	session: Session,
	params: Params,
	signal: AbortSignal | undefined,
	onUpdate: Update,
	gate?: ConfirmGate,
): Promise<Result> {
	const { runtime, overflow } = session;
	const action = params.action;
	if (action === "status") return textResult({ action }, modelStatus(runtime.status(), fileProblems(session.config)));
	// A query without a server searches every enabled server (the search module loads on the first query).
	if (action === "tools" && !params.server) return toolsAction(session, params, undefined, signal);
	const server = required(params, "server", 'use action "status" to list servers');
	const unknown = unknownServer(session.config, server);
	if (unknown !== undefined) throw new Error(unknown);
	const label = (name: string) => `${server}-${name}`;

	switch (action) {
		case "tools":
			return toolsAction(session, params, server, signal);
		case "describe":
			return describeAction(session, params, server, signal);
		case "call":
			return callAction(session, params, server, signal, onUpdate, gate);
		case "resources": {
			const result = await listing(runtime, server, "resources", signal);
			const items = result.resources.map((resource) => ({ ...resource, address: resource.uri }));
			return resourceList(session, "resource", items, params);
		}
		case "templates": {
			const result = await listing(runtime, server, "templates", signal);
			const items = result.resourceTemplates.map((template) => ({ ...template, address: template.uriTemplate }));
			return resourceList(session, "resource template", items, params);
		}
		case "read": {
			const uri = required(params, "uri", 'use action "resources" to list them');
			if (isAppResource(uri))
				throw new Error(`mcp read: "${nameLine(uri, 200)}" is an MCP App resource, which pi-mcp does not render`);
			const result = await runtime.request(
				server,
				`reading ${nameLine(uri, 200)}`,
				"resources",
				(client, options) => client.readResource({ uri }, options),
				signal,
			);
			const presented = await present(resourceResultParts(result), overflow, label("resource"));
			return blocksResult({ action, server }, presented.content, presented.info);
		}
		case "prompts": {
			const result = await listing(runtime, server, "prompts", signal);
			const { shown, more } = page(result.prompts, params);
			const lines = shown.map((prompt) => {
				const args = (prompt.arguments ?? []).map((arg) => `${nameLine(arg.name, 80)}${arg.required ? "" : "?"}`).join(", ");
				const description = oneLine(prompt.description, 100);
				return `${nameLine(prompt.name, 80)}(${args})${description ? `: ${description}` : ""}`;
			});
			const header = `${server}: ${result.prompts.length} prompt${result.prompts.length === 1 ? "" : "s"}`;
			return listingResult(session, params, header, [...lines, ...pendingLines(runtime.status(), [server])], more);
		}
		case "prompt": {
			const name = required(params, "prompt", 'use action "prompts" to list them');
			const args = parseArgs(() => `mcp prompt ${server}/${escapeName(name)}`, params.args);
			const stringArgs = Object.fromEntries(
				Object.entries(args).map(([key, value]) => [key, typeof value === "string" ? value : JSON.stringify(value)]),
			);
			const result = await runtime.request(
				server,
				`getting prompt "${nameLine(name, 80)}"`,
				"prompts",
				(client, options) => client.getPrompt({ name, arguments: stringArgs }, options),
				signal,
				{ kind: "prompts", name },
			);
			const presented = await present(promptResultParts(result), overflow, label(`prompt-${name}`));
			return blocksResult({ action, server }, presented.content, presented.info);
		}
		case "complete":
			return completeAction(runtime, params, server, signal);
		default:
			throw new Error(`mcp: unknown action "${String(action)}"; use one of ${ACTIONS.join(", ")}`);
	}
}
