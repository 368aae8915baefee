/**
 * Child process of figure 4 (its own process so peak RSS belongs to one operation):
 *   node --import tsx bench/child/output-child.ts <present|write> <bytes> <dir>
 * Builds `bytes` of ASCII text in 37-byte lines (the fixture's `big` tool pattern), then either passes it
 * through the output pipeline as a tool result (`present(toolResultParts(result))` with a real overflow
 * store in <dir>) or does what any safe writer must: one regular-expression scan of it for control
 * characters, then `fs.writeFile`. Prints one JSON line: wall and CPU time of the operation (and, for the
 * writer, the time of its scan), peak RSS (`resourceUsage().maxRSS`) and RSS before the payload existed, in bytes.
 */
import { readFileSync, statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { present, toolResultParts } from "../../src/output/content.ts";
import { createOverflowStore } from "../../src/output.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

const [mode, bytesArg, dir] = process.argv.slice(2);
const bytes = Number(bytesArg);
if ((mode !== "present" && mode !== "write") || !Number.isInteger(bytes) || !dir) {
	throw new Error("usage: output-child.ts <present|write> <bytes> <dir>");
}

function rss(): number {
	const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
	return match ? Number(match[1]) * 1024 : process.memoryUsage.rss();
}

const idleRss = rss();
const pattern = "abcdefghijklmnopqrstuvwxyz0123456789\n";
// One flat one-byte string of exactly `bytes` (slice flattens the rope that repeat builds).
const text = pattern.repeat(Math.ceil(bytes / pattern.length)).slice(0, bytes);
if (text.charCodeAt(text.length - 1) === 0) throw new Error("unreachable");
const payloadRss = rss();

const started = performance.now();
const cpuAtStart = process.cpuUsage();
const written = await (async (): Promise<{ path: string; modelChars: number; scanMs?: number }> => {
	if (mode === "write") {
		const path = join(dir, "plain.txt");
		if (CONTROL.test(text)) throw new Error("the payload holds control characters");
		const scanMs = performance.now() - started;
		await writeFile(path, text);
		return { path, modelChars: 0, scanMs };
	}
	const store = createOverflowStore({ baseDir: dir });
	const presented = await present(toolResultParts({ content: [{ type: "text", text }] }), store, "fx-big");
	const path = presented.info.overflowPath;
	if (!path) throw new Error(`no overflow file: ${presented.text.slice(-300)}`);
	return { path, modelChars: presented.text.length };
})();
const ms = performance.now() - started;
const cpu = process.cpuUsage(cpuAtStart);
const cpuMs = (cpu.user + cpu.system) / 1000;
const size = statSync(written.path).size;
if (size !== bytes) throw new Error(`wrote ${size} bytes, expected ${bytes}`);
const peak = process.resourceUsage().maxRSS * 1024;
console.log(
	JSON.stringify({
		mode,
		bytes,
		ms,
		cpuMs,
		scanMs: written.scanMs,
		peakRss: peak,
		idleRss,
		payloadRss,
		modelChars: written.modelChars,
	}),
);
