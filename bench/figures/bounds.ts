/**
 * Figure 11, search bounds (issue #17, item 1): what the tool search costs on the largest tool lists
 * a server can send and on hostile queries. Each list is indexed the way the extension does it
 * (`indexOf`: an async build in slices), while a `setImmediate` ticker measures the longest stretch
 * the event loop was held; memory is the heap the index keeps after a full GC, and the highest heap
 * seen while building. Lists: a normal 5,000-tool server (the catalog repeated with numbered names),
 * 10,000 tools (the catalog repeated; each tool ~1.4 KB, about what a 10 MiB stdio message carries),
 * 10,000 tools of 1 KB random words (no text repeats), and 100 tools with 100 KB descriptions of
 * random words. Queries: the discovery queries, a 64,000-letter word, 16 unknown long words, and a
 * 256-character query of the commonest words.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { buildIndexAsync, type SearchTool, search } from "../../src/search/rank.ts";
import { QUERIES } from "../data/discovery-queries.ts";
import type { BenchConfig, FigureResult } from "../lib/config.ts";
import { formatValue, type Line, summarize, verdict } from "../lib/stats.ts";
import { catalog } from "./discovery.ts";

const TARGET = { normalMs: 200, anyMs: 1000, stretchMs: 50, extraMiB: 200, queryMs: 20 } as const;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const heap = (): number => process.memoryUsage().heapUsed / 2 ** 20;

/** A deterministic stream of pseudo-random words (a linear congruential generator). */
function randomWords(seed: number): (count: number) => string {
	const state = { seed };
	const letters = "abcdefghijklmnopqrstuvwxyz";
	const word = () =>
		Array.from({ length: 4 + (state.seed % 7) }, () => {
			state.seed = (state.seed * 1103515245 + 12345) % 2 ** 31;
			return letters[state.seed % 26];
		}).join("");
	return (count) => Array.from({ length: count }, word).join(" ");
}

function repeated(size: number): SearchTool[] {
	const base = catalog().map((entry) => entry.tool);
	return Array.from({ length: size }, (_, i) => {
		const tool = base[i % base.length] as SearchTool;
		return { ...tool, name: `${tool.name}_${Math.floor(i / base.length)}` };
	});
}

function random(size: number, descriptionBytes: number): SearchTool[] {
	const next = randomWords(size * 7 + descriptionBytes);
	return Array.from({ length: size }, (_, i) => ({
		name: `tool_${i}_${next(1)}`,
		description: next(Math.ceil(descriptionBytes / 7)).slice(0, descriptionBytes),
		inputSchema: { type: "object", properties: { [next(1)]: { type: "string", description: next(8) } } },
	}));
}

type Built = Readonly<{ ms: number; cpuMs: number; stretchMs: number; keptMiB: number; peakMiB: number }>;

/** CPU time of the process (all its threads), in ms: on a loaded machine, closer to what an idle one would take. */
const cpu = (): number => {
	const usage = process.cpuUsage();
	return (usage.user + usage.system) / 1000;
};

/** Indexes one list as the extension does, measuring wall time, the longest loop stall and the heap. */
async function measureBuild(
	tools: readonly SearchTool[],
): Promise<Built & { index: Awaited<ReturnType<typeof buildIndexAsync>> }> {
	gc();
	const before = heap();
	const watch = { last: performance.now(), stretch: 0, peak: before, running: true };
	const tick = () => {
		const now = performance.now();
		watch.stretch = Math.max(watch.stretch, now - watch.last);
		watch.peak = Math.max(watch.peak, heap());
		watch.last = now;
		if (watch.running) setImmediate(tick);
	};
	setImmediate(tick);
	const [started, cpuStarted] = [performance.now(), cpu()];
	const index = await buildIndexAsync([{ server: "big", tools }]);
	const [ms, cpuMs] = [performance.now() - started, cpu() - cpuStarted];
	watch.running = false;
	tick();
	gc();
	return { index, ms, cpuMs, stretchMs: watch.stretch, keptMiB: heap() - before, peakMiB: watch.peak - before };
}

/** The slowest query, wall and CPU time (ms), over `rounds` rounds. */
function slowest(
	index: Parameters<typeof search>[0],
	queries: readonly string[],
	rounds: number,
): Readonly<{ ms: number; cpuMs: number }> {
	const samples = Array.from({ length: rounds }, () =>
		queries.map((query) => {
			const [started, cpuStarted] = [performance.now(), cpu()];
			search(index, query, 10);
			return { ms: performance.now() - started, cpuMs: cpu() - cpuStarted };
		}),
	).flat();
	return { ms: Math.max(...samples.map((s) => s.ms)), cpuMs: Math.max(...samples.map((s) => s.cpuMs)) };
}

export async function searchBounds(config: BenchConfig): Promise<FigureResult> {
	const scale = config.pick(1, 0.05);
	const lists = [
		{
			label: `${Math.round(5000 * scale)} catalog tools (a normal big server)`,
			tools: repeated(Math.round(5000 * scale)),
			normal: true,
		},
		{ label: `${Math.round(10000 * scale)} catalog tools`, tools: repeated(Math.round(10000 * scale)), normal: false },
		{
			label: `${Math.round(10000 * scale)} tools of 1 KB random words`,
			tools: random(Math.round(10000 * scale), 1024),
			normal: false,
		},
		{
			label: `${Math.round(100 * scale) || 1} tools with 100 KB descriptions`,
			tools: random(Math.round(100 * scale) || 1, 100_000),
			normal: false,
		},
	];
	const rounds = config.pick(3, 1);
	const hostile = [
		"a".repeat(64_000),
		Array.from({ length: 16 }, (_, i) => `zqxwvutsr${"mnbvcxzlkjhg".slice(i % 5)}`).join(" "),
		"get the list of the file and the page and the issue to read and write ".repeat(4),
	];
	const measured = [];
	for (const list of lists) {
		const builds: Built[] = [];
		for (const _ of Array.from({ length: rounds })) builds.push(await measureBuild(list.tools));
		const { index } = await measureBuild(list.tools);
		const queryMs = slowest(index, [...QUERIES.map((query) => query.q), ...hostile], rounds);
		measured.push({ list, builds, queryMs });
	}
	const median = (values: readonly number[]) => summarize(values).median;
	const lines: Line[] = measured.map(({ list, builds, queryMs }) => {
		const ms = median(builds.map((b) => b.ms));
		const cpuMs = median(builds.map((b) => b.cpuMs));
		const stretch = Math.max(...builds.map((b) => b.stretchMs));
		const kept = median(builds.map((b) => b.keptMiB));
		const peak = Math.max(...builds.map((b) => b.peakMiB));
		const buildTarget = list.normal ? TARGET.normalMs : TARGET.anyMs;
		const ok = ms <= buildTarget && stretch <= TARGET.stretchMs && peak <= TARGET.extraMiB && queryMs.ms <= TARGET.queryMs;
		return {
			name: `11 search bounds, ${list.label}`,
			value: `index ${formatValue(ms, "ms")} (CPU ${formatValue(cpuMs, "ms")}; ${formatValue(ms / buildTarget, "×")} of target), longest stall ${formatValue(stretch, "ms")}, heap kept ${formatValue(kept, "MiB")} (peak +${formatValue(peak, "MiB")}); slowest query ${formatValue(queryMs.ms, "ms")} (CPU ${formatValue(queryMs.cpuMs, "ms")})`,
			comparison: `${builds.length} builds, median; queries: ${QUERIES.length} discovery + a 64,000-letter word, 16 unknown words, 256 chars of common words`,
			target: `index ≤ ${buildTarget} ms, stall ≤ ${TARGET.stretchMs} ms, ≤ ${TARGET.extraMiB} MiB extra, query ≤ ${TARGET.queryMs} ms`,
			verdict: config.smoke ? "info" : verdict(ok),
		};
	});
	const notes = [
		"Each list is indexed as the extension indexes it (`indexOf` → `buildIndexAsync`: a generator run in slices of about 8 ms, yielding to the event loop with `setImmediate`), while a `setImmediate` ticker records the longest gap between its turns (the longest synchronous stretch; on a loaded machine the OS adds its own pauses). Memory: `heapUsed` after a forced GC, index held, minus before; the peak is the highest `heapUsed` the ticker saw while building (garbage included).",
		"",
		"Bounds (src/search/text.ts `LIMITS`): a tool's name and title 256 characters, description 4 KiB, 64 parameters in 4 KiB; words cut at 32 letters; a query's first 256 characters and 16 words; 100,000 distinct words per index; a typo scan compares an unknown word with at most 1,024 known words (buckets by first letter and length, names first).",
		"",
		"| list | index ms (median) | index CPU ms | longest stall ms | heap kept MiB | heap peak MiB | slowest query ms (CPU) |",
		"|---|---|---|---|---|---|---|",
		...measured.map(
			({ list, builds, queryMs }) =>
				`| ${list.label} | ${median(builds.map((b) => b.ms)).toFixed(0)} | ${median(builds.map((b) => b.cpuMs)).toFixed(0)} | ${Math.max(...builds.map((b) => b.stretchMs)).toFixed(1)} | ${median(builds.map((b) => b.keptMiB)).toFixed(1)} | ${Math.max(...builds.map((b) => b.peakMiB)).toFixed(1)} | ${queryMs.ms.toFixed(2)} (${queryMs.cpuMs.toFixed(2)}) |`,
		),
	].join("\n");
	return { lines, notes };
}
