/**
 * The fast tier's rule, checked on its own files: no child process, no Pi, no real server, no real sleep.
 * A fast test file (and every test helper it reaches) imports none of `node:child_process`, the Pi and
 * fixture-server helpers or `node:timers/promises`; timing goes through `node:test`'s mock timers. At run
 * time tests/helpers/no-spawn.mjs makes any spawn fail (scripts/test.mjs preloads it for the fast tier).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const tests = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const FORBIDDEN_MODULES = ["node:child_process", "child_process", "node:timers/promises", "timers/promises"];
/** Helpers that start Pi, a fixture server or a session over real transports. */
const FORBIDDEN_HELPERS = ["pi", "spawn", "rpc", "tmux", "processes", "servers", "session"].map((name) =>
	join(tests, "helpers", `${name}.ts`),
);

const importsOf = (path: string) =>
	[
		...readFileSync(path, "utf8").matchAll(
			/^\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm,
		),
	].map((match) => match[1] ?? match[2] ?? "");

/** What `file` reaches that the fast tier forbids, following relative imports inside tests/ (src/ is the product). */
function forbiddenFrom(file: string): string[] {
	const found: string[] = [];
	const seen = new Set<string>();
	const visit = (path: string, via: string) => {
		if (seen.has(path)) return;
		seen.add(path);
		for (const specifier of importsOf(path)) {
			if (FORBIDDEN_MODULES.includes(specifier)) found.push(`${via} imports ${specifier}`);
			if (!specifier.startsWith(".")) continue;
			const target = resolve(dirname(path), specifier);
			if (!target.startsWith(tests)) continue;
			if (FORBIDDEN_HELPERS.includes(target)) found.push(`${via} imports ${relative(tests, target)}`);
			else if (/\.(ts|mjs)$/.test(target)) visit(target, relative(tests, target));
		}
	};
	visit(file, relative(tests, file));
	return found;
}

test("no fast test file reaches a child process, Pi, a fixture server or a real sleep", () => {
	const files = readdirSync(join(tests, "fast")).filter((file) => file.endsWith(".test.ts"));
	assert.ok(files.length > 10, "the fast tier's files are found");
	const found = files.flatMap((file) => forbiddenFrom(join(tests, "fast", file)));
	assert.deepEqual(found, []);
});

test("the check finds what it forbids", () => {
	const found = [...forbiddenFrom(join(tests, "prompts.test.ts")), ...forbiddenFrom(join(tests, "fixtures", "startup.mjs"))];
	assert.ok(found.includes("prompts.test.ts imports node:child_process"), found.join("\n"));
	assert.ok(found.includes("prompts.test.ts imports helpers/pi.ts"), found.join("\n"));
	assert.ok(found.includes("fixtures/startup.mjs imports node:timers/promises"), found.join("\n"));
});
