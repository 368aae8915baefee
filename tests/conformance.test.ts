/**
 * The official MCP conformance suite (client side) against pi-mcp's own runtime, auth and login
 * modules, through scripts/conformance.mjs, on both lines: 0.1.16 and the 0.2.0 alpha. Every
 * in-scope scenario must pass on both; on the 2026-07-28 requirement list everything passes but the
 * one scenario pi-mcp excludes by design (its input request is an elicitation). The scenarios testing
 * what pi-mcp deliberately leaves out are listed in the script, each with its reason.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";

const ROOT = new URL("..", import.meta.url).pathname;
const SCRIPT = new URL("../scripts/conformance.mjs", import.meta.url).pathname;
const COUNTS = /: (\d+) passed, (\d+) failed, (\d+) expected failures, (\d+) not applicable/;

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

/** The counts on the summary line starting with `label`. */
function counts(output: string, label: RegExp): { passed: number; failed: number; expected: number; na: number } {
	const line = output.split("\n").find((candidate) => label.test(candidate));
	const match = line?.match(COUNTS);
	assert.ok(match, `no summary line ${label}:\n${output}`);
	const [passed, failed, expected, na] = match.slice(1).map(Number) as [number, number, number, number];
	return { passed, failed, expected, na };
}

// Both lines, eight scenarios at a time (client and CLIs bundled once): about 100 s of CPU, so ~50 s on two
// quiet cores, ~2 min on busy ones.
test("conformance suite: every in-scope client scenario passes on both lines", { timeout: 900_000 }, async (t) => {
	const { code, output } = await run();
	t.diagnostic(output.trimEnd());
	const total = counts(output, /^conformance: /);
	assert.equal(total.failed, 0, `in-scope scenarios failed:\n${output}`);
	assert.equal(code, 0, output);

	const old = counts(output, /^conformance 0\.1\.16, all \d+:/);
	assert.ok(old.passed >= 22, `0.1.16: ${JSON.stringify(old)}`);
	const next = counts(output, /^conformance 0\.2\.\S+, all \d+:/);
	assert.ok(next.passed >= 39, `0.2: ${JSON.stringify(next)}`);
	// The four skills scenarios (an extension neither pi-mcp nor the SDK client has) only skip.
	assert.equal(next.na, 4, `0.2: ${JSON.stringify(next)}`);

	const required = counts(output, /^conformance 0\.2\.\S+, the \d+ scenarios 2026-07-28 requires:/);
	assert.deepEqual(required, { passed: 31, failed: 0, expected: 1, na: 0 }, "all of 2026-07-28 but sep-2322");
	assert.match(output, /^- sep-2322-client-request-state: expected failure: its input request is an elicitation/m);
	assert.match(output, /^✓ auth\/dpop \(/m);
	assert.match(output, /^✓ auth\/dpop-nonce \(/m);
});
