/**
 * Files a command saves. A tool's long text goes to the overflow file the `mcp` tool's output rules
 * name (private, removed when the command exits) unless `--out <dir>` keeps it there. Binary content
 * (an image a tool returns, a resource's blob) is written only with `--out`: a path printed for a file
 * deleted on exit would be a path to nothing, so without `--out` the output says it was not kept.
 */
import { mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import { refusalText } from "../output/content.ts";
import { formatBytes, stripTerminal } from "../output/text.ts";
import { createOverflowStore, type OverflowStore } from "../output.ts";

const MIME_EXTENSIONS: Readonly<Record<string, string>> = {
	"image/png": ".png",
	"image/jpeg": ".jpg",
	"image/gif": ".gif",
	"image/webp": ".webp",
	"image/svg+xml": ".svg",
	"audio/wav": ".wav",
	"audio/mpeg": ".mp3",
	"application/pdf": ".pdf",
	"application/json": ".json",
	"text/plain": ".txt",
};

/** The file name ending for a MIME type (`.bin` when unknown). */
export function extensionOf(mimeType: string): string {
	return MIME_EXTENSIONS[mimeType.split(";")[0]?.trim().toLowerCase() ?? ""] ?? ".bin";
}

export type SavedFiles = OverflowStore & Readonly<{ kept: boolean }>;

/**
 * Where a run saves files: with `--out`, straight into that directory and kept; otherwise the
 * private overflow directory, removed when the command exits.
 */
export function savedFiles(out: string | undefined): SavedFiles {
	if (out === undefined) return { ...createOverflowStore(), kept: false };
	const files = new KeptFiles(out);
	return { kept: true, save: (name, pieces) => files.save(name, pieces), used: () => files.used, dispose: async () => undefined };
}

/** Files saved into `--out` during one run: their count names them, their bytes are reported. */
class KeptFiles {
	readonly #out: string;
	#used = 0;
	#count = 0;

	constructor(out: string) {
		this.#out = out;
	}

	get used(): number {
		return this.#used;
	}

	async save(name: string, pieces: readonly (string | Uint8Array)[]): Promise<Readonly<{ path: string; bytes: number }>> {
		await mkdir(this.#out, { recursive: true });
		this.#count += 1;
		const safe = name.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 80);
		const path = join(this.#out, `${process.pid}-${String(this.#count).padStart(3, "0")}-${safe}`);
		const handle = await open(path, "wx", 0o600);
		try {
			for (const piece of pieces) await handle.writeFile(piece);
		} finally {
			await handle.close();
		}
		const bytes = pieces.reduce((sum, piece) => sum + (typeof piece === "string" ? Buffer.byteLength(piece) : piece.length), 0);
		this.#used += bytes;
		return { path, bytes };
	}
}

/**
 * Binary content as one line: saved into `--out` and named there, or, without `--out`, said not kept
 * (with how to keep it). `label` names the file.
 */
export async function binaryLine(files: SavedFiles, data: string, mimeType: string, label: string): Promise<string> {
	const bytes = Buffer.from(data, "base64");
	const what = `${stripTerminal(mimeType)}, ${formatBytes(bytes.length)}`;
	if (!files.kept) return `[${what}: not kept; pass --out <dir> to save it]`;
	const saved = await files.save(`${label}${extensionOf(mimeType)}`, [bytes]);
	return `[${what}${"path" in saved ? ` saved to ${saved.path}` : `: not saved: ${refusalText(saved)}`}]`;
}

/** After the output: where the files it names are (kept with `--out`, else removed at exit). */
export function filesNote(files: SavedFiles, out: string | undefined, err: (text: string) => void): void {
	if (files.used() === 0) return;
	err(
		files.kept
			? `pi-mcp: files named above are kept in ${out}\n`
			: "pi-mcp: files named above are removed when this command exits; pass --out <dir> to keep them\n",
	);
}
