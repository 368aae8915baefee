#!/usr/bin/env node
// Interactive Pi with pi-mcp and the bundled example server. Uses your own Pi settings and model;
// extra arguments go to Pi (e.g. `npm start -- --model <provider>/<id>`).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const piDir = join(root, "node_modules", "@earendil-works", "pi-coding-agent");
const bin = JSON.parse(readFileSync(join(piDir, "package.json"), "utf8")).bin;
const cli = join(piDir, typeof bin === "string" ? bin : bin.pi);
const child = spawn(
	process.execPath,
	[cli, "-e", join(root, "index.ts"), "-e", join(root, "examples", "example-server.ts"), ...process.argv.slice(2)],
	{ stdio: "inherit" },
);
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
