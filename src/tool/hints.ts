/**
 * A tool's annotations in words, as listings and `describe` show them before a call: only the hints the
 * server declares true (`read-only`, `destructive`, `open-world`, `idempotent`); what it leaves unsaid
 * stays unsaid. Hints are the server's claims, not guarantees. Also the server's instructions as the
 * model gets them once per session, after the first listing or `describe` of that server, set apart line by line.
 */

type Annotated = Readonly<{ annotations?: Readonly<Record<string, unknown>> }>;

export function hintWords(tool: Annotated): readonly string[] {
	const hints = tool.annotations ?? {};
	const readOnly = hints.readOnlyHint === true;
	return [
		readOnly ? "read-only" : undefined,
		!readOnly && hints.destructiveHint === true ? "destructive" : undefined,
		hints.idempotentHint === true ? "idempotent" : undefined,
		hints.openWorldHint === true ? "open-world" : undefined,
	].filter((word): word is string => word !== undefined);
}

/** `name [read-only, idempotent]`, or the name alone. */
export function withHints(name: string, tool: Annotated): string {
	const words = hintWords(tool);
	return words.length > 0 ? `${name} [${words.join(", ")}]` : name;
}

/**
 * The lines that give a server's instructions to the model (none when already given or none sent). Every
 * line of the server's text starts with `server│ `, so none of them can read as our own header (a forged
 * `Instructions from MCP server "trusted" …` line stays one of this server's lines).
 */
export function instructionLines(server: string, instructions: string | undefined): readonly string[] {
	if (instructions === undefined) return [];
	const prefix = `${server}│ `;
	return [
		`Instructions from MCP server "${server}" (given once per session; each of its lines starts with "${prefix.trimEnd()}"):`,
		...instructions.split(/\r\n|\r|\n|\u2028|\u2029/).map((line) => `${prefix}${line}`),
	];
}
