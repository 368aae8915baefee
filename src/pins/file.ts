/**
 * `<agent dir>/mcp-pins.json` (#47): per server identity (`config/identity.ts`), per definition (`tool:x`,
 * `prompt:x`, `template:x`, `instructions`), the hash of what the user approved and the definition itself
 * (for the diff a review shows; exact configured secret values redacted). Also which kinds were listed
 * once (a kind never seen is pinned on first use). No secret, no identity in clear beyond `user:name`.
 *
 * Read lazily at a server's first connection, never at start. Written like configuration edits: in this
 * process's turn, holding `<file>.lock` across processes, re-read under it, through an exclusive
 * temporary file and a rename, mode 0600. Each write applies only its own changes, so two processes
 * approving different servers both keep theirs. A file that cannot be read or parsed is never rewritten:
 * every pinned definition stays withheld until `pi-mcp trust --reset` moves it aside.
 */
import { isObject } from "../schema.ts";

export type Kind = "tools" | "prompts" | "templates" | "instructions";
export const KINDS: readonly Kind[] = ["tools", "prompts", "templates", "instructions"];

export type Approved = Readonly<{ hash: string; definition: unknown }>;
export type ServerPins = Readonly<{ server: string; seen: readonly Kind[]; definitions: Readonly<Record<string, Approved>> }>;
export type PinsData = Readonly<{ version: 1; servers: Readonly<Record<string, ServerPins>> }>;

/** One change a write applies: definitions approved (`set`), kinds seen, or a server's pins forgotten. */
export type PinChange = Readonly<{
	identity: string;
	server: string;
	set?: Readonly<Record<string, Approved>>;
	seen?: readonly Kind[];
	forget?: true;
}>;

/** 5,000 tools with large schemas stay well within it; more is not a pins file pi-mcp wrote. */
export const MAX_PINS_BYTES = 64 * 1024 * 1024;

export class PinsUnreadable extends Error {
	override readonly name = "PinsUnreadable";
	readonly path: string;
	constructor(path: string, cause: string) {
		super(`${path} cannot be read (${cause}); pinned definitions stay withheld until you run pi-mcp trust --reset <server>`);
		this.path = path;
	}
}

export const EMPTY: PinsData = { version: 1, servers: {} };

/** The pins in `text` (none when undefined: first use); `PinsUnreadable` when it is not a pins file. */
export function parsePins(path: string, text: string | undefined): PinsData {
	if (text === undefined) return EMPTY;
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch (error) {
		throw new PinsUnreadable(path, `not JSON: ${(error as Error).message}`);
	}
	if (!isObject(value) || value.version !== 1 || !isObject(value.servers)) {
		throw new PinsUnreadable(path, 'expected {"version": 1, "servers": {…}}');
	}
	for (const [identity, entry] of Object.entries(value.servers)) {
		const ok =
			isObject(entry) &&
			typeof entry.server === "string" &&
			Array.isArray(entry.seen) &&
			entry.seen.every((kind) => KINDS.includes(kind as Kind)) &&
			isObject(entry.definitions) &&
			Object.values(entry.definitions).every((each) => isObject(each) && typeof each.hash === "string");
		if (!ok) throw new PinsUnreadable(path, `the record of server ${identity.slice(0, 12)}… is malformed`);
	}
	return value as PinsData;
}

export function applyChanges(data: PinsData, changes: readonly PinChange[]): PinsData {
	const servers: Record<string, ServerPins> = { ...data.servers };
	for (const change of changes) {
		if (change.forget) {
			delete servers[change.identity];
			continue;
		}
		const before = servers[change.identity];
		servers[change.identity] = {
			server: change.server,
			seen: [...new Set([...(before?.seen ?? []), ...(change.seen ?? [])])],
			definitions: { ...before?.definitions, ...change.set },
		};
	}
	return { version: 1, servers };
}
