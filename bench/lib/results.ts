/**
 * The latest numbers in bench/RESULTS.md: the block between the markers below holds one line per figure
 * result and a table of the runs they came from. A run replaces the lines of the figures it ran and keeps
 * the others, so `BENCH_ONLY=4` refreshes figure 4 alone; the hand-written text around the block stays.
 */
import { formatLine, type Line } from "./stats.ts";

export const BEGIN = "<!-- bench:figures:begin (written by `npm run bench`; a BENCH_ONLY run replaces only its figures) -->";
export const END = "<!-- bench:figures:end -->";

export type Run = Readonly<{ figures: readonly string[]; date: string; source: string; load: string }>;

const RUNS_HEADER = ["| figures | run (UTC) | source | load average (1 min) |", "|---|---|---|---|"];

/** The figure a printed line belongs to: its first word (`4 50 MiB result …` → `4`). */
const figureOf = (line: string) => line.split(" ", 1)[0] ?? "";

function parseRuns(block: string): Run[] {
	return block
		.split("\n")
		.filter((row) => row.startsWith("| ") && !row.startsWith("| figures") && !row.startsWith("|---"))
		.map((row) => {
			const [figures = "", date = "", source = "", load = ""] = row
				.slice(2, -2)
				.split(" | ")
				.map((cell) => cell.trim());
			return { figures: figures.split(", "), date, source: source.replace(/^`|`$/g, ""), load };
		});
}

function parseLines(block: string): string[] {
	const start = block.indexOf("```text\n");
	const end = block.indexOf("\n```", start + 1);
	if (start === -1 || end === -1) return [];
	return block
		.slice(start + "```text\n".length, end)
		.split("\n")
		.filter((line) => line.trim() !== "");
}

/** `text` with its block updated by a run of `run.figures` that printed `lines`; a text without markers gets none. */
export function mergeResults(text: string, run: Run, lines: readonly Line[]): string {
	const start = text.indexOf(BEGIN);
	const end = text.indexOf(END);
	if (start === -1 || end < start) throw new Error(`bench/RESULTS.md has no ${BEGIN} … ${END} block`);
	const block = text.slice(start + BEGIN.length, end);
	const ran = new Set(run.figures);
	const order = (id: string) => Number.parseInt(id, 10);
	const kept = parseLines(block).filter((line) => !ran.has(figureOf(line)));
	const merged = [...kept, ...lines.map(formatLine)].sort((a, b) => order(figureOf(a)) - order(figureOf(b)));
	const runs = [
		...parseRuns(block)
			.map((old) => ({ ...old, figures: old.figures.filter((figure) => !ran.has(figure)) }))
			.filter((old) => old.figures.length > 0),
		run,
	];
	const table = runs.map((r) => `| ${r.figures.join(", ")} | ${r.date} | \`${r.source}\` | ${r.load} |`);
	const body = ["", ...RUNS_HEADER, ...table, "", "```text", ...merged, "```", ""].join("\n");
	return `${text.slice(0, start + BEGIN.length)}${body}${text.slice(end)}`;
}
