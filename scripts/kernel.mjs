#!/usr/bin/env node
// Assembles src/scan.wat and writes it into src/output.ts as base64, between the `kernel:begin` and
// `kernel:end` markers (no binary file, no extra module: Pi loads TypeScript, and output.ts imports
// nothing of src/). `--check` only compares and exits 1 when output.ts does not hold what scan.wat
// assembles to.
import { readFileSync, writeFileSync } from "node:fs";
import wabtInit from "wabt";

const root = new URL("..", import.meta.url);
const source = new URL("src/scan.wat", root);
const target = new URL("src/output.ts", root);
const BEGIN = "// kernel:begin\n";
const END = "// kernel:end\n";

/** The lines that go between the markers. */
export async function assemble() {
	const wabt = await wabtInit();
	const module = wabt.parseWat("scan.wat", readFileSync(source, "utf8"), { simd: true });
	try {
		module.validate();
		const { buffer } = module.toBinary({});
		const lines = Buffer.from(buffer)
			.toString("base64")
			.match(/.{1,96}/g)
			.map((line) => `\t"${line}",`);
		return ["const SCAN_WASM = [", ...lines, '].join("");', ""].join("\n");
	} finally {
		module.destroy();
	}
}

/** What is between the markers in `text` now. */
export function embedded(text) {
	const start = text.indexOf(BEGIN);
	const end = text.indexOf(END);
	if (start === -1 || end < start) throw new Error("src/output.ts has no kernel:begin / kernel:end markers");
	return { before: text.slice(0, start + BEGIN.length), inside: text.slice(start + BEGIN.length, end), after: text.slice(end) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
	const lines = await assemble();
	const text = readFileSync(target, "utf8");
	const { before, inside, after } = embedded(text);
	if (process.argv.includes("--check")) {
		if (inside !== lines) {
			console.error("src/output.ts does not hold what src/scan.wat assembles to: run `node scripts/kernel.mjs`");
			process.exit(1);
		}
	} else {
		writeFileSync(target, `${before}${lines}${after}`);
		console.log(`wrote the kernel into ${target.pathname}`);
	}
}
