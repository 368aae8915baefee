/**
 * Tool search (src/search.ts): ranking over real tool definitions (the bench catalog of 273 tools
 * from 11 published servers), the index cache, and the pieces (words, stemming, edit distance).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { rankedListing } from "../src/catalog/listing.ts";
import { SLICE_MS } from "../src/search/build.ts";
import {
	buildIndex,
	buildIndexAsync,
	editDistance,
	indexOf,
	LIMITS,
	queryWords,
	type SearchTool,
	search,
	stem,
	typoCandidates,
	words,
} from "../src/search/rank.ts";
import { SYNONYM_GROUPS } from "../src/search/synonyms.ts";
import { isWeak, MAX_NAMES, MIN_NAMES, strength, WEAK_RESULT_CHARS } from "../src/search/weak.ts";

type CatalogTool = SearchTool & Readonly<{ origin: string }>;
const CATALOG = JSON.parse(
	readFileSync(new URL("../bench/data/mcp-tool-catalog.json", import.meta.url), "utf8"),
) as CatalogTool[];
const serverOf = (origin: string): string => (/^(?:npm|github):(@?[^@]+)/.exec(origin)?.[1] ?? origin).replace(/.*\//, "");
const SOURCES = [...new Set(CATALOG.map((tool) => serverOf(tool.origin)))].map((server) => ({
	server,
	tools: CATALOG.filter((tool) => serverOf(tool.origin) === server),
}));
const INDEX = buildIndex(SOURCES);
const top = (query: string, n = 3): string[] => search(INDEX, query, n).map((hit) => hit.tool.name);

test("words split identifiers: snake_case, kebab-case, camelCase, dots and acronyms", () => {
	assert.deepEqual(words("browser_take_screenshot"), ["browser", "take", "screenshot"]);
	assert.deepEqual(words("API-post-search"), ["api", "post", "search"]);
	assert.deepEqual(words("listDirectory"), ["list", "directory"]);
	assert.deepEqual(words("HTTPServer.start"), ["http", "server", "start"]);
	assert.deepEqual(words("résumé 2 files"), ["résumé", "2", "files"]);
});

test("stemming brings plural, -ed, -ing and -ion forms together", () => {
	assert.equal(stem("issues"), stem("issue"));
	assert.equal(stem("directories"), stem("directory"));
	assert.equal(stem("created"), stem("create"));
	assert.equal(stem("creation"), stem("create"));
	assert.equal(stem("committed"), stem("commit"));
	assert.equal(stem("branches"), stem("branch"));
	assert.notEqual(stem("status"), stem("statu"));
	assert.equal(stem("git"), "git");
});

test("edit distance counts a swap of neighbours as one and gives up above the bound", () => {
	assert.equal(editDistance("comit", "commit", 2), 1);
	assert.equal(editDistance("histroy", "history", 2), 1);
	assert.equal(editDistance("kitten", "sitting", 3), 3);
	assert.equal(editDistance("abcdef", "ghijkl", 2), 3);
	assert.equal(editDistance("same", "same", 1), 0);
});

test("any query word can match: multi-word queries find tools, best first", () => {
	assert.equal(top("create pull request")[0], "create_pull_request");
	assert.equal(top("git commit")[0], "git_commit");
	assert.ok(top("stash my changes").includes("git_stash"));
});

test("synonyms from the one table: open a PR, picture of the page, new folder", () => {
	assert.equal(top("open a PR")[0], "create_pull_request");
	assert.ok(top("take a picture of the page").some((name) => /take_screenshot$/.test(name)));
	assert.ok(top("make a new folder").includes("create_directory"));
	// The table is data: every group has at least two entries and no empty word.
	for (const group of SYNONYM_GROUPS) {
		assert.ok(group.length >= 2, group.join(","));
		for (const word of group) assert.ok(word.trim().length > 0);
	}
});

test("typos of one or two letters in words of four letters or more still find the tool", () => {
	assert.ok(top("comit histroy").some((name) => name === "git_log" || name === "list_commits"));
	assert.ok(top("screnshot").some((name) => /screenshot/.test(name)));
	assert.equal(top("direcotry tree")[0], "directory_tree");
	// Three letters get no typo tolerance: "gti" is not "git".
	assert.deepEqual(top("gti"), []);
});

test("singular and plural meet", () => {
	assert.equal(top("list issue")[0], "list_issues");
	assert.equal(top("read multiple file")[0], "read_multiple_files");
});

test("an exact or near-exact name ranks first, also across servers as server/tool", () => {
	assert.equal(top("echo")[0], "echo");
	assert.equal(top("get-sum")[0], "get-sum");
	assert.equal(top("listDirectory")[0], "list_directory");
	assert.equal(top("resolve library id")[0], "resolve-library-id");
	const qualified = search(INDEX, "chrome-devtools-mcp/take_screenshot", 1)[0];
	assert.equal(`${qualified?.server}/${qualified?.tool.name}`, "chrome-devtools-mcp/take_screenshot");
});

test("a query that matches nothing returns nothing; limit is honoured", () => {
	assert.deepEqual(top("zzzzqqqq"), []);
	assert.equal(search(INDEX, "file", 5).length, 5);
	assert.deepEqual(search(buildIndex([]), "file"), []);
});

test("the index is built once per list object and rebuilt when the list changes", () => {
	const tools = CATALOG.slice(0, 20);
	const first = indexOf([{ server: "a", tools }]);
	assert.equal(indexOf([{ server: "a", tools }]), first, "same list object: same index");
	const changed = [...tools];
	assert.notEqual(indexOf([{ server: "a", tools: changed }]), first, "a new list: a new index");
	const pair = [
		{ server: "a", tools },
		{ server: "b", tools: CATALOG.slice(20, 40) },
	];
	const across = indexOf(pair);
	assert.equal(indexOf([...pair]), across, "same lists across servers: same index");
	assert.notEqual(indexOf([pair[0], { server: "b", tools: CATALOG.slice(20, 41) }] as typeof pair), across);
});

test("result lines cut a description at a word boundary near 120 characters, with …", async () => {
	const [{ shortText }, { toolEntry }] = await Promise.all([import("../src/output/text.ts"), import("../src/output/content.ts")]);
	const long = `${"word ".repeat(40)}end`;
	const cut = shortText(long);
	assert.ok(cut.length <= 120, `${cut.length}`);
	assert.match(cut, /^(word )+word…$/);
	assert.equal(shortText("short text\n\twith  spaces"), "short text with spaces");
	assert.equal(shortText(`${"x".repeat(200)}`).length, 120, "one very long word is cut inside it");
	assert.equal(toolEntry("name", undefined), "name");
	assert.equal(toolEntry("name", "Does a thing.\u001b[31m"), "name — Does a thing.");
});

describe("bounds (#17): what is read of each tool and of a query is capped", () => {
	test("a 64,000-letter query word is cut to the word cap; a query reads its first 256 characters and 16 words", () => {
		assert.deepEqual(queryWords("a".repeat(64_000)), ["a".repeat(LIMITS.wordLetters)]);
		assert.equal(words(`x${"b".repeat(1000)}`)[0]?.length, LIMITS.wordLetters);
		assert.equal(queryWords(Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ")).length, LIMITS.queryWords);
		assert.deepEqual(queryWords(`${" ".repeat(LIMITS.queryChars)}late`), [], "words past the character cap are not read");
		assert.deepEqual(search(INDEX, "q".repeat(64_000)), []);
		assert.ok(search(INDEX, `git commit ${"z".repeat(64_000)}`, 3).some((hit) => hit.tool.name === "git_commit"));
	});

	test("a description past its cap, and parameters past theirs, do not affect ranking", () => {
		const filler = "lorem ipsum dolor ".repeat(Math.ceil(LIMITS.descriptionChars / 18));
		const letters = (i: number) =>
			`${i < 100 ? "opt" : "zed"}${"abcdefghijklmnopqrstuvwxyz"[Math.floor(i / 26)]}${"abcdefghijklmnopqrstuvwxyz"[i % 26]}`;
		const params = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [letters(i), { type: "string" }]));
		const tools = [
			{ name: "early_tool", description: "zebra crossing" },
			{ name: "late_tool", description: `${filler} okapi` },
			{ name: "wide_tool", inputSchema: { type: "object", properties: params } },
		];
		const index = buildIndex([{ server: "s", tools }]);
		assert.deepEqual(
			search(index, "zebra").map((hit) => hit.tool.name),
			["early_tool"],
		);
		assert.deepEqual(search(index, "okapi"), [], "a word past the description cap is not indexed");
		assert.deepEqual(
			search(index, letters(5)).map((hit) => hit.tool.name),
			["wide_tool"],
		);
		assert.deepEqual(search(index, letters(150)), [], "parameters past the cap are not indexed");
	});

	test("the typo scan compares an unknown word with at most LIMITS.typoScan known words, from bounded buckets", () => {
		const letters = "abcdefghijklmnopqrstuvwxyz";
		const word = (i: number) => `s${Array.from({ length: 6 }, (_, k) => letters[Math.floor(i / 26 ** k) % 26]).join("")}`;
		const tools = Array.from({ length: 20_000 }, (_, i) => ({ name: word(i), description: `${word(i + 20_000)} task` }));
		const index = buildIndex([{ server: "s", tools }]);
		assert.ok(index.surface.size > 30_000, `a large vocabulary (${index.surface.size})`);
		for (const bucket of index.typoBuckets.values()) assert.ok(bucket.length <= LIMITS.bucket);
		const candidates = typoCandidates(index, "szzzzzzz", 2);
		assert.ok(candidates.length <= LIMITS.typoScan, `${candidates.length}`);
		assert.ok(candidates.length > 0);
		// Names come first: a typo of a listed name is still found among so many words.
		assert.equal(search(index, "saaaaab", 1)[0]?.tool.name, "saaaaaa");
	});

	test("the index is built in slices that give the event loop back (indexOf awaits an async build)", async () => {
		const tools = Array.from({ length: 4000 }, (_, i) => ({
			...(CATALOG[i % CATALOG.length] as CatalogTool),
			name: `tool_${i}`,
		}));
		const ticks = { n: 0, running: true };
		const tick = () => {
			ticks.n += 1;
			if (ticks.running) setImmediate(tick);
		};
		setImmediate(tick);
		const index = await buildIndexAsync([{ server: "s", tools }]);
		ticks.running = false;
		assert.equal(index.docs.length, 4000);
		assert.ok(ticks.n > 1, `the event loop ran during the build (${ticks.n} turns)`);
		assert.ok(SLICE_MS <= 50);
	});
});

describe("weak matches (#20, #42): a weak result adds related tool names for the model to judge", () => {
	const sources = SOURCES;
	const read = async (query: string, server?: string) => {
		const single = server !== undefined;
		const picked = single ? sources.filter((source) => source.server === server) : sources;
		const listing = await rankedListing(picked, query, { action: "tools", query }, single);
		return [listing.header, ...listing.lines, ...(listing.more ? [listing.more.trim()] : [])].join("\n");
	};

	test("a query whose top tools name none of its things says so in one line and lists 20–40 related names, not every name", async () => {
		const text = await read("vulnerable dependencies");
		const lines = text.split("\n");
		assert.equal(lines.filter((line) => line.startsWith("Weak match: ") || line.startsWith("Tools by name")).length, 1, text);
		const at = lines.findIndex((line) => line.startsWith("Weak match: ") || line.startsWith("Tools by name"));
		const names = lines.slice(at + 1).flatMap(
			(line) =>
				line
					.replace(/ … \(.*$/, "")
					.split(": ")[1]
					?.split(" ") ?? [],
		);
		assert.ok(names.length >= MIN_NAMES && names.length <= MAX_NAMES, `${names.length} names`);
		// Related by a word's beginning (`dependencies` → `dependabot`), not by the order of a listing.
		assert.ok(names.includes("list_dependabot_alerts"), text);
		assert.ok(text.length <= WEAK_RESULT_CHARS, `${text.length}`);
	});

	test("a query naming its thing is confident: ranked tools only, even when its verb is not a tool's word", async () => {
		const text = await read("bookmark a repository");
		assert.doesNotMatch(text, /^(Weak match|Tools by name)/m, text);
		assert.ok(isWeak(INDEX, "vulnerable dependencies", search(INDEX, "vulnerable dependencies")));
		assert.ok(!isWeak(INDEX, "bookmark a repository", search(INDEX, "bookmark a repository")));
		assert.ok(!isWeak(INDEX, "list commits", search(INDEX, "list commits")));
	});

	test("a strong match keeps the short answer", async () => {
		assert.equal(strength(INDEX, "create pull request", search(INDEX, "create pull request")), 1);
		const text = await read("create pull request");
		assert.doesNotMatch(text, /Weak match|by name/);
		assert.equal(text.split("\n").length, 12, text);
	});

	test("no match on one server lists its names within the budget; a later page adds none", async () => {
		const text = await read("zzqqxx", "server-filesystem");
		const [header, lead, names] = text.split("\n");
		assert.match(header ?? "", /^server-filesystem: no tool matches "zzqqxx" \(\d+ tools; list them without "query"\)$/);
		assert.equal(lead, "Tools by name, to judge by meaning:");
		assert.match(names ?? "", /^read_file read_text_file /);
		const paged = await rankedListing(sources, "vulnerable dependencies", { action: "tools", query: "x", cursor: "10" }, false);
		assert.ok(!paged.lines.some((line) => line.startsWith("Weak match")));
	});
});

describe("general rules (#42): they hold for servers nobody tuned the search on", () => {
	const tool = (name: string, description: string): SearchTool => ({ name, description });
	const first = (sources: Parameters<typeof buildIndex>[0], query: string): string => {
		const hit = search(buildIndex(sources), query, 1)[0];
		return hit ? `${hit.server}/${hit.tool.name}` : "";
	};
	const workers = [
		{
			server: "edge",
			tools: [
				tool("create_worker", "Create a new worker from a script. Workers run your code on the edge; a worker has routes."),
				tool("delete_worker", "Delete a worker and its routes."),
				tool("get_worker", "Get one worker's script and settings by its id."),
				tool("update_worker", "Update a worker's script or settings."),
				tool("worker_list", "List workers in your account."),
				tool("create_route", "Create a route for a worker."),
				tool("list_routes", "List the routes of a worker."),
			],
		},
	];

	test("intent: show/all/which ask for the listing tool, `by id` for one, and the verb's class for the rest", () => {
		assert.equal(first(workers, "show me all my workers"), "edge/worker_list");
		assert.equal(first(workers, "which workers do I have"), "edge/worker_list");
		assert.match(first(workers, "show all workers and their routes"), /^edge\/(worker_list|list_routes)$/);
		assert.equal(first(workers, "which routes does a worker have"), "edge/list_routes");
		assert.equal(first(workers, "worker by id"), "edge/get_worker");
		assert.equal(first(workers, "change the settings of a worker"), "edge/update_worker");
		assert.equal(first(workers, "remove a worker"), "edge/delete_worker");
	});

	test("a server's name in the query is a hint about where to look, not a thing the tool must be about", () => {
		const sources = [
			{
				server: "acme",
				tools: [tool("acme-list-contacts", "List Acme contacts."), tool("acme-create-contact", "Create a contact in Acme.")],
			},
			{ server: "mail", tools: [tool("send_email", "Send an email.")] },
		];
		assert.equal(first(sources, "email an acme contact"), "mail/send_email");
		// Alone with another word, the hint still picks its server's tool.
		assert.equal(first(sources, "acme contacts"), "acme/acme-list-contacts");
	});

	test("a misspelled general word the index does not hold is corrected, then its synonyms searched", () => {
		const sources = [{ server: "users", tools: [tool("add_user", "Adds a user."), tool("remove_user", "Removes a user.")] }];
		assert.equal(first(sources, "delte user"), "users/remove_user");
		assert.equal(first(sources, "delete user"), "users/remove_user");
	});

	test("the fallback adds 20–40 related names when the match is weak, none when it is confident", async () => {
		const many = Array.from({ length: 100 }, (_, i) => tool(`gadget_${String(i).padStart(3, "0")}`, `Gadget number ${i}.`));
		const sources = [{ server: "box", tools: [...many, tool("send_email", "Send an email.")] }];
		const text = async (query: string) => {
			const listing = await rankedListing(sources, query, { action: "tools", query }, true);
			return [listing.header, ...listing.lines].join("\n");
		};
		const weak = await text("frobnicate the widgets");
		const names =
			weak
				.split("\n")
				.at(-1)
				?.replace(/ … \(.*$/, "")
				.split(" ") ?? [];
		assert.ok(names.length >= MIN_NAMES && names.length <= MAX_NAMES, `${names.length} names:\n${weak}`);
		const confident = await text("send an email");
		assert.doesNotMatch(confident, /^(Weak match|Tools by name)/m, confident);
		assert.equal(confident.split("\n").length, 2, confident);
	});
});

test("overlapping searches under Pi's own loader (jiti, no module cache) all get the search modules whole", async () => {
	// A second import() of a module jiti is still loading can see it half made: a re-exported name read as
	// undefined ("reading 'indexOf'") when the manager's search ran at each key. listing.ts imports it once.
	const fromPi = createRequire(fileURLToPath(import.meta.resolve("@earendil-works/pi-coding-agent")));
	const { createJiti } = fromPi("jiti") as typeof import("jiti");
	const jiti = createJiti(import.meta.url, { moduleCache: false });
	const listing = await jiti.import<typeof import("../src/catalog/listing.ts")>(
		fileURLToPath(new URL("../src/catalog/listing.ts", import.meta.url)),
	);
	const tools = CATALOG.slice(0, 40);
	const session = { runtime: { tools: async () => tools } } as unknown as Parameters<typeof listing.matchingTools>[0];
	const queries = ["w", "wi", "wid", "wide", "read", "read a file"];
	const found = await Promise.allSettled(queries.map((query) => listing.matchingTools(session, "s", query)));
	assert.deepEqual(
		found.map((each) => (each.status === "fulfilled" ? "ok" : String(each.reason))),
		queries.map(() => "ok"),
	);
});
