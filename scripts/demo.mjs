#!/usr/bin/env node
// `npm run demo`: the real Pi CLI, headless (JSON mode), offline, with pi-ai's scripted faux model
// (a test-only extension, never part of the product) using the `mcp` tool on the bundled example
// server. Prints a readable transcript. Everything runs in a throw-away agent directory.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
	console.error(`pi-mcp demo: Pi 1.6 needs Node >= 22.19 (this is ${process.version}).`);
	process.exit(1);
}

const root = new URL("..", import.meta.url).pathname;
const piDir = join(root, "node_modules", "@earendil-works", "pi-coding-agent");
const bin = JSON.parse(readFileSync(join(piDir, "package.json"), "utf8")).bin;
const cli = join(piDir, typeof bin === "string" ? bin : bin.pi);

const sandbox = mkdtempSync(join(tmpdir(), "pi-mcp-demo-"));
const agentDir = join(sandbox, "agent");
const cwd = join(sandbox, "project");
mkdirSync(agentDir);
mkdirSync(cwd);
const script = join(sandbox, "script.json");
writeFileSync(
	script,
	JSON.stringify([
		{ tool: "mcp", args: { action: "status" } },
		{ tool: "mcp", args: { action: "tools", server: "example" } },
		{ tool: "mcp", args: { action: "describe", server: "example", tool: "slugify" } },
		{ tool: "mcp", args: { action: "call", server: "example", tool: "slugify", args: { title: "Héllo, MCP from Pi!" } } },
		{
			tool: "mcp",
			args: { action: "call", server: "example", tool: "word_count", args: { text: "one small step\nfor an agent" } },
		},
		{ text: "The example server turned the title into a slug and counted the words: {{last}}" },
	]),
);

const prompt = "Show me what the example MCP server can do.";
const child = spawn(
	process.execPath,
	[
		cli,
		"--mode",
		"json",
		"--no-session",
		"--model",
		"faux/faux-1",
		"-e",
		join(root, "tests", "fixtures", "faux.ts"),
		"-e",
		join(root, "index.ts"),
		"-e",
		join(root, "examples", "example-server.ts"),
		prompt,
	],
	{
		cwd,
		stdio: ["ignore", "pipe", "pipe"],
		env: {
			PATH: process.env.PATH ?? "",
			HOME: sandbox,
			PI_CODING_AGENT_DIR: agentDir,
			PI_OFFLINE: "1",
			PI_SKIP_VERSION_CHECK: "1",
			PI_TELEMETRY: "0",
			PI_FAUX_SCRIPT: script,
		},
	},
);

const out = [];
const err = [];
child.stdout.on("data", (chunk) => out.push(chunk));
child.stderr.on("data", (chunk) => err.push(chunk));
const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
const code = await new Promise((resolve) => child.on("close", resolve));
clearTimeout(timer);
rmSync(sandbox, { recursive: true, force: true });

const indent = (text, prefix = "    ") =>
	text
		.split("\n")
		.map((line) => prefix + line)
		.join("\n");
const textOf = (content) =>
	(Array.isArray(content) ? content : []).map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("");

console.log("pi-mcp demo: the real Pi CLI (headless, offline) with a scripted model and the bundled example server\n");
console.log(`user> ${prompt}\n`);
const events = Buffer.concat(out)
	.toString("utf8")
	.split("\n")
	.filter((line) => line.startsWith("{"))
	.map((line) => JSON.parse(line));
for (const event of events) {
	if (event.type === "tool_execution_start") {
		console.log(`tool> ${event.toolName} ${JSON.stringify(event.args)}`);
	} else if (event.type === "tool_execution_end") {
		console.log(`${indent(textOf(event.result?.content), event.isError ? "  ! " : "    ")}\n`);
	} else if (event.type === "message_end" && event.message?.role === "assistant") {
		const text = (event.message.content ?? [])
			.filter((block) => block.type === "text")
			.map((block) => block.text)
			.join("");
		if (text) console.log(`assistant> ${text}\n`);
	}
}
const stderr = Buffer.concat(err)
	.toString("utf8")
	.split("\n")
	.filter((line) => line.trim() && !/built-in extension `mcp` was not loaded/.test(line));
if (stderr.length > 0) console.log(`(pi stderr)\n${indent(stderr.join("\n"))}`);
if (code !== 0) {
	console.error(`pi exited with ${code}`);
	process.exit(1);
}
