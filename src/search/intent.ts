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

/** Classes that change things: a tool doing one of them is the wrong tool for a query asking another. */
const MUTATING: ReadonlySet<VerbClass> = new Set(["create", "delete", "update"]);

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

/** A tool's verb classes: those of its name's words, or of its description's first word (`List KV namespaces`). */
export function toolClasses(tool: SearchTool, nameStems: ReadonlySet<string>): Set<VerbClass> {
	const out = new Set<VerbClass>();
	for (const term of nameStems) for (const name of CLASS_OF.get(term) ?? []) out.add(name);
	const first = /^\s*([A-Za-z]+)/.exec((tool.description ?? "").slice(0, 40))?.[1];
	if (first) for (const name of CLASS_OF.get(stem(first.toLowerCase())) ?? []) out.add(name);
	return out;
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

const sizes = new WeakMap<object, ReadonlyMap<string, number>>();

/** Tools per server, counted once per index. */
function serverSizes<T extends SearchTool>(index: SearchIndex<T>): ReadonlyMap<string, number> {
	const known = sizes.get(index);
	if (known) return known;
	const counted = new Map<string, number>();
	for (const doc of index.docs) counted.set(doc.server, (counted.get(doc.server) ?? 0) + 1);
	sizes.set(index, counted);
	return counted;
}

/**
 * A query word names a server when it is a word of the server's name or of most of its tools' names
 * (`hubspot-list-objects`), and nearly every tool whose text has the word is that server's: then
 * `search` stays a word (it is everywhere) while `hubspot` and `redis` become hints.
 */
function namedServers<T extends SearchTool>(index: SearchIndex<T>, stems: readonly string[]): Map<string, string> {
	const found = new Map<string, string>();
	for (const term of stems) {
		const docs = index.postings.get(term)?.docs ?? [];
		if (docs.length === 0) continue;
		const counts = new Map<string, { all: number; named: number }>();
		for (const doc of docs) {
			const entry = index.docs[doc];
			if (!entry) continue;
			const count = counts.get(entry.server) ?? { all: 0, named: 0 };
			count.all += 1;
			if (entry.nameStems.has(term)) count.named += 1;
			counts.set(entry.server, count);
		}
		for (const [server, count] of counts) {
			// One server's search: every word is its own; only the words of its name are hints.
			if (count.all < 0.8 * docs.length || (serverSizes(index).size === 1 && !words(server).map(stem).includes(term))) continue;
			const size = serverSizes(index).get(server) ?? 0;
			const inName = words(server).map(stem).includes(term);
			if (inName || (size >= 3 && count.named >= 0.6 * size)) found.set(server, term);
		}
	}
	return found;
}

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

/** How much a tool's classes fit the intent: above 1 when its action is the one asked, below when it does another. */
export function fit(intent: Intent, classes: ReadonlySet<VerbClass>): number {
	const asked = new Set(intent.verbs);
	if (intent.many) asked.add("list");
	if (intent.one && asked.size === 0) {
		asked.add("read");
		asked.add("search");
	}
	if (asked.size === 0) return 1;
	const same = [...classes].some((name) => asked.has(name));
	if (same) return intent.many === "plural" ? 1.1 : 1.2;
	// A plural noun alone (`queues`) only hints at a listing: `comit changes` may still want a commit.
	if (intent.verbs.size === 0 && intent.many !== "explicit") return 1;
	const wrong = [...classes].some((name) => MUTATING.has(name) && !asked.has(name));
	return wrong ? 0.7 : 1;
}

/** Stems that cue an intent and are left out of the words a tool must match, when others remain. */
export const CUES: ReadonlySet<string> = new Set(["show", "display", "every", "available"].map(stem));
