/**
 * `/mcp prompt <server> <prompt> [name=value …]` and `/mcp attach <server> <uri>`: the user's own use of a
 * server's prompts and resources. A prompt's messages go into the conversation as the user's message (the
 * model answers it); a resource's content goes in as context the model sees on its next turn. Both pass the
 * output rules first (`catalog/prompts.ts`). Tab completion names servers, prompts, argument names and values
 * (the server's `completion/complete`), and resource URIs; it connects only the server named, bounded in time.
 */
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { AutocompleteItem } from "@earendil-works/pi-tui";
import {
	fetchPrompt,
	listPrompts,
	listResources,
	MissingArguments,
	presentPrompt,
	presentResource,
	readResource,
	suggestions,
} from "../catalog/prompts.ts";
import { unknownServer } from "../config.ts";
import type { CommandSession, Session } from "../contracts.ts";
import { errorText } from "../errors.ts";
import type { PiBlock } from "../output/content.ts";
import { escapeName, formatBytes, oneLine } from "../output/text.ts";
import { unknownServerHere } from "./unknown.ts";

/** How the command reaches the conversation: Pi's own senders. */
export type Conversation = Pick<ExtensionAPI, "sendUserMessage" | "sendMessage">;

/** The custom message type of an attached resource. */
export const ATTACHED = "pi-mcp-resource";

/** Longest a completion may wait for its server (connecting included). */
const COMPLETION_MS = 3000;

/** Words of a command line: spaces separate, quotes ("…" or '…') group, a backslash escapes inside "…". */
export function splitWords(text: string): string[] {
	const words: string[] = [];
	for (const match of text.matchAll(/(?:[^\s"']+|"(?:\\.|[^"\\])*"?|'[^']*'?)+/g)) {
		words.push(
			match[0].replace(/"((?:\\.|[^"\\])*)"?|'([^']*)'?/g, (_all, double?: string, single?: string) =>
				double !== undefined ? double.replace(/\\(.)/g, "$1") : (single ?? ""),
			),
		);
	}
	return words;
}

/** `name=value` words as arguments; a word without `=` is an error naming it. */
export function namedArguments(words: readonly string[]): Record<string, string> {
	const args: Record<string, string> = {};
	for (const word of words) {
		const at = word.indexOf("=");
		if (at <= 0) throw new Error(`"${oneLine(word, 60)}" is not name=value (quote a value with spaces: name="a b")`);
		args[word.slice(0, at)] = word.slice(at + 1);
	}
	return args;
}

function report(ctx: ExtensionContext, text: string, level: "info" | "warning" | "error" = "info"): void {
	if (ctx.hasUI) ctx.ui.notify(text, level);
	else process.stderr.write(`${text}\n`);
}

/** The user's message with a prompt's content; queued after the current run when the agent is busy. */
export function sendAsUser(conversation: Conversation, ctx: ExtensionContext, content: readonly PiBlock[]): void {
	conversation.sendUserMessage([...content], ctx.isIdle() ? undefined : { deliverAs: "followUp" });
}

/** A resource's content as context: stored now (or after the current turn), seen by the model on its next turn. */
export function sendAsContext(conversation: Conversation, server: string, uri: string, content: readonly PiBlock[]): void {
	const head = `[MCP resource ${escapeName(uri)} from server "${escapeName(server)}"]`;
	const [first, ...rest] = content;
	const blocks: PiBlock[] =
		first?.type === "text"
			? [{ type: "text", text: `${head}\n${first.text}` }, ...rest]
			: [{ type: "text", text: head }, ...content];
	conversation.sendMessage(
		{ customType: ATTACHED, content: blocks, display: true, details: { server, uri } },
		{ triggerTurn: false },
	);
}

/** Runs a prompt: arguments asked for in the TUI when a required one is missing. */
export async function runPrompt(
	conversation: Conversation,
	ctx: ExtensionContext,
	session: Session,
	server: string,
	name: string,
	given: Readonly<Record<string, string>>,
): Promise<void> {
	try {
		const result = await fetchPrompt(session, server, name, given, ctx.signal);
		const presented = await presentPrompt(session, server, name, result);
		return sendAsUser(conversation, ctx, presented.content);
	} catch (error) {
		if (!(error instanceof MissingArguments) || ctx.mode !== "tui") throw error;
		const asked = await askMissing(ctx, name, error);
		return runPrompt(conversation, ctx, session, server, name, { ...given, ...asked });
	}
}

/** The missing required arguments, asked for one by one; refused when the user gives no value. */
async function askMissing(ctx: ExtensionContext, name: string, error: MissingArguments): Promise<Record<string, string>> {
	const answers: [string, string][] = [];
	for (const missing of error.missing) {
		const described = error.prompt.arguments?.find((arg) => arg.name === missing)?.description;
		const value = await ctx.ui.input(`${escapeName(name)}: ${escapeName(missing)}`, oneLine(described, 100) || undefined);
		if (value === undefined) throw new Error(`prompt "${escapeName(name)}" not sent: no value for "${escapeName(missing)}"`);
		answers.push([missing, value]);
	}
	return Object.fromEntries(answers);
}

/** Attaches a resource (or a template's expanded URI); resolves to a line saying what was added. */
export async function attachResource(
	conversation: Conversation,
	ctx: ExtensionContext,
	session: Session,
	server: string,
	uri: string,
): Promise<string> {
	const result = await readResource(session, server, uri, ctx.signal);
	const presented = await presentResource(session, server, result);
	sendAsContext(conversation, server, uri, presented.content);
	const images = presented.info.images > 0 ? `, ${presented.info.images} image${presented.info.images === 1 ? "" : "s"}` : "";
	const cut = presented.info.overflowPath ? `; the rest is in ${presented.info.overflowPath}` : "";
	return `Attached ${escapeName(uri)} (${formatBytes(presented.info.textBytes)}${images}${cut}); the model sees it on its next turn.`;
}

const USAGE = "Usage: /mcp prompt <server> <prompt> [name=value …] | /mcp attach <server> <uri>";

/** Longest a prompt sent in print or JSON mode may take to start the agent's run. */
const START_MS = 5000;

/**
 * Print and JSON modes end when the command returns: a prompt sent as the user's message is answered
 * only if the command waits for the run it starts (it starts a moment after the send).
 */
async function answered(ctx: ExtensionCommandContext): Promise<void> {
	const until = Date.now() + START_MS;
	while (ctx.isIdle() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
	await ctx.waitForIdle();
}

/** `/mcp prompt …` and `/mcp attach …` (`args` is the text after `/mcp`). */
export async function runUserCommand(
	args: string,
	ctx: ExtensionCommandContext,
	session: CommandSession | undefined,
	conversation: Conversation | undefined,
): Promise<void> {
	const [action, server, target, ...rest] = splitWords(args);
	if (server === undefined || target === undefined || (action === "attach" && rest.length > 0)) {
		return report(ctx, USAGE, "warning");
	}
	if (!session || !conversation) return report(ctx, "pi-mcp: no session yet.", "warning");
	const unknown = unknownServerHere(session.config, server);
	if (unknown !== undefined) return report(ctx, unknown, "error");
	try {
		if (action === "attach") return report(ctx, await attachResource(conversation, ctx, session, server, target));
		await runPrompt(conversation, ctx, session, server, target, namedArguments(rest));
		if (!ctx.hasUI) await answered(ctx);
	} catch (error) {
		report(ctx, errorText(error), "error");
	}
}

/** The completion menu (`completeUserCommand`) in the session `open` gives; null before a session has started. */
export async function menu(open: () => Promise<Session>, prefix: string) {
	return open().then(
		(session) => completeUserCommand(session, prefix),
		() => null,
	);
}

/** A word as typed back into the editor: quoted when it holds spaces or quotes. */
const typed = (word: string): string => (/[\s"'\\]/.test(word) ? `"${word.replace(/["\\]/g, "\\$&")}"` : word);

function items(head: string, values: readonly string[], typedSoFar: string, describe?: (value: string) => string) {
	const shown = values.filter((value) => value.startsWith(typedSoFar)).slice(0, 50);
	// A word already whole gets no menu, so that Enter runs the command (as for `/mcp tools <server>`).
	return shown.length === 0 || (shown.length === 1 && shown[0] === typedSoFar)
		? null
		: shown.map((value) => ({ value: `${head}${typed(value)}`, label: escapeName(value), description: describe?.(value) }));
}

/**
 * Completions after `prompt <server> ` or `attach <server> `: prompt names, then `name=` for its arguments,
 * then the server's suggestions for the value being typed; for `attach`, resource URIs (and a template's
 * variable, through the server's completions). Null when there is nothing to offer or the server is slow.
 */
export async function completeUserCommand(session: Session, prefix: string): Promise<AutocompleteItem[] | null> {
	const words = splitWords(prefix);
	const ended = /\s$/.test(prefix);
	const [action, server] = words;
	if (!server || unknownServer(session.config, server) !== undefined) return null;
	const signal = AbortSignal.timeout(COMPLETION_MS);
	const done = words.slice(0, ended ? words.length : -1);
	const current = ended ? "" : (words[words.length - 1] ?? "");
	const head = `${done.map(typed).join(" ")} `;
	try {
		if (action === "attach") {
			if (done.length !== 2) return null;
			const { resources, templates } = await listResources(session, server, signal);
			const template = templates.find((each) => {
				const literal = each.uriTemplate.split("{")[0] ?? "";
				return literal !== each.uriTemplate && current.startsWith(literal) && /^[^{]*\{(\w+)\}$/.test(each.uriTemplate);
			});
			if (template) {
				const literal = template.uriTemplate.split("{")[0] ?? "";
				const variable = /\{(\w+)\}$/.exec(template.uriTemplate)?.[1] ?? "";
				const ref = { type: "ref/resource" as const, uri: template.uriTemplate };
				const values = await suggestions(
					session,
					server,
					ref,
					{ name: variable, value: current.slice(literal.length) },
					{},
					signal,
				);
				return items(
					head,
					values.map((value) => `${literal}${value}`),
					current,
				);
			}
			const uris = [...resources.map((each) => each.uri), ...templates.map((each) => each.uriTemplate)];
			const described = new Map(resources.map((each) => [each.uri, oneLine(each.description ?? each.name, 60)]));
			return items(head, uris, current, (uri) => described.get(uri) ?? "template: type the rest");
		}
		const prompts = await listPrompts(session, server, signal);
		if (done.length === 2)
			return items(
				head,
				prompts.map((each) => each.name),
				current,
				(name) => oneLine(prompts.find((each) => each.name === name)?.description, 60),
			);
		const prompt = prompts.find((each) => each.name === done[2]);
		if (!prompt) return null;
		const given = namedArguments(done.slice(3));
		const at = current.indexOf("=");
		if (at < 0) {
			const names = (prompt.arguments ?? []).filter((arg) => !(arg.name in given)).map((arg) => arg.name);
			const shown = names.filter((name) => name.startsWith(current));
			return shown.length === 0
				? null
				: shown.map((name) => ({
						value: `${head}${name}=`,
						label: `${escapeName(name)}=`,
						description: oneLine(prompt.arguments?.find((arg) => arg.name === name)?.description, 60),
					}));
		}
		const name = current.slice(0, at);
		const ref = { type: "ref/prompt" as const, name: prompt.name };
		const values = await suggestions(session, server, ref, { name, value: current.slice(at + 1) }, given, signal);
		const found = values.filter((value) => value.startsWith(current.slice(at + 1))).slice(0, 50);
		return found.length === 0 || (found.length === 1 && found[0] === current.slice(at + 1))
			? null
			: found.map((value) => ({ value: `${head}${name}=${typed(value)}`, label: escapeName(value) }));
	} catch {
		return null;
	}
}
