/**
 * Smoke run of the benchmarks (issue 7): every figure once with tiny sizes, so the bench cannot rot. It is
 * not part of `npm test` (it measures nothing about pi-mcp and takes a minute and a half); CI runs it apart,
 * `npm run bench:smoke`. It checks that each figure line is printed and that RESULTS goes where it is told;
 * it asserts nothing about speed (timing belongs to `npm run bench`, never to tests).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

const FIGURE_LINES = [
	/^1 start-up tax: .+ \(baseline an empty extension .+ wall ratio .+, CPU time .+ ms over it .+\) · target /m,
	/^1 start-up peers: /m,
	/^2 cold call legacy: .+ \(baseline raw SDK .+, ratio .+\) · target /m,
	/^2 cold call auto vs pinned, fixture \(modern\): .+ \(baseline pinned to 2026-07-28 .+; ratio .+\) · target /m,
	/^2 cold call auto vs pinned, a 1.5 s start \(modern\): .+ · target /m,
	/^2 cold call auto vs pinned, server-everything \(legacy\): .+ · target /m,
	/^2 cold call auto vs pinned, server-everything through npx \(legacy\): .+ · target /m,
	/^2 cold call Pi end-to-end legacy: .+ · target /m,
	/^2 cold call Pi end-to-end auto: .+ · target /m,
	/^3 warm \d+ sequential \(legacy\): .+ \(baseline raw SDK .+, ratio .+\) · target /m,
	/^3 warm \d+ concurrent \(legacy\): .+ \(baseline raw SDK .+, ratio .+\) · target /m,
	/^3 warm \d+ sequential \(modern\): .+ · target /m,
	/^3 warm \d+ concurrent \(modern\): .+ · target /m,
	/^4 \d+ MiB result through output\.ts: .+ \(baseline regex scan \+ fs\.writeFile .+, ratio .+\) · target /m,
	/^4 \d+ MiB result peak RSS: .+ · target /m,
	/^5 context cost: \d+ tokens .+ \(baselines: Pi built-in direct \d+, built-in codemode \d+, pi-mcp-adapter \d+; .+\) · target /m,
	/^6 coalescing legacy: 16 concurrent first calls → .+ · target /m,
	/^6 coalescing auto: 16 concurrent first calls → .+ · target /m,
	/^7 discovery held-out top-3: \d\.\d\d of \d+ queries .+ \(baselines top-3: Pi 1\.6 Bm25Ranker \d\.\d\d, pi-mcp-adapter \d\.\d\d, .+\) · target /m,
	/^7 discovery tuning top-3: .+ · target /m,
	/^7 discovery query on a \d+-tool server: .+ ms median.+ · target /m,
	/^8 first-call wait legacy: cold .+, warm .+ \(baseline built-in direct cold .+, ratio .+; peers that start nothing at start-up, cold: .+\) · target /m,
	/^8 first-call wait auto: cold .+, warm .+ \(baseline built-in direct cold .+, ratio .+; peers that start nothing at start-up, cold: .+\) · target /m,
	/^9 launch to first result, 1 server: pi-mcp .+ \(peers: .+\) · target /m,
	/^9 launch to first result, \d+ servers: pi-mcp .+ \(peers: .+\) · target /m,
	/^10 server first call, fixture: first .+, later .+ \(ratio .+\) · target /m,
];

test("the bench runs every figure once (BENCH_SMOKE=1) and writes RESULTS where it is told", { timeout: 900_000 }, async () => {
	const dir = await mkdtemp(join(tmpdir(), "pi-mcp-bench-smoke-"));
	const results = join(dir, "RESULTS.md");
	try {
		const before = await readFile(join(ROOT, "bench", "RESULTS.md"), "utf8").catch(() => undefined);
		const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "bench", "run.ts")], {
			cwd: ROOT,
			env: { ...process.env, NODE_OPTIONS: "", BENCH_SMOKE: "1", BENCH_RESULTS: results },
			stdio: ["ignore", "pipe", "pipe"],
		});
		const out: string[] = [];
		const err: string[] = [];
		child.stdout.setEncoding("utf8").on("data", (chunk: string) => out.push(chunk));
		child.stderr.setEncoding("utf8").on("data", (chunk: string) => err.push(chunk));
		const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
		const stdout = out.join("");
		assert.equal(code, 0, `bench exited with ${code}\n${stdout}\n${err.join("").slice(-4000)}`);
		for (const line of FIGURE_LINES) assert.match(stdout, line);
		const written = await readFile(results, "utf8");
		assert.match(written, /^# pi-mcp benchmarks/m);
		assert.match(written, /SMOKE mode/);
		assert.match(written, /- Machine: .+cores, .+ GiB memory/);
		assert.match(written, /- Node: v\d+/);
		assert.match(written, /- Pi: \d+\.\d+\.\d+/);
		assert.match(written, /- @modelcontextprotocol\/client: \d+\.\d+\.\d+/);
		for (const line of FIGURE_LINES) assert.match(written, line);
		// The committed results are left alone.
		assert.equal(await readFile(join(ROOT, "bench", "RESULTS.md"), "utf8").catch(() => undefined), before);
	} finally {
		await rm(dir, { recursive: true, force: true });
	}
});
