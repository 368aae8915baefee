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
const runner = [process.execPath, "--import", "tsx", "--test", "--test-concurrency=2", "--test-reporter=spec", ...files];
// The keyring tests need a real Secret Service. Without a session bus, the suite runs inside a
// private D-Bus session with a throw-away unlocked gnome-keyring (installed with apt if missing).
const needsKeyring = process.platform === "linux" && !process.env.DBUS_SESSION_BUS_ADDRESS;
const [command, ...args] = needsKeyring ? ["bash", join(root, "scripts", "with-keyring.sh"), ...runner] : runner;
const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env: { ...process.env, NODE_OPTIONS: "" } });
process.exit(result.status ?? 1);
