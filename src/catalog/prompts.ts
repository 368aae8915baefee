/**
 * A server's prompts and resources as the user takes them (not the model): `/mcp prompt`, `/mcp attach`,
 * the manager's Prompts and Resources screens, `pi-mcp prompt` and `pi-mcp read`. Fetching checks the
 * prompt's arguments first (a missing required one is named, `MissingArguments`); what comes back goes
 * through the same output rules as a tool result (`present`: inline limits, overflow file, 4 images).
 * Each step connects only the server it names, when it runs.
 */
import type {
	ContentBlock,
	GetPromptResult,
	ListPromptsResult,
	ListResourcesResult,
	ListResourceTemplatesResult,
	ReadResourceResult,
} from "@modelcontextprotocol/client";
import type { Session } from "../contracts.ts";
import { blockParts, type Part, type Presented, present, resourceResultParts } from "../output/content.ts";
import { escapeName, oneLine } from "../output/text.ts";

export type Prompt = ListPromptsResult["prompts"][number];
export type Listed = Readonly<{
	resources: ListResourcesResult["resources"];
	templates: ListResourceTemplatesResult["resourceTemplates"];
}>;

/** A prompt's required arguments that were not given; the TUI asks for each, elsewhere it is an error. */
export class MissingArguments extends Error {
	override readonly name = "MissingArguments";
	readonly prompt: Prompt;
	readonly missing: readonly string[];
	constructor(server: string, prompt: Prompt, missing: readonly string[]) {
		const names = missing.map((name) => `"${escapeName(name)}"`).join(", ");
		super(
			`prompt "${escapeName(prompt.name)}" of MCP server "${escapeName(server)}" needs the argument${missing.length === 1 ? "" : "s"} ${names}: give ${missing.map((name) => `${escapeName(name)}=<value>`).join(" ")}`,
		);
		this.prompt = prompt;
		this.missing = missing;
	}
}

export function listPrompts(session: Session, server: string, signal?: AbortSignal): Promise<readonly Prompt[]> {
	return session.runtime
		.request(server, "listing prompts", "prompts", (client, options) => client.listPrompts(undefined, options), signal)
		.then((result) => result.prompts);
}

/** Resources and templates; a server without templates (or one refusing the listing) just has none. */
export async function listResources(session: Session, server: string, signal?: AbortSignal): Promise<Listed> {
	const { runtime } = session;
	const [resources, templates] = await Promise.all([
		runtime.request(
			server,
			"listing resources",
			"resources",
			(client, options) => client.listResources(undefined, options),
			signal,
		),
		runtime
			.request(
				server,
				"listing resource templates",
				"resources",
				(client, options) => client.listResourceTemplates(undefined, options),
				signal,
			)
			.catch(() => ({ resourceTemplates: [] })),
	]);
	return { resources: resources.resources, templates: templates.resourceTemplates };
}

/** The named prompt of a server's list, or an error naming the ones it has. */
export async function promptNamed(session: Session, server: string, name: string, signal?: AbortSignal): Promise<Prompt> {
	const prompts = await listPrompts(session, server, signal);
	const found = prompts.find((prompt) => prompt.name === name);
	if (found) return found;
	const names = prompts.map((prompt) => escapeName(prompt.name)).join(", ");
	throw new Error(`MCP server "${escapeName(server)}" has no prompt "${escapeName(name)}"; it has: ${names || "none"}`);
}

/**
 * Gets a prompt with `args`, after checking them against its declared arguments: an unknown name is an
 * error naming the known ones, missing required ones are `MissingArguments`.
 */
export async function fetchPrompt(
	session: Session,
	server: string,
	name: string,
	args: Readonly<Record<string, string>>,
	signal?: AbortSignal,
): Promise<GetPromptResult> {
	const prompt = await promptNamed(session, server, name, signal);
	const declared = prompt.arguments ?? [];
	const unknown = Object.keys(args).find((key) => !declared.some((arg) => arg.name === key));
	if (unknown !== undefined) {
		const known = declared.map((arg) => escapeName(arg.name)).join(", ");
		throw new Error(`prompt "${escapeName(name)}" has no argument "${escapeName(unknown)}"; its arguments: ${known || "none"}`);
	}
	const missing = declared.filter((arg) => arg.required && !(arg.name in args)).map((arg) => arg.name);
	if (missing.length > 0) throw new MissingArguments(server, prompt, missing);
	return session.runtime.request(
		server,
		`getting prompt "${oneLine(name, 80)}"`,
		"prompts",
		(client, options) => client.getPrompt({ name, arguments: { ...args } }, options),
		signal,
		{ kind: "prompts", name },
	);
}

/** A prompt's messages as one message of the user: only the user's messages are unlabelled. */
export function promptParts(result: GetPromptResult): Part[] {
	const labelled = result.messages.some((message) => message.role !== "user");
	return result.messages.flatMap((message): Part[] => [
		...(labelled ? [{ kind: "text" as const, text: `${message.role}:` }] : []),
		...blockParts(message.content as ContentBlock),
	]);
}

export function presentPrompt(session: Session, server: string, name: string, result: GetPromptResult): Promise<Presented> {
	return present(promptParts(result), session.overflow, `${server}-prompt-${name}`);
}

export function readResource(session: Session, server: string, uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
	return session.runtime.request(
		server,
		`reading ${oneLine(uri, 200)}`,
		"resources",
		(client, options) => client.readResource({ uri }, options),
		signal,
	);
}

export function presentResource(session: Session, server: string, result: ReadResourceResult): Promise<Presented> {
	return present(resourceResultParts(result), session.overflow, `${server}-resource`);
}

/** What `completion/complete` suggests for a prompt's or a template's argument; none where the server offers none. */
export async function suggestions(
	session: Session,
	server: string,
	ref: Readonly<{ type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string }>,
	argument: Readonly<{ name: string; value: string }>,
	given: Readonly<Record<string, string>>,
	signal?: AbortSignal,
): Promise<readonly string[]> {
	const result = await session.runtime
		.request(
			server,
			"completing an argument",
			"completions",
			(client, options) =>
				client.complete({ ref: { ...ref }, argument: { ...argument }, context: { arguments: { ...given } } }, options),
			signal,
			ref.type === "ref/prompt" ? { kind: "prompts", name: ref.name } : { kind: "templates", name: ref.uri },
		)
		.catch(() => undefined);
	return result?.completion.values ?? [];
}
