#!/usr/bin/env node
// Runs the whole suite with explicit file paths and bounded concurrency (2 cores here).
// Usage: npm test [-- file ...]
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const given = process.argv.slice(2);
const files =
	given.length > 0
		? given
		: readdirSync(join(root, "tests"))
				.filter((file) => file.endsWith(".test.ts"))
				.sort()
				.map((file) => join("tests", file));
const result = spawnSync(
	process.execPath,
	["--import", "tsx", "--test", "--test-concurrency=2", "--test-reporter=spec", ...files],
	{ cwd: root, stdio: "inherit", env: { ...process.env, NODE_OPTIONS: "" } },
);
process.exit(result.status ?? 1);
