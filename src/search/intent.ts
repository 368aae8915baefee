/**
 * What a query asks for beyond its words (issue #42), read by rules that hold for any server: the
 * action (a verb class: create, delete, update, read, list, search), whether it asks to see many
 * (`show`, `list`, `every`, `all`, `which`, a plural noun with no verb) or one (`by <field>`, an id),
 * and which words name a server rather than a thing (`hubspot`, `redis`): such a word is a hint about
 * where to look, not something the tool must be about. Pure; no SDK import.
 */
import type { SearchIndex, SearchTool } from "./build.ts";
import { editDistance, queryWords, stem, words } from "./text.ts";

export type VerbClass = "create" | "delete" | "update" | "read" | "list" | "search" | "run";

/** Verbs by class, as query words and as tool-name words. General developer and API vocabulary only. */
const CLASSES: Readonly<Record<VerbClass, readonly string[]>> = {
	create: [
		"create",
		"add",
		"new",
		"make",
		"post",
		"insert",
		"generate",
		"register",
		"spin",
		"open",
		"start",
		"init",
		"write",
		"put",
		"upsert",
	],
	delete: ["delete", "remove", "erase", "drop", "destroy", "rm", "discard", "purge", "clear", "unset"],
	update: ["update", "change", "set", "edit", "modify", "patch", "alter", "rename", "write", "upsert", "put", "replace"],
	read: ["get", "read", "fetch", "retrieve", "view", "describe", "info", "details", "detail", "inspect", "download"],
	list: ["list", "ls", "enumerate", "browse"],
	search: ["search", "find", "query", "lookup", "filter", "look"],
	run: ["run", "execute", "exec", "invoke", "trigger", "call", "evaluate", "eval", "deploy"],
};

/** Verb (as written, and as stemmed for tool names) → its classes. */
const CLASS_OF = new Map<string, VerbClass[]>();
for (const [name, verbs] of Object.entries(CLASSES) as [VerbClass, readonly string[]][])
	for (const verb of verbs)
		for (const key of new Set([verb, stem(verb)])) CLASS_OF.set(key, [...(CLASS_OF.get(key) ?? []), name]);

/** Whether a stem is a verb of a class (`create`, `list`): an action, not a thing. */
export const isVerb = (term: string): boolean => CLASS_OF.has(term);

/** Words that ask to see many: they are cues, not things a tool must name. */
const MANY = new Set(["show", "list", "every", "all", "which", "display", "enumerate", "ls", "available", "my"]);
/** Words that ask for one: `by email`, `with id`. */
const ONE = new Set(["by", "id", "ids", "identifier", "named", "called", "specific", "single", "details"]);

/** The words a query's typos are corrected against when the index does not hold them: the cues and verbs above. */
export const GENERAL_WORDS: readonly string[] = [...new Set([...Object.values(CLASSES).flat(), ...MANY, ...ONE])];

/** The general word a misspelled query word means (1 edit for 4–5 letters, 2 from 6), if one is that close. */
export function correctGeneral(word: string): string | undefined {
	if (word.length < 4 || GENERAL_WORDS.includes(word)) return undefined;
	const max = word.length >= 6 ? 2 : 1;
	// Typos rarely touch the first letter (as in the index's typo scan): `histroy` is not `destroy`.
	const scored = GENERAL_WORDS.filter((known) => known[0] === word[0] || (known[0] === word[1] && known[1] === word[0]))
		.map((known) => ({ known, distance: editDistance(word, known, max) }))
		.filter((entry) => entry.distance <= max);
	return scored.sort((a, b) => a.distance - b.distance)[0]?.known;
}

const BITS: Readonly<Record<VerbClass, number>> = { create: 1, delete: 2, update: 4, read: 8, list: 16, search: 32, run: 64 };
const MUTATING_BITS = BITS.create | BITS.delete | BITS.update;
const maskOf = (names: Iterable<VerbClass>): number => [...names].reduce((mask, name) => mask | BITS[name], 0);

/** Verb (as written and stemmed) → its class bits. */
const VERB_BITS = new Map([...CLASS_OF].map(([word, names]) => [word, maskOf(names)]));

/** A tool's verb classes as bits: those of its name's words, or of its description's first word (`List KV namespaces`). */
function readMask(nameStems: ReadonlySet<string>, lead: string): number {
	return [...nameStems].reduce((mask, term) => mask | (VERB_BITS.get(term) ?? 0), VERB_BITS.get(lead) ?? 0);
}

/** Each tool's class bits, read at its first match and kept with the index (255: not read yet). */
const masks = new WeakMap<object, Uint8Array>();

/** The class bits of document `doc` of the index. */
export function classBits<T extends SearchTool>(index: SearchIndex<T>, doc: number): number {
	const known = masks.get(index) ?? new Uint8Array(index.docs.length).fill(255);
	masks.set(index, known);
	if (known[doc] === 255) {
		const entry = index.docs[doc];
		known[doc] = entry ? readMask(entry.nameStems, entry.lead) : 0;
	}
	return known[doc] ?? 0;
}

/** A tool's verb classes (see `readMask`), from its name and title words and its description's first word. */
export function toolClasses(tool: SearchTool, nameStems: ReadonlySet<string>): ReadonlySet<VerbClass> {
	const first = /^\s*([A-Za-z]+)/.exec((tool.description ?? "").slice(0, 40))?.[1];
	const mask = readMask(nameStems, first ? stem(first.toLowerCase()) : "");
	return new Set((Object.keys(BITS) as VerbClass[]).filter((name) => (mask & BITS[name]) !== 0));
}

export type Intent = Readonly<{
	/** The action's classes, from the query's verbs (empty: none said). */
	verbs: ReadonlySet<VerbClass>;
	/** Asks to see many (`show all workers`, `which buckets`, `queues`); `explicit`: a cue word said so. */
	many: "explicit" | "plural" | undefined;
	/** Asks for one thing by a field or an id. */
	one: boolean;
	/** Servers the query names, with the query stems that name them. */
	servers: ReadonlyMap<string, string>;
}>;

/**
 * A query word names a server when it is a word of the server's name or of most of its tools' names
 * (the index's `serverWords`), and nearly every tool whose text has the word is that server's: then
 * `search` stays a word (it is everywhere) while `hubspot` and `redis` become hints. In one server's
 * search every word is its own: only the words of its name are hints.
 */
function namedServers<T extends SearchTool>(index: SearchIndex<T>, stems: readonly string[]): Map<string, string> {
	const found = new Map<string, string>();
	// The docs are grouped by server, in order: one server when the first and the last are the same.
	const single = index.docs[0]?.server === index.docs.at(-1)?.server;
	for (const term of stems) {
		const servers = index.serverWords.get(term) ?? [];
		const docs = index.postings.get(term)?.docs ?? [];
		if (servers.length === 0 || docs.length === 0) continue;
		// At most `SAMPLE` of the word's tools, evenly spread, tell where it lives: a query's cost stays bounded.
		const size = Math.min(SAMPLE, docs.length);
		const sample = Array.from({ length: size }, (_, i) => index.docs[docs[Math.floor((i * docs.length) / size)] ?? -1]?.server);
		for (const server of servers) {
			const own = sample.filter((name) => name === server).length;
			const inName = words(server).map(stem).includes(term);
			if (own >= 0.8 * size && (inName || !single)) found.set(server, term);
		}
	}
	return found;
}

/** Tools of a word's postings read to tell whether it names a server. */
const SAMPLE = 256;

const isPlural = (word: string): boolean => word.length > 3 && word.endsWith("s") && stem(word) !== word;

/** Reads the query's intent (see the file's comment). */
export function readIntent<T extends SearchTool>(index: SearchIndex<T>, query: string): Intent {
	const all = queryWords(query).map((word) => (index.surface.has(word) ? word : (correctGeneral(word) ?? word)));
	const verbs = new Set<VerbClass>();
	// A verb as written (`change`, not `changes` or `changed`: those name a thing or a state), and
	// not after `is`/`are` (`which pull requests are open`).
	all.forEach((word, i) => {
		if (/^(is|are|was|were|be|been)$/.test(all[i - 1] ?? "")) return;
		for (const name of CLASS_OF.get(word) ?? []) verbs.add(name);
	});
	const explicit = all.some((word) => MANY.has(word) && word !== "my") || /\bwhat\b.*\b(are|do)\b/.test(query.toLowerCase());
	const plural = !explicit && verbs.size === 0 && all.some(isPlural);
	const one = all.some((word) => ONE.has(word));
	const servers = namedServers(
		index,
		[...new Set(all.map(stem))].filter((term) => !CLASS_OF.has(term)),
	);
	return { verbs, many: explicit ? "explicit" : plural ? "plural" : undefined, one, servers };
}

/** Whether the intent asks anything `fit` weighs: if not, a tool's classes need not be read. */
export const asks = (intent: Intent): boolean => intent.verbs.size > 0 || intent.many !== undefined || intent.one;

/**
 * How much a tool's classes (as bits) fit the intent: above 1 when its action is the one asked, below
 * when it does another that changes things. Made once per query, called per matching tool.
 */
export function fitOf(intent: Intent): (bits: number) => number {
	const asked = new Set(intent.verbs);
	if (intent.many) asked.add("list");
	if (intent.one && asked.size === 0) {
		asked.add("read");
		asked.add("search");
	}
	const wanted = maskOf(asked);
	const lift = intent.many === "plural" ? 1.1 : 1.2;
	// A plural noun alone (`queues`) only hints at a listing: `comit changes` may still want a commit.
	const penalise = intent.verbs.size > 0 || intent.many === "explicit";
	return (bits) => {
		if (wanted === 0 || bits === 0) return 1;
		if ((bits & wanted) !== 0) return lift;
		return penalise && (bits & MUTATING_BITS & ~wanted) !== 0 ? 0.7 : 1;
	};
}

/** `fitOf` for one tool's classes. */
export const fit = (intent: Intent, classes: ReadonlySet<VerbClass>): number => fitOf(intent)(maskOf(classes));

/** Stems that cue an intent and are left out of the words a tool must match, when others remain. */
export const CUES: ReadonlySet<string> = new Set(["show", "display", "every", "available"].map(stem));
