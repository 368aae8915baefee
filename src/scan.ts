/**
 * A large text encoded once for its overflow file, and checked on the way: `encodeClean` gives the
 * UTF-8 bytes and the newline count when the text holds nothing `stripTerminal` removes, so a 50 MiB
 * result is encoded once (for the file) instead of scanned by a regular expression, counted line by
 * line and encoded again. The scan is a small WebAssembly kernel (src/scan.wat, why it is hand-written
 * is said there); without WebAssembly, or for a text that needs stripping, the caller takes the exact
 * path in text.ts.
 */
import type { Counted } from "./output.ts";
import { SCAN_WASM } from "./scan.wasm.ts";
import { textSlices } from "./text.ts";

/**
 * The few parts of the WebAssembly API used here, typed locally: @types/node 22 does not declare it, and
 * it is absent when Node runs without a JIT (`--jitless`).
 */
type Wasm = Readonly<{
	Module: new (bytes: Uint8Array) => object;
	Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer };
	Instance: new (module: object, imports: object) => { readonly exports: object };
}>;
type Kernel = Readonly<{ scan: (start: number, end: number) => number; newlines: { readonly value: number } }>;

const PAGE = 64 * 1024;
const encoder = new TextEncoder();
/** Compiled on first use; `null` once that failed (no WebAssembly, no SIMD): never tried again. */
const compiled: { module?: Readonly<{ wasm: Wasm; module: object }> | null } = {};

function kernelModule(): Readonly<{ wasm: Wasm; module: object }> | undefined {
	if (compiled.module === undefined) {
		try {
			const wasm = (globalThis as { WebAssembly?: Wasm }).WebAssembly;
			compiled.module = wasm ? { wasm, module: new wasm.Module(Buffer.from(SCAN_WASM, "base64")) } : null;
		} catch {
			compiled.module = null;
		}
	}
	return compiled.module ?? undefined;
}

/**
 * The text's UTF-8 bytes and newlines, or undefined when it needs stripping (or the kernel cannot run).
 * Encoded and scanned 1 Mi characters at a time, so a text that needs stripping is given up at its
 * first slice that does. The bytes live in the kernel's memory, one per call, dropped with the result.
 */
export function encodeClean(text: string): Counted | undefined {
	const loaded = kernelModule();
	if (!loaded) return undefined;
	const { wasm, module } = loaded;
	const size = Buffer.byteLength(text);
	const made = (() => {
		try {
			const memory = new wasm.Memory({ initial: Math.max(1, Math.ceil(size / PAGE)) });
			const instance = new wasm.Instance(module, { env: { memory } });
			return { bytes: new Uint8Array(memory.buffer, 0, size), kernel: instance.exports as unknown as Kernel };
		} catch {
			// Memory the engine will not give (a text of gigabytes): the exact path copes or fails as before.
			return undefined;
		}
	})();
	if (!made) return undefined;
	const { bytes, kernel } = made;
	const at = { offset: 0 };
	for (const slice of textSlices(text)) {
		const { written } = encoder.encodeInto(slice, bytes.subarray(at.offset));
		if (kernel.scan(at.offset, at.offset + written) !== -1) return undefined;
		at.offset += written;
	}
	return at.offset === size ? { bytes, newlines: kernel.newlines.value } : undefined;
}
