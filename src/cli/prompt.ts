/**
 * `pi-mcp prompt <server> <prompt> [name=value …]` prints a prompt's messages (`role: text`, one message a
 * line); `pi-mcp read <server> <uri>` prints a resource: text as text, anything binary saved to a file it
 * names (kept with --out). `--json` prints what the server returned. Arguments are checked as `/mcp prompt`
 * checks them (`catalog/prompts.ts`): a missing required one is a usage error naming it.
 */
import type { ContentBlock } from "@modelcontextprotocol/client";
import { fetchPrompt, MissingArguments, readResource } from "../catalog/prompts.ts";
import { blockParts, type Part, refusalText } from "../output/content.ts";
import { formatBytes, stripTerminal } from "../output/text.ts";
import { UsageError } from "./args.ts";
import { type Cli, EXIT, entryOf, extensionOf, slow } from "./context.ts";
import { HELP } from "./help.ts";
import { jsonLine } from "./json.ts";

/** A part as a line of text: text as it is (escapes stripped), anything else saved to a file that is named. */
async function partText(cli: Cli, part: Part, label: string): Promise<string> {
	if (part.kind === "text") return stripTerminal(part.text);
	const bytes = Buffer.from(part.data, "base64");
	const saved = await cli.session.overflow.save(`${label}${extensionOf(part.mimeType)}`, [bytes]);
	const where = "path" in saved ? `saved to ${saved.path}` : `not saved: ${refusalText(saved)}`;
	return `[${stripTerminal(part.mimeType)}, ${formatBytes(bytes.length)} ${where}]`;
}

function filesNote(cli: Cli): void {
	if (cli.session.overflow.used() === 0) return;
	cli.io.err(
		cli.keepsFiles
			? `pi-mcp: files named above are kept in ${cli.flags.out}\n`
			: "pi-mcp: files named above are removed when this command exits; pass --out <dir> to keep them\n",
	);
}

export async function printPrompt(cli: Cli, args: readonly string[]): Promise<number> {
	const [name, promptName, ...words] = args;
	const server = entryOf(cli, name, "prompt").name;
	if (!promptName) throw new UsageError(`pi-mcp prompt: give a server and a prompt\n\n${HELP.prompt}`, "prompt");
	const given: Record<string, string> = {};
	for (const word of words) {
		const at = word.indexOf("=");
		if (at <= 0) throw new UsageError(`pi-mcp prompt: "${stripTerminal(word)}" is not name=value\n\n${HELP.prompt}`, "prompt");
		given[word.slice(0, at)] = word.slice(at + 1);
	}
	const result = await slow(
		cli,
		`connecting to ${server}`,
		fetchPrompt(cli.session, server, promptName, given, cli.signal),
	).catch((error: unknown) => {
		throw error instanceof MissingArguments ? new UsageError(`pi-mcp: ${error.message}`, "prompt") : error;
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
	filesNote(cli);
	return EXIT.ok;
}

export async function printResource(cli: Cli, args: readonly string[]): Promise<number> {
	const [name, uri, ...extra] = args;
	const server = entryOf(cli, name, "read").name;
	if (!uri || extra.length > 0) throw new UsageError(`pi-mcp read: give a server and a URI\n\n${HELP.read}`, "read");
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
	filesNote(cli);
	return EXIT.ok;
}
