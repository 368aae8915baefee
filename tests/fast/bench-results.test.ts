/** RESULTS.md's generated block: a run of some figures replaces only their lines (bench/lib/results.ts). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BEGIN, END, mergeResults } from "../../bench/lib/results.ts";

test("a run of some figures replaces their lines and runs in RESULTS.md's block and keeps the rest", () => {
	const line = (name: string, value: string) => ({ name, value, comparison: "c", target: "t", verdict: "met" as const });
	const first = mergeResults(
		`# Results\n\nhand-written\n\n${BEGIN}\n${END}\n\nafter\n`,
		{ figures: ["1", "4", "10"], date: "d1", source: "s1", load: "l1" },
		[line("1 start-up tax", "a"), line("4 50 MiB result", "b"), line("10 server first call", "c")],
	);
	const second = mergeResults(first, { figures: ["4"], date: "d2", source: "s2", load: "l2" }, [line("4 50 MiB result", "B")]);
	assert.match(second, /^# Results\n\nhand-written\n/);
	assert.match(second, /\nafter\n$/);
	assert.match(second, /\| 1, 10 \| d1 \| `s1` \| l1 \|\n\| 4 \| d2 \| `s2` \| l2 \|/);
	assert.match(
		second,
		/```text\n1 start-up tax: a \(c\) · target t — met\n4 50 MiB result: B \(c\) · target t — met\n10 server first call: c/,
	);
	assert.doesNotMatch(second, /4 50 MiB result: b/);
});
