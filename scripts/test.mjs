#!/usr/bin/env node
// Runs the suite with explicit file paths and bounded concurrency (see below): both tiers, or with
// `--fast` only the fast tier (tests/fast/: in-memory transports, no child process, no Pi).
// Usage: npm test [-- file ...]   npm run test:fast [-- file ...]
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const fast = process.argv[2] === "--fast";
const given = process.argv.slice(fast ? 3 : 2);
const testsIn = (dir) =>
	readdirSync(join(root, dir))
		.filter((file) => file.endsWith(".test.ts"))
		.sort()
		.map((file) => join(dir, file));
// The fast tier first: a broken piece of logic shows in seconds, before the real tier's minutes. In the real
// tier, conformance (a minute, both cores) starts first, so the short files fill the cores beside it rather
// than all waiting for it at the end.
const LONGEST = join("tests", "conformance.test.ts");
const real = () => testsIn("tests").sort((a, b) => Number(b === LONGEST) - Number(a === LONGEST));
const files = given.length > 0 ? given : fast ? testsIn("tests/fast") : [...testsIn("tests/fast"), ...real()];
// The fast tier's files run with every spawn failing (tests/helpers/no-spawn.mjs): a child process there is a bug.
const allFast = files.every((file) => /(^|\/)tests\/fast\//.test(file));
const noSpawn = allFast ? ["--import", join(root, "tests", "helpers", "no-spawn.mjs")] : [];
const runner = [
	process.execPath,
	"--import",
	"tsx",
	...noSpawn,
	"--test",
	// Three files at once on two cores: a real-tier file waits on servers, Pi, tmux and the keyring often
	// enough that two left a core idle (whole suite 273 s at 2, 242 s at 3; 4 was slower again, 252 s).
	// TEST_CONCURRENCY=n overrides it (1 on a machine busy with other work).
	`--test-concurrency=${process.env.TEST_CONCURRENCY ?? 3}`,
	"--test-reporter=spec",
	...files,
];
// The keyring tests (real tier) need a real Secret Service. Without a session bus, the suite runs inside a
// private D-Bus session with a throw-away unlocked gnome-keyring (installed with apt if missing).
const needsKeyring = !fast && process.platform === "linux" && !process.env.DBUS_SESSION_BUS_ADDRESS;
const [command, ...args] = needsKeyring ? ["bash", join(root, "scripts", "with-keyring.sh"), ...runner] : runner;
const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env: { ...process.env, NODE_OPTIONS: "" } });
process.exit(result.status ?? 1);
