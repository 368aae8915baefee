/**
 * A tool's annotations in words, as listings and `describe` show them before a call: only the hints the
 * server declares true (`read-only`, `destructive`, `open-world`, `idempotent`); what it leaves unsaid
 * stays unsaid. Hints are the server's claims, not guarantees. Also the server's instructions as the
 * model gets them once per session, after the first listing or `describe` of that server.
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

/** The lines that give a server's instructions to the model (none when already given or none sent). */
export function instructionLines(server: string, instructions: string | undefined): readonly string[] {
	return instructions === undefined ? [] : [`Instructions from MCP server "${server}" (given once per session):`, instructions];
}

/**
 * The one line a server's withheld definitions get (#47): how many changed since the user approved them
 * and where to review them, never their text. None when nothing is withheld.
 */
export function pendingLines(
	statuses: readonly Readonly<{ name: string; pins?: Readonly<{ note?: string }> }>[],
	servers: readonly string[],
): readonly string[] {
	return statuses.flatMap((status) => (servers.includes(status.name) && status.pins?.note ? [status.pins.note] : []));
}
