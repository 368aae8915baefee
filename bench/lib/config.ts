/** Run settings: `BENCH_SMOKE=1` runs every figure once with tiny sizes (the test suite's smoke run). */

export type BenchConfig = Readonly<{
	smoke: boolean;
	/** `full` normally, `smoke` under BENCH_SMOKE=1. */
	pick<T>(full: T, smoke: T): T;
}>;

export function benchConfig(env: Readonly<Record<string, string | undefined>> = process.env): BenchConfig {
	const smoke = env.BENCH_SMOKE === "1";
	return { smoke, pick: (full, small) => (smoke ? small : full) };
}

export type FigureResult = Readonly<{
	lines: readonly import("./stats.ts").Line[];
	/** Markdown: method and the full numbers, for the full report. */
	notes: string;
}>;
