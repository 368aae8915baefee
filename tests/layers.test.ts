/**
 * The shape of src/ (#16, #46): each room (a seed module with the folder of the same name beside it, or a
 * folder of its own, or a shared file; a subfolder is a room of its own: `tool/early/`)
 * sits on one of five declared floors and imports only rooms on its own floor or below (imports counted:
 * type-only, lazy `import()` and re-exports included); no cycle between rooms or between files; no chain
 * of rooms taller than five; no file passes 400 lines, no function ~100 (`installMcp` 60).
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { test } from "node:test";
import ts from "typescript";

const SRC = new URL("../src/", import.meta.url).pathname;
const MAX_FLOORS = 5;
const MAX_LINES = 400;
const MAX_FUNCTION_LINES = 100;
const MAX_INSTALL_LINES = 60;

/**
 * The rooms of src/ by floor (0 is the ground): a room may import only rooms on its floor or below.
 * `auth` is `auth.ts` with `auth/`, `tool/early` the folder `tool/early/`, and so on; the
 * shared helpers are rooms of one file each.
 */
const FLOORS: Readonly<Record<string, number>> = {
	async: 0,
	errors: 0,
	output: 0,
	proc: 0,
	schema: 0,
	search: 0,
	config: 1,
	pins: 1,
	login: 1,
	render: 1,
	sdk: 1,
	store: 1,
	contracts: 2,
	auth: 3,
	catalog: 3,
	runtime: 3,
	tool: 3,
	"tool/early": 3,
	cli: 4,
	index: 4,
	manager: 4,
	session: 4,
};

/** Every relative `.ts` a file names: `import … from`, `export … from`, `import("…")` and `typeof import("…")`. */
function importsOf(text: string, self: string, files: ReadonlySet<string>): readonly string[] {
	const named = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)"(\.{1,2}\/[\w./-]+\.ts)"/gm)].map((match) =>
		posix.normalize(posix.join(posix.dirname(self), match[1] ?? "")),
	);
	return [...new Set(named)].filter((file) => file !== self && files.has(file));
}

const sources = (): readonly string[] =>
	readdirSync(SRC, { recursive: true })
		.map(String)
		.filter((file) => file.endsWith(".ts"))
		.sort();

function graph(): ReadonlyMap<string, readonly string[]> {
	const files = sources();
	const known = new Set(files);
	return new Map(files.map((file) => [file, importsOf(readFileSync(join(SRC, file), "utf8"), file, known)]));
}

/** The folders of src/ (`auth`, `tool/early`…): each is a room, with the file of the same name beside it. */
const foldersOf = (files: readonly string[]): ReadonlySet<string> =>
	new Set(files.map((file) => posix.dirname(file)).filter((folder) => folder !== "."));

/** The room a file of src/ belongs to: the folder of its name (`auth.ts`), else its folder, else its name. */
function roomOf(file: string, folders: ReadonlySet<string>): string {
	const name = file.replace(/(\.lazy)?\.ts$/, "");
	if (folders.has(name)) return name;
	const folder = posix.dirname(file);
	return folder === "." ? name : folder;
}

/** The longest chain from each file down (in files), or the cycle met on the way. */
function floors(
	edges: ReadonlyMap<string, readonly string[]>,
): Readonly<{ floor: Map<string, number>; chain: Map<string, string[]>; cycle?: string[] }> {
	const floor = new Map<string, number>();
	const chain = new Map<string, string[]>();
	const visiting: string[] = [];
	const found: { cycle?: string[] } = {};
	const visit = (file: string): number => {
		const known = floor.get(file);
		if (known !== undefined) return known;
		if (visiting.includes(file)) {
			found.cycle ??= [...visiting.slice(visiting.indexOf(file)), file];
			return 0;
		}
		visiting.push(file);
		const below = (edges.get(file) ?? []).map((next) => ({ next, depth: visit(next) }));
		visiting.pop();
		const deepest = below.reduce<{ next?: string; depth: number }>((best, item) => (item.depth > best.depth ? item : best), {
			depth: 0,
		});
		floor.set(file, deepest.depth + 1);
		chain.set(file, [file, ...(deepest.next ? (chain.get(deepest.next) ?? []) : [])]);
		return deepest.depth + 1;
	};
	for (const file of edges.keys()) visit(file);
	return { floor, chain, cycle: found.cycle };
}

test("src/ files import with no cycle", () => {
	const edges = graph();
	assert.ok(edges.size > 20, `read the modules of src/ (${edges.size})`);
	assert.ok(
		[...edges.keys()].some((file) => file.includes("/")) && [...edges.values()].some((imports) => imports.length > 0),
		"the import reader finds files in folders, and imports",
	);
	const { cycle } = floors(edges);
	assert.equal(cycle, undefined, `an import cycle: ${cycle?.join(" → ")}`);
});

test("each room imports only rooms on its own floor or below, and the rooms form no cycle", () => {
	const edges = graph();
	const folders = foldersOf([...edges.keys()]);
	const inRoom = (file: string) => roomOf(file, folders);
	const rooms = new Set([...edges.keys()].map(inRoom));
	assert.deepEqual(
		[...rooms].filter((room) => FLOORS[room] === undefined),
		[],
		"every room of src/ has a floor in FLOORS",
	);
	const upward: string[] = [];
	const roomEdges = new Map<string, Set<string>>();
	for (const [file, imports] of edges) {
		for (const target of imports) {
			const [from, to] = [inRoom(file), inRoom(target)];
			if (from === to) continue;
			if ((FLOORS[to] ?? 0) > (FLOORS[from] ?? 0)) upward.push(`${file} → ${target}`);
			roomEdges.set(from, new Set([...(roomEdges.get(from) ?? []), to]));
		}
	}
	assert.deepEqual(upward, [], "imports that go up a floor");
	const { floor, chain, cycle } = floors(new Map([...roomEdges].map(([room, to]) => [room, [...to]])));
	assert.equal(cycle, undefined, `rooms in a cycle: ${cycle?.join(" → ")}`);
	assert.ok(Math.max(...Object.values(FLOORS)) < MAX_FLOORS, "at most five declared floors");
	const tallest = [...floor.entries()].sort((a, b) => b[1] - a[1])[0] ?? ["", 0];
	assert.ok(tallest[1] <= MAX_FLOORS, `${tallest[1]} floors of rooms: ${chain.get(tallest[0])?.join(" → ")}`);
});

/** The three faces word what the core (`catalog`) computes; none imports another. */
const FACES = ["tool", "manager", "cli"];

/** The top-level room a file belongs to (`tool/early/start.ts` is in `tool`): a face with its subfolders. */
const faceOf = (file: string) => (file.split("/")[0] ?? "").replace(/(\.lazy)?\.ts$/, "");

test("the faces (the model's tool, the manager, the shell) import nothing from one another", () => {
	const crossing = [...graph()].flatMap(([file, imports]) =>
		imports
			.filter((target) => FACES.includes(faceOf(file)) && FACES.includes(faceOf(target)) && faceOf(file) !== faceOf(target))
			.map((target) => `${file} → ${target}`),
	);
	assert.deepEqual(crossing, [], "imports from one face into another");
});

test("the floor count sees type-only, lazy and re-exported imports, in folders (the reader can fail)", () => {
	const files = new Set(["a.ts", "b/x.ts", "c.ts", "d/y.ts"]);
	const text = [
		'import type { A } from "../a.ts";',
		'export { B } from "./x.ts";',
		'const c = () => import("../c.ts");',
		'type D = typeof import("../d/y.ts");',
		'import { x } from "node:fs";',
	].join("\n");
	assert.deepEqual([...importsOf(text, "b/self.ts", files)].sort(), ["a.ts", "b/x.ts", "c.ts", "d/y.ts"]);
	const folders = foldersOf(["auth.ts", "auth/record.ts", "sdk.lazy.ts", "tool/x.ts", "tool/early.ts", "tool/early/start.ts"]);
	assert.equal(roomOf("auth/record.ts", folders), "auth");
	assert.equal(roomOf("auth.ts", folders), "auth");
	assert.equal(roomOf("sdk.lazy.ts", folders), "sdk");
	assert.equal(roomOf("tool/x.ts", folders), "tool");
	assert.equal(roomOf("tool/early.ts", folders), "tool/early");
	assert.equal(roomOf("tool/early/start.ts", folders), "tool/early");
	const cyclic = floors(
		new Map([
			["a.ts", ["b.ts"]],
			["b.ts", ["a.ts"]],
		]),
	);
	assert.deepEqual(cyclic.cycle, ["a.ts", "b.ts", "a.ts"]);
	const tall = floors(
		new Map([
			["a.ts", ["b.ts", "c.ts"]],
			["b.ts", ["c.ts"]],
			["c.ts", []],
		]),
	);
	assert.equal(tall.floor.get("a.ts"), 3);
});

test(`no file of src/ is longer than ${MAX_LINES} lines`, () => {
	const long = sources()
		.map((file) => ({ file, lines: readFileSync(join(SRC, file), "utf8").split("\n").length - 1 }))
		.filter((entry) => entry.lines > MAX_LINES);
	assert.deepEqual(long, []);
});

/** Every function of a source text with its name and length in lines. */
function functionsOf(file: string, text: string): readonly Readonly<{ name: string; lines: number }>[] {
	const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
	const found: { name: string; lines: number }[] = [];
	const visit = (node: ts.Node) => {
		if (ts.isFunctionLike(node) && "body" in node && node.body) {
			const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
			const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
			const parent = node.parent;
			const name =
				node.name?.getText(source) ??
				(parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) ? parent.name.getText(source) : "");
			found.push({ name: `${file}:${first + 1} ${name || "(anonymous)"}`, lines: last - first + 1 });
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return found;
}

test(`no function of src/ is longer than ${MAX_FUNCTION_LINES} lines, installMcp ${MAX_INSTALL_LINES}`, () => {
	const all = sources().flatMap((file) => functionsOf(file, readFileSync(join(SRC, file), "utf8")));
	assert.ok(all.length > 100, "the reader finds the functions");
	assert.deepEqual(
		all.filter((fn) => fn.lines > MAX_FUNCTION_LINES).map((fn) => `${fn.name}: ${fn.lines} lines`),
		[],
	);
	const install = all.find((fn) => fn.name.startsWith("index.ts:") && fn.name.endsWith(" installMcp"));
	assert.ok(install, "installMcp is found in src/index.ts");
	assert.ok(install.lines <= MAX_INSTALL_LINES, `installMcp is ${install.lines} lines`);
	const long = functionsOf("x.ts", `function f() {\n${"\tf();\n".repeat(120)}}`);
	assert.equal(long[0]?.lines, 122, "the counter can fail");
});

/** The `.ts` files a source text's comments name (`// …` and `/* … *\/`), as written. */
function commentNames(file: string, text: string): readonly string[] {
	const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
	const comments = new Set<string>();
	const visit = (node: ts.Node) => {
		for (const range of [
			...(ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []),
			...(ts.getTrailingCommentRanges(text, node.getEnd()) ?? []),
		]) {
			comments.add(text.slice(range.pos, range.end));
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return [...comments].flatMap((comment) => [...comment.matchAll(/[\w./*-]*\w\.ts\b/g)].map((match) => match[0]));
}

/** Whether a name a comment gives is a file: from src/, from the file's folder, the root, or a file's own name. */
function names(file: string, name: string, files: readonly string[]): boolean {
	if (name.includes("*")) return true; // A pattern (`*.lazy.ts`), not a file.
	const candidates = [name, posix.join(posix.dirname(file), name), posix.normalize(name.replace(/^src\//, ""))];
	if (candidates.some((path) => files.includes(path))) return true;
	if (existsSync(join(SRC, "..", name))) return true; // From the package root: index.ts, tests/…, bench/….
	return !name.includes("/") && files.some((path) => posix.basename(path) === name);
}

test("no comment in src/ names a .ts file that does not exist", () => {
	const files = sources();
	const missing = files.flatMap((file) =>
		commentNames(file, readFileSync(join(SRC, file), "utf8"))
			.filter((name) => !names(file, name, files))
			.map((name) => `${file}: ${name}`),
	);
	assert.deepEqual(missing, []);
	assert.deepEqual(commentNames("x.ts", "/** see `gone.ts` and runtime/open.ts */\nconst a = 1; // and b.ts\n"), [
		"gone.ts",
		"runtime/open.ts",
		"b.ts",
	]);
	assert.equal(names("x.ts", "gone.ts", files), false, "the check can fail");
});
