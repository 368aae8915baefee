/** Samples, medians and the one-line format every figure prints. */

export type Summary = Readonly<{ median: number; min: number; max: number; n: number }>;

export function summarize(samples: readonly number[]): Summary {
	if (samples.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
	const sorted = [...samples].sort((a, b) => a - b);
	const mid = Math.floor(sorted.length / 2);
	const median = sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
	return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number, n: sorted.length };
}

/** Per-round ratios of paired samples (measured[i] / baseline[i]); robust to drift on a noisy machine. */
export function pairedRatios(measured: readonly number[], baseline: readonly number[]): Summary {
	return summarize(ratiosOf(measured, baseline));
}

/** The per-round ratios themselves (measured[i] / baseline[i]), finite ones only. */
export function ratiosOf(measured: readonly number[], baseline: readonly number[]): number[] {
	return measured.map((value, i) => value / (baseline[i] as number)).filter((ratio) => Number.isFinite(ratio));
}

/**
 * The 95 % bootstrap interval of the median (2,000 resamples, seeded so that a run can be replayed): how
 * finely a figure resolves. A ratio whose interval lies within ±2 % of its median resolves 2 %.
 */
export function medianInterval(samples: readonly number[], resamples = 2000): Readonly<{ low: number; high: number }> {
	if (samples.length === 0) return { low: Number.NaN, high: Number.NaN };
	const state = { seed: 20261204 };
	const random = () => {
		state.seed = (Math.imul(state.seed, 1103515245) + 12345) >>> 0;
		return state.seed / 4294967296;
	};
	const medians = Array.from(
		{ length: resamples },
		() =>
			summarize(Array.from({ length: samples.length }, () => samples[Math.floor(random() * samples.length)] as number)).median,
	).sort((x, y) => x - y);
	return { low: medians[Math.floor(resamples * 0.025)] as number, high: medians[Math.floor(resamples * 0.975)] as number };
}

export type Unit = "ms" | "s" | "µs" | "MiB" | "tokens" | "count" | "×";

export function formatValue(value: number, unit: Unit): string {
	if (!Number.isFinite(value)) return "n/a";
	switch (unit) {
		case "ms":
			return value >= 100 ? `${value.toFixed(0)} ms` : `${value.toFixed(1)} ms`;
		case "s":
			return `${value.toFixed(2)} s`;
		case "µs":
			return `${value.toFixed(1)} µs`;
		case "MiB":
			return `${value.toFixed(1)} MiB`;
		case "tokens":
			return `${value.toFixed(0)} tokens`;
		case "count":
			return `${value.toFixed(0)}`;
		case "×":
			return `${value.toFixed(3)}×`;
	}
}

/** `median [min–max]` of a summary. */
export function formatSummary(summary: Summary, unit: Unit): string {
	if (summary.n <= 1) return formatValue(summary.median, unit);
	const bare = (value: number) => formatValue(value, unit).replace(/ .*$/, "");
	return `${formatValue(summary.median, unit)} [${bare(summary.min)}–${bare(summary.max)}]`;
}

/** Runs `variants` for `rounds` rounds, rotating the order every round so no variant always goes first. */
export async function interleave<K extends string>(
	rounds: number,
	variants: Readonly<Record<K, () => Promise<number>>>,
): Promise<Record<K, number[]>> {
	const keys = Object.keys(variants) as K[];
	const samples = Object.fromEntries(keys.map((key) => [key, [] as number[]])) as Record<K, number[]>;
	for (const round of Array.from({ length: rounds }, (_, i) => i)) {
		const order = keys.map((_, i) => keys[(i + round) % keys.length] as K);
		for (const key of order) samples[key].push(await variants[key]());
	}
	return samples;
}

export type Verdict = "met" | "MISSED" | "info";

export type Line = Readonly<{
	/** Stable figure name, e.g. `1 start-up tax`; the smoke test looks for it. */
	name: string;
	/** What was measured, already formatted. */
	value: string;
	/** Baseline and ratio, already formatted (`baseline …, ratio …`). */
	comparison: string;
	target: string;
	verdict: Verdict;
}>;

export function formatLine(line: Line): string {
	const verdict = line.verdict === "info" ? "" : ` — ${line.verdict}`;
	return `${line.name}: ${line.value} (${line.comparison}) · target ${line.target}${verdict}`;
}

export const verdict = (ok: boolean): Verdict => (ok ? "met" : "MISSED");
