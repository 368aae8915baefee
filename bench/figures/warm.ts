/**
 * Figure 3, warm calls on one connection: 1,000 sequential and 100 concurrent small `echo` calls
 * through our runtime ÷ the raw SDK's `callTool` on its own connection to the same server, same mode.
 * Both pass one AbortSignal per batch, as Pi passes one per tool execution.
 *
 * Each round opens fresh connections for both clients (so where the scheduler happens to place the
 * client/server pairs on the 2 cores varies between rounds instead of favouring one side for the whole
 * run), warms them up, then alternates the two clients chunk by chunk.
 */
import { join } from "node:path";
import type { BenchConfig, FigureResult } from "../lib/config.ts";
import { expectEcho, type Mode, oursRuntime, oursSandbox, rawClient, SERVER_NAME } from "../lib/mcp.ts";
import { formatSummary, formatValue, type Line, pairedRatios, type Summary, summarize, verdict } from "../lib/stats.ts";

const SEQUENTIAL_TARGET = 1.05;
const CONCURRENT_TARGET = 1.1;

type Key = "ours" | "raw";
type Call = (text: string, signal: AbortSignal) => Promise<void>;
type Calls = Readonly<Record<Key, Call>>;

type Batch = Readonly<{
	ours: Summary;
	raw: Summary;
	ratio: Summary;
	/** Client CPU per call (µs; the bench process's user + system time) and its paired ratio. */
	oursCpu: Summary;
	rawCpu: Summary;
	cpuRatio: Summary;
}>;

type Samples = Record<Key, { ms: number[]; cpuMs: number[] }>;

const emptySamples = (): Samples => ({ ours: { ms: [], cpuMs: [] }, raw: { ms: [], cpuMs: [] } });

async function timed(run: () => Promise<unknown>): Promise<{ ms: number; cpuMs: number }> {
	const cpu = process.cpuUsage();
	const started = performance.now();
	await run();
	const ms = performance.now() - started;
	const used = process.cpuUsage(cpu);
	return { ms, cpuMs: (used.user + used.system) / 1000 };
}

/** `n` sequential calls per client as chunks of ≤100 that alternate between the clients; one summed sample each. */
async function sequentialRound(calls: Calls, n: number, round: number, into: Samples): Promise<void> {
	const chunk = Math.max(1, Math.min(100, n));
	const sums = { ours: { ms: 0, cpuMs: 0 }, raw: { ms: 0, cpuMs: 0 } };
	const signals = { ours: new AbortController().signal, raw: new AbortController().signal };
	for (const index of Array.from({ length: Math.ceil(n / chunk) }, (_, k) => k)) {
		const order: Key[] = (index + round) % 2 === 0 ? ["ours", "raw"] : ["raw", "ours"];
		for (const key of order) {
			const result = await timed(async () => {
				for (const i of Array.from({ length: chunk }, (_, k) => index * chunk + k)) await calls[key](`s${i}`, signals[key]);
			});
			sums[key].ms += result.ms;
			sums[key].cpuMs += result.cpuMs;
		}
	}
	for (const key of ["ours", "raw"] as const) {
		into[key].ms.push(sums[key].ms);
		into[key].cpuMs.push(sums[key].cpuMs);
	}
}

/** `batches` pairs of `m`-call `Promise.all` batches, alternating which client goes first. */
async function concurrentRound(calls: Calls, m: number, batches: number, into: Samples): Promise<void> {
	for (const index of Array.from({ length: batches }, (_, k) => k)) {
		const order: Key[] = index % 2 === 0 ? ["ours", "raw"] : ["raw", "ours"];
		for (const key of order) {
			const signal = new AbortController().signal;
			const result = await timed(() => Promise.all(Array.from({ length: m }, (_, i) => calls[key](`c${i}`, signal))));
			into[key].ms.push(result.ms);
			into[key].cpuMs.push(result.cpuMs);
		}
	}
}

async function withClients(mode: Mode, warmUp: number, body: (calls: Calls) => Promise<void>): Promise<void> {
	const sandbox = await oursSandbox(mode);
	const runtime = await oursRuntime(sandbox, join(sandbox.root, "ours.wire"));
	const { client, transport } = rawClient(mode, join(sandbox.root, "raw.wire"));
	try {
		await client.connect(transport);
		await client.listTools();
		const calls: Calls = {
			ours: async (text, signal) => expectEcho(await runtime.call(SERVER_NAME, "echo", { text }, { signal }), text),
			raw: async (text, signal) =>
				expectEcho((await client.callTool({ name: "echo", arguments: { text } }, { signal })) as never, text),
		};
		// Untimed: connect ours and build its tool index, then let both JITs settle.
		const signal = new AbortController().signal;
		for (const i of Array.from({ length: warmUp }, (_, k) => k)) {
			await calls.ours(`w${i}`, signal);
			await calls.raw(`w${i}`, signal);
		}
		await body(calls);
	} finally {
		await client.close();
		await runtime.dispose();
		await sandbox.cleanup();
	}
}

function batch(samples: Samples, callsPerSample: number): Batch {
	const perCall = (values: number[]) => summarize(values.map((value) => (value / callsPerSample) * 1000));
	return {
		ours: summarize(samples.ours.ms),
		raw: summarize(samples.raw.ms),
		ratio: pairedRatios(samples.ours.ms, samples.raw.ms),
		oursCpu: perCall(samples.ours.cpuMs),
		rawCpu: perCall(samples.raw.cpuMs),
		cpuRatio: pairedRatios(samples.ours.cpuMs, samples.raw.cpuMs),
	};
}

type ModeResult = Readonly<{ sequential: Batch; concurrent: Batch; n: number; m: number; rounds: number }>;

async function warmFor(mode: Mode, config: BenchConfig): Promise<ModeResult> {
	const n = config.pick(1000, 10);
	const m = config.pick(100, 5);
	const rounds = config.pick(7, 1);
	const sequential = emptySamples();
	const concurrent = emptySamples();
	for (const round of Array.from({ length: rounds }, (_, k) => k)) {
		await withClients(mode, config.pick(100, 5), async (calls) => {
			await sequentialRound(calls, n, round, sequential);
			await concurrentRound(calls, m, config.pick(5, 1), concurrent);
		});
	}
	return { sequential: batch(sequential, n), concurrent: batch(concurrent, m), n, m, rounds };
}

export async function warm(config: BenchConfig): Promise<FigureResult> {
	const legacy = await warmFor("legacy", config);
	const modern = await warmFor("auto", config);
	const line = (kind: "sequential" | "concurrent", label: string, result: ModeResult): Line => {
		const result_ = result[kind];
		const n = kind === "sequential" ? result.n : result.m;
		const target = kind === "sequential" ? SEQUENTIAL_TARGET : CONCURRENT_TARGET;
		return {
			name: `3 warm ${n} ${kind} (${label})`,
			value: `${formatSummary(result_.ours, "ms")} per batch, ${formatValue((result_.ours.median / n) * 1000, "µs")} per call`,
			comparison: `baseline raw SDK ${formatSummary(result_.raw, "ms")}, ratio ${formatSummary(result_.ratio, "×")}`,
			target: `≤ ${target}×`,
			verdict: verdict(result_.ratio.median <= target),
		};
	};
	const lines = [
		line("sequential", "legacy", legacy),
		line("concurrent", "legacy", legacy),
		line("sequential", "modern", modern),
		line("concurrent", "modern", modern),
	];
	const row = (label: string, kind: "sequential" | "concurrent", result: ModeResult) => {
		const b = result[kind];
		return `| ${label} | ${kind === "sequential" ? result.n : result.m} ${kind} | ${formatSummary(b.ours, "ms")} | ${formatSummary(b.raw, "ms")} | ${formatSummary(b.ratio, "×")} | ${formatSummary(b.oursCpu, "µs")} vs ${formatSummary(b.rawCpu, "µs")}, ratio ${formatSummary(b.cpuRatio, "×")} |`;
	};
	const notes = [
		"Per round: a fresh pi-mcp runtime and a fresh raw SDK client, each with its own connection (own server process, both",
		"started through `setsid`, see figure 2) to the fixture server; both warmed up (100 untimed calls each: pi-mcp connects",
		'and builds its tool index). pi-mcp: `runtime.call("fx", "echo", { text }, { signal })` (tool lookup in its index, output',
		'validation against the known definition, progress-timeout options); raw SDK: `client.callTool({ name: "echo", arguments:',
		"{ text } }, { signal })` after one `listTools()`. Every result is checked. Modern = `auto`, negotiated to 2026-07-28 (the",
		'fixture supports it); legacy = `"protocolVersion": "legacy"`.',
		`A sequential sample is ${legacy.n} calls per client awaited one by one, run as chunks of 100 that alternate between the`,
		"clients so both see the same background load (one sample per round); a concurrent sample is one `Promise.all` batch,",
		"alternating which client goes first (5 pairs per round). The bench process's CPU time (user + system) is the client side",
		"of the calls (each server runs in its own process) and is steadier than wall time on a loaded machine.",
		"",
		"| era | batch | pi-mcp | raw SDK | ratio (paired) | client CPU per call: pi-mcp vs raw SDK (paired ratio) |",
		"|---|---|---|---|---|---|",
		row("legacy", "sequential", legacy),
		row("legacy", "concurrent", legacy),
		row("modern", "sequential", modern),
		row("modern", "concurrent", modern),
		"",
		`Rounds (fresh connections): ${legacy.rounds} per era.`,
	].join("\n");
	return { lines, notes };
}
