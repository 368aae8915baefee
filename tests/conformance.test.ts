/**
 * The official MCP conformance suite (client side, suite "all") against pi-mcp's own runtime, auth
 * and login modules, through scripts/conformance.mjs: every in-scope scenario must pass; the
 * scenarios testing what pi-mcp deliberately leaves out are listed there and in docs/package.md.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";

const ROOT = new URL("..", import.meta.url).pathname;
const SCRIPT = new URL("../scripts/conformance.mjs", import.meta.url).pathname;

function run(): Promise<{ code: number | null; output: string }> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [SCRIPT], {
			cwd: ROOT,
			env: { ...process.env, NODE_OPTIONS: "" },
			stdio: ["ignore", "pipe", "pipe"],
		});
		const chunks: Buffer[] = [];
		child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
		child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
		child.once("error", reject);
		child.once("close", (code) => resolve({ code, output: Buffer.concat(chunks).toString("utf8") }));
	});
}

test("conformance suite: every in-scope client scenario passes", { timeout: 300_000 }, async (t) => {
	const { code, output } = await run();
	t.diagnostic(output.trimEnd());
	const totals = output
		.trimEnd()
		.split("\n")
		.at(-1)
		?.match(/^conformance: (\d+) passed, (\d+) failed(?:, (\d+) expected failures)?$/);
	assert.ok(totals, `the totals line is missing:\n${output}`);
	assert.equal(Number(totals[2]), 0, `in-scope scenarios failed:\n${output}`);
	assert.ok(Number(totals[1]) > 0, "no scenario passed");
	assert.equal(code, 0, output);
});
