/**
 * Figure 4, a 50 MiB text result through the output pipeline (src/output/content.ts `present()` with
 * `toolResultParts`, a real overflow store in a temp dir) ÷ what any safe writer must do with the same
 * text: one regular-expression scan for control characters, then `fs.writeFile`; each run in its own
 * child process, which also reports its peak RSS.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { BenchConfig, FigureResult } from "../lib/config.ts";
import { ROOT } from "../lib/pi.ts";
import { formatSummary, interleave, pairedRatios, summarize, verdict } from "../lib/stats.ts";

const run = promisify(execFile);
const TIME_TARGET = 1.25;
const RSS_TARGET = 3;
const MiB = 1024 * 1024;

type Report = Readonly<{
	mode: string;
	bytes: number;
	ms: number;
	cpuMs: number;
	scanMs?: number;
	peakRss: number;
	idleRss: number;
	payloadRss: number;
	modelChars: number;
}>;

async function child(mode: "present" | "write", bytes: number): Promise<Report> {
	const dir = await mkdtemp(join(tmpdir(), "pi-bench-output-"));
	try {
		const { stdout } = await run(
			process.execPath,
			["--import", "tsx", join(ROOT, "bench/child/output-child.ts"), mode, String(bytes), dir],
			{
				cwd: ROOT,
				maxBuffer: 1024 * 1024,
			},
		);
		return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Report;
	} finally {
		await rm(dir, { recursive: true, force: true });
	}
}

export async function output(config: BenchConfig): Promise<FigureResult> {
	const bytes = config.pick(50 * MiB, MiB);
	const reports: Record<"present" | "write", Report[]> = { present: [], write: [] };
	const measure = (mode: "present" | "write") => async () => {
		const report = await child(mode, bytes);
		reports[mode].push(report);
		return report.ms;
	};
	const samples = await interleave(config.pick(9, 1), { present: measure("present"), write: measure("write") });
	const ratio = pairedRatios(samples.present, samples.write);
	const peak = summarize(reports.present.map((report) => report.peakRss / MiB));
	const basePeak = summarize(reports.write.map((report) => report.peakRss / MiB));
	const growth = summarize(reports.present.map((report) => (report.peakRss - report.idleRss) / bytes));
	const baseGrowth = summarize(reports.write.map((report) => (report.peakRss - report.idleRss) / bytes));
	const total = summarize(reports.present.map((report) => report.peakRss / bytes));
	const idle = summarize(reports.present.map((report) => report.idleRss / MiB));
	const cpuRatio = pairedRatios(
		reports.present.map((report) => report.cpuMs),
		reports.write.map((report) => report.cpuMs),
	);
	const scan = summarize(reports.write.map((report) => report.scanMs ?? Number.NaN));
	const payload = `${(bytes / MiB).toFixed(0)} MiB`;
	const lines = [
		{
			name: `4 ${payload} result through output.ts`,
			value: `${formatSummary(summarize(samples.present), "ms")}`,
			comparison: `baseline regex scan + fs.writeFile ${formatSummary(summarize(samples.write), "ms")} (scan ${formatSummary(scan, "ms")}), ratio ${formatSummary(ratio, "×")}; CPU time ratio ${formatSummary(cpuRatio, "×")}`,
			target: `≤ ${TIME_TARGET}×`,
			verdict: verdict(ratio.median <= TIME_TARGET),
		},
		{
			name: `4 ${payload} result peak RSS`,
			value: `${formatSummary(peak, "MiB")} = ${formatSummary(total, "×")} the payload; ${formatSummary(growth, "×")} the payload above the idle process (${formatSummary(idle, "MiB")})`,
			comparison: `baseline regex scan + fs.writeFile ${formatSummary(basePeak, "MiB")}, ${formatSummary(baseGrowth, "×")} above idle`,
			target: `≤ ${RSS_TARGET}× the payload (above idle)`,
			verdict: verdict(growth.median <= RSS_TARGET),
		},
	];
	const notes = [
		`Each sample is a fresh child (\`node --import tsx bench/child/output-child.ts\`) that builds ${payload} of ASCII text in 37-byte`,
		"lines (one flat string, as a parsed JSON-RPC result holds it) and then, timed: either",
		'`present(toolResultParts({ content: [{ type: "text", text }] }), createOverflowStore({ baseDir }), label)` — escape check,',
		"head cut to 50 KiB / 2,000 lines, the full text written to a 0600 overflow file — or the baseline, what any safe",
		"writer must do: one regular-expression scan of the text for control characters, then `fs.writeFile(path, text)`.",
		'Both verify the file size. Peak RSS is `process.resourceUsage().maxRSS` at the end of the child; "idle" is VmRSS before',
		'the payload was built (Node + tsx + the modules), so "above idle" is what holding and handling the payload cost.',
		"",
		"| | output.ts | scan + fs.writeFile |",
		"|---|---|---|",
		`| time | ${formatSummary(summarize(samples.present), "ms")} | ${formatSummary(summarize(samples.write), "ms")} (scan ${formatSummary(scan, "ms")}) |`,
		`| peak RSS | ${formatSummary(peak, "MiB")} | ${formatSummary(basePeak, "MiB")} |`,
		`| peak − idle RSS, × payload | ${formatSummary(growth, "×")} | ${formatSummary(baseGrowth, "×")} |`,
		`| peak RSS, × payload | ${formatSummary(total, "×")} | ${formatSummary(summarize(reports.write.map((report) => report.peakRss / bytes)), "×")} |`,
		`| text given to the model | ${reports.present[0]?.modelChars ?? 0} characters | — |`,
		"",
		`Ratio (paired): ${formatSummary(ratio, "×")}; CPU time of the operation (paired): ${formatSummary(cpuRatio, "×")}, steadier than wall time when the disk or the cores are shared.`,
	].join("\n");
	return { lines, notes };
}
