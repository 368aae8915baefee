/**
 * Tool search (src/search.ts): ranking over real tool definitions (the bench catalog of 273 tools
 * from 11 published servers), the index cache, and the pieces (words, stemming, edit distance).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { buildIndex, editDistance, indexOf, type SearchTool, search, stem, words } from "../src/search/rank.ts";
import { SYNONYM_GROUPS } from "../src/search/synonyms.ts";

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
