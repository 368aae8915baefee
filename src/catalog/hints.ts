/**
 * A tool's annotations in words, as listings and `describe` show them before a call: only the hints the
 * server declares true (`read-only`, `destructive`, `open-world`, `idempotent`); what it leaves unsaid
 * stays unsaid. Hints are the server's claims, not guarantees. Also the server's instructions as the
 * model gets them once per session, after the first listing or `describe` of that server, set apart line by line.
 */

type Annotated = Readonly<{ annotations?: Readonly<Record<string, unknown>> }>;
type Hints = Readonly<Record<string, unknown>>;

/**
 * Every face's words for the hints, in the order shown: what a hint declared true says, and what one
 * declared false says where the user decides (the confirm dialog); listings name only the true ones.
 */
const HINT_WORDS: readonly Readonly<{ hint: string; yes: string; no?: string }>[] = [
	{ hint: "readOnlyHint", yes: "read-only" },
	{ hint: "destructiveHint", yes: "destructive", no: "not destructive" },
	{ hint: "idempotentHint", yes: "idempotent" },
	{ hint: "openWorldHint", yes: "open-world", no: "closed-world" },
];

/** The words of the hints declared true (a read-only tool is never also called destructive). */
export function hintWords(tool: Annotated): readonly string[] {
	const hints = tool.annotations ?? {};
	return HINT_WORDS.filter(
		({ hint }) => hints[hint] === true && !(hint === "destructiveHint" && hints.readOnlyHint === true),
	).map((each) => each.yes);
}

/** The hints declared either way, in words, for the user who decides: `read-only, closed-world`; empty when none. */
export function declaredHints(hints: Hints): readonly string[] {
	return HINT_WORDS.flatMap(({ hint, yes, no }) => (hints[hint] === true ? [yes] : hints[hint] === false && no ? [no] : []));
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
