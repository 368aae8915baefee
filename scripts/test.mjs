#!/usr/bin/env node
// Runs the suite with explicit file paths and bounded concurrency (see below): both tiers, or with
// `--fast` only the fast tier (tests/fast/: in-memory transports, no child process, no Pi).
// Usage: npm test [-- file ...]   npm run test:fast [-- file ...]
import { spawn } from "node:child_process";
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
// In the real tier the longest files start first (conformance: a minute on both cores; the others 30-50 s on
// a loaded machine), so the short ones fill the cores beside them rather than one long file running alone at
// the end (user-tui, last by name, did).
const LONGEST = ["conformance", "early", "user-tui", "early-bounds", "extension", "manager"].map((name) =>
	join("tests", `${name}.test.ts`),
);
const rank = (file) => (LONGEST.includes(file) ? LONGEST.indexOf(file) : LONGEST.length);
const real = () => testsIn("tests").sort((a, b) => rank(a) - rank(b));
const files = given.length > 0 ? given : fast ? testsIn("tests/fast") : [...testsIn("tests/fast"), ...real()];
const isFast = (file) => /(^|\/)tests\/fast\//.test(file);
const env = { ...process.env, NODE_OPTIONS: "" };
const node = [process.execPath, "--import", "tsx"];

// The fast tier runs in ONE process (`--experimental-test-isolation=none`): its files load the same modules,
// and loading them once per file was most of its time (37 processes: 24 s and 46 s of CPU; one: 13 s and 14 s).
// The sources keep no module-level state (scripts/module-state.mjs), so the files cannot see one another.
// Every spawn fails there (tests/helpers/no-spawn.mjs): a child process in the fast tier is a bug.
const fastFiles = files.filter(isFast);
const fastRun = [
	...node,
	"--import",
	join(root, "tests", "helpers", "no-spawn.mjs"),
	"--test",
	"--experimental-test-isolation=none",
	"--test-reporter=spec",
	...fastFiles,
];
// The real tier: three files at once on two cores, each in its own process. A real-tier file waits on servers,
// Pi, tmux and the keyring often enough that two left a core idle (whole suite 273 s at 2, 224-264 s at 3); 4 is
// no faster (223-255 s) and loads the machine more. TEST_CONCURRENCY=n overrides it (1 on a busy machine).
const realFiles = files.filter((file) => !isFast(file));
const realRun = [
	...node,
	"--test",
	`--test-concurrency=${process.env.TEST_CONCURRENCY ?? 3}`,
	"--test-reporter=spec",
	...realFiles,
];
// The keyring tests (real tier) need a real Secret Service. Without a session bus, the real tier runs inside a
// private D-Bus session with a throw-away unlocked gnome-keyring (installed with apt if missing).
const needsKeyring = process.platform === "linux" && !process.env.DBUS_SESSION_BUS_ADDRESS;
const withKeyring = (run) => (needsKeyring ? ["bash", join(root, "scripts", "with-keyring.sh"), ...run] : run);

/** Runs `argv`, its output straight through; resolves to its exit status. */
function run(argv) {
	const [command, ...args] = argv;
	const child = spawn(command, args, { cwd: root, env, stdio: "inherit" });
	return new Promise((resolve) => {
		child.once("error", (error) => {
			console.error(`test: cannot start ${command}: ${error.message}`);
			resolve(1);
		});
		child.once("close", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
	});
}

// The fast tier first: a broken piece of logic shows in seconds, before the real tier's minutes. Not beside the
// real tier: that saved ~10 s more but loaded the machine enough to fail load-bound real tests (a keyring daemon
// crash, a 5 s schema compile) in one run of two.
const fastCode = fastFiles.length > 0 ? await run(fastRun) : 0;
const realCode = realFiles.length > 0 ? await run(withKeyring(realRun)) : 0;
process.exit(fastCode || realCode);
