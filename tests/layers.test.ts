/**
 * The shape of src/ (#12): imports flow downward in at most five floors (the longest import chain,
 * type-only and lazy `import()` included), with no cycle, and no file longer than 400 lines.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

const SRC = new URL("../src/", import.meta.url).pathname;
const MAX_FLOORS = 5;
const MAX_LINES = 400;

/** Every `./x.ts` a file names: `import … from`, `export … from`, `import("…")` and `typeof import("…")`. */
function importsOf(text: string, self: string, files: ReadonlySet<string>): readonly string[] {
	const named = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)"\.\/([\w.-]+\.ts)"/gm)].map(
		(match) => match[1] ?? "",
	);
	return [...new Set(named)].filter((file) => file !== self && files.has(file));
}

function graph(): ReadonlyMap<string, readonly string[]> {
	const files = readdirSync(SRC).filter((file) => file.endsWith(".ts"));
	const known = new Set(files);
	return new Map(files.map((file) => [file, importsOf(readFileSync(join(SRC, file), "utf8"), file, known)]));
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

test("src/ imports flow downward in at most five floors, with no cycle", () => {
	const edges = graph();
	assert.ok(edges.size > 20, `read the modules of src/ (${edges.size})`);
	assert.ok(
		[...edges.values()].some((imports) => imports.length > 0),
		"the import reader finds imports",
	);
	const { floor, chain, cycle } = floors(edges);
	assert.equal(cycle, undefined, `an import cycle: ${cycle?.join(" → ")}`);
	const tallest = [...floor.entries()].sort((a, b) => b[1] - a[1])[0] ?? ["", 0];
	assert.ok(tallest[1] <= MAX_FLOORS, `${tallest[1]} floors: ${chain.get(tallest[0])?.join(" → ")}`);
});

test("the floor count sees type-only, lazy and re-exported imports (the reader can fail)", () => {
	const files = new Set(["a.ts", "b.ts", "c.ts", "d.ts"]);
	const text = [
		'import type { A } from "./a.ts";',
		'export { B } from "./b.ts";',
		'const c = () => import("./c.ts");',
		'type D = typeof import("./d.ts");',
		'import { x } from "node:fs";',
	].join("\n");
	assert.deepEqual([...importsOf(text, "self.ts", files)].sort(), ["a.ts", "b.ts", "c.ts", "d.ts"]);
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
	const long = readdirSync(SRC)
		.filter((file) => file.endsWith(".ts"))
		.map((file) => ({ file, lines: readFileSync(join(SRC, file), "utf8").split("\n").length - 1 }))
		.filter((entry) => entry.lines > MAX_LINES);
	assert.deepEqual(long, []);
});
