/**
 * `pi-mcp prompt <server> <prompt> [name=value …]` prints a prompt's messages (`role: text`, one message a
 * line); `pi-mcp read <server> <uri>` prints a resource: text as text, anything binary saved into `--out`
 * (`files.ts`). `--json` prints what the server returned. An unknown prompt or argument name is a usage
 * error with the close ones; a missing required argument is named (`catalog/prompts.ts` checks it).
 */
import type { ContentBlock } from "@modelcontextprotocol/client";
import { fetchPrompt, listPrompts, MissingArguments, type Prompt, readResource } from "../catalog/prompts.ts";
import { blockParts, type Part } from "../output/content.ts";
import { escapeName, stripTerminal } from "../output/text.ts";
import { UsageError } from "./args.ts";
import type { ShellRun } from "./context.ts";
import { binaryLine, filesNote } from "./files.ts";
import { HELP } from "./help.ts";
import { EXIT } from "./io.ts";
import { jsonLine } from "./json.ts";
import { entryOf, serverWords, unknownOf } from "./names.ts";
import { slow } from "./slow.ts";

/** A part as a line of text: text as it is (escapes stripped), anything else saved into `--out` or said not kept. */
async function partText(cli: ShellRun, part: Part, label: string): Promise<string> {
	if (part.kind === "text") return stripTerminal(part.text);
	return binaryLine(cli.files, part.data, part.mimeType, label);
}

/** `name=value` words as an object; a word without `=` is a usage error. */
function givenArguments(words: readonly string[]): Record<string, string> {
	const given: Record<string, string> = {};
	for (const word of words) {
		const at = word.indexOf("=");
		if (at <= 0) throw new UsageError(`pi-mcp prompt: "${stripTerminal(word)}" is not name=value`, "prompt", HELP.prompt);
		given[word.slice(0, at)] = word.slice(at + 1);
	}
	return given;
}

/** The named prompt, with every given argument one it declares; else a usage error with the close names. */
async function checkedPrompt(
	cli: ShellRun,
	server: string,
	name: string,
	given: Readonly<Record<string, string>>,
): Promise<Prompt> {
	const prompts = await slow(cli, `connecting to ${server}`, listPrompts(cli.session, server, cli.signal));
	const prompt = prompts.find((each) => each.name === name);
	const owner = serverWords(server);
	if (!prompt)
		throw unknownOf(
			owner,
			"prompt",
			name,
			prompts.map((each) => each.name),
		);
	const declared = (prompt.arguments ?? []).map((arg) => arg.name);
	const unknown = Object.keys(given).find((key) => !declared.includes(key));
	if (unknown !== undefined) throw unknownOf(`prompt "${escapeName(name)}" of ${owner}`, "argument", unknown, declared);
	return prompt;
}

export async function printPrompt(cli: ShellRun, args: readonly string[]): Promise<number> {
	const [name, promptName, ...words] = args;
	const server = entryOf(cli, name, "prompt").name;
	if (!promptName) throw new UsageError(`pi-mcp prompt: give a server and a prompt`, "prompt", HELP.prompt);
	const given = givenArguments(words);
	await checkedPrompt(cli, server, promptName, given);
	const result = await slow(
		cli,
		`getting ${promptName} from ${server}`,
		fetchPrompt(cli.session, server, promptName, given, cli.signal),
	).catch((error: unknown) => {
		throw error instanceof MissingArguments ? UsageError.said(error.message, "prompt") : error;
	});
	if (cli.flags.json) {
		cli.io.out(jsonLine({ server, prompt: promptName, description: result.description, messages: result.messages }, 2));
		return EXIT.ok;
	}
	const lines: string[] = [];
	for (const [index, message] of result.messages.entries()) {
		const parts = blockParts(message.content as ContentBlock);
		const texts = await Promise.all(parts.map((part, at) => partText(cli, part, `${server}-${promptName}-${index}-${at}`)));
		lines.push(`${message.role}: ${texts.join("\n")}`);
	}
	cli.content(`${lines.join("\n")}\n`);
	filesNote(cli.files, cli.flags.out, cli.io.err);
	return EXIT.ok;
}

export async function printResource(cli: ShellRun, args: readonly string[]): Promise<number> {
	const [name, uri, ...extra] = args;
	const server = entryOf(cli, name, "read").name;
	if (!uri || extra.length > 0) throw new UsageError(`pi-mcp read: give a server and a URI`, "read", HELP.read);
	const result = await slow(cli, `reading ${uri}`, readResource(cli.session, server, uri, cli.signal));
	if (cli.flags.json) {
		cli.io.out(jsonLine({ server, uri, contents: result.contents }, 2));
		return EXIT.ok;
	}
	const texts: string[] = [];
	for (const [index, item] of result.contents.entries()) {
		const part: Part =
			"text" in item
				? { kind: "text", text: item.text }
				: { kind: "blob", data: item.blob, mimeType: item.mimeType ?? "application/octet-stream", label: item.uri };
		texts.push(await partText(cli, part, `${server}-resource-${index}`));
	}
	cli.content(`${texts.join("\n")}\n`);
	filesNote(cli.files, cli.flags.out, cli.io.err);
	return EXIT.ok;
}
