/**
 * Maps what a server returns (tool results, resource contents, prompt messages) to the content Pi
 * gives the model: one bounded text block plus at most four images. Everything else goes to the
 * session's overflow files and is named in the text. Listings take the same path (`presentListing`),
 * one line per tool (`toolEntry`).
 */
import type { CallToolResult, ContentBlock, GetPromptResult, ReadResourceResult } from "@modelcontextprotocol/client";
import {
	type Counted,
	cutHead,
	encodeClean,
	INLINE_IMAGE_TYPES,
	INLINE_MAX_BYTES,
	INLINE_MAX_LINES,
	MAX_IMAGE_BASE64,
	MAX_INLINE_IMAGES,
	type OutputInfo,
	type OverflowStore,
	pieceTotals,
	type Refused,
	type Saved,
} from "../output.ts";
import { formatBytes, oneLine, shortText, stripTerminal } from "./text.ts";

export type PiBlock = Readonly<{ type: "text"; text: string }> | Readonly<{ type: "image"; data: string; mimeType: string }>;

export type Presented = Readonly<{ content: PiBlock[]; text: string; info: OutputInfo }>;

export type Part =
	| Readonly<{ kind: "text"; text: string }>
	| Readonly<{ kind: "image"; data: string; mimeType: string; label: string }>
	| Readonly<{ kind: "blob"; data: string; mimeType: string; label: string }>;

const EXTENSIONS: Readonly<Record<string, string>> = {
	"image/png": "png",
	"image/jpeg": "jpg",
	"image/gif": "gif",
	"image/webp": "webp",
	"image/svg+xml": "svg",
	"audio/wav": "wav",
	"audio/x-wav": "wav",
	"audio/mpeg": "mp3",
	"audio/ogg": "ogg",
	"application/pdf": "pdf",
	"application/json": "json",
	"text/plain": "txt",
};

function extensionOf(mimeType: string): string {
	return EXTENSIONS[mimeType.toLowerCase()] ?? "bin";
}

/** MCP Apps resources are for app hosts; pi-mcp renders no HTML, so they are omitted. */
export function isAppResource(uri: string, mimeType?: string): boolean {
	return uri.startsWith("ui://") || /^text\/html;\s*profile=mcp-app/i.test(mimeType ?? "");
}

export function blockParts(block: ContentBlock): Part[] {
	switch (block.type) {
		case "text":
			return [{ kind: "text", text: block.text }];
		case "image":
			return [{ kind: "image", data: block.data, mimeType: block.mimeType, label: "image" }];
		case "audio":
			return [{ kind: "blob", data: block.data, mimeType: block.mimeType, label: "audio" }];
		case "resource_link": {
			const details = [block.mimeType, block.description ? oneLine(block.description, 120) : undefined].filter(Boolean);
			return [
				{
					kind: "text",
					text: `[resource link: ${oneLine(block.name, 80)} <${oneLine(block.uri, 300)}>${details.length > 0 ? ` (${details.join("; ")})` : ""}]`,
				},
			];
		}
		case "resource":
			return resourceParts([block.resource]);
		default:
			return [{ kind: "text", text: `[unsupported content type "${oneLine((block as { type: string }).type, 40)}" omitted]` }];
	}
}

function resourceParts(contents: ReadResourceResult["contents"]): Part[] {
	return contents.flatMap((item): Part[] => {
		if (isAppResource(item.uri, item.mimeType))
			return [{ kind: "text", text: `[MCP App resource <${oneLine(item.uri, 200)}> omitted]` }];
		if ("text" in item) return [{ kind: "text", text: item.text }];
		const mimeType = item.mimeType ?? "application/octet-stream";
		const label = `resource <${oneLine(item.uri, 200)}>`;
		return mimeType.startsWith("image/")
			? [{ kind: "image", data: item.blob, mimeType, label }]
			: [{ kind: "blob", data: item.blob, mimeType, label }];
	});
}

/** Tool result → parts; `structuredContent` counts only when the result carries no text. */
export function toolResultParts(result: CallToolResult): Part[] {
	const parts = (result.content ?? []).flatMap(blockParts);
	const hasText = parts.some((part) => part.kind === "text");
	if (!hasText && result.structuredContent !== undefined) {
		return [{ kind: "text", text: JSON.stringify(result.structuredContent, null, 1) }, ...parts];
	}
	return parts;
}

export function resourceResultParts(result: ReadResourceResult): Part[] {
	return resourceParts(result.contents);
}

export function promptResultParts(result: GetPromptResult): Part[] {
	const head: Part[] = result.description ? [{ kind: "text", text: `(${oneLine(result.description, 300)})` }] : [];
	return [
		...head,
		...result.messages.flatMap((message): Part[] => [
			{ kind: "text", text: `${message.role}:` },
			...blockParts(message.content as ContentBlock),
		]),
	];
}

/** Bytes kept free for the truncation notice (its paths are bounded by the temp directory's). */
const NOTICE_ROOM = 1024;

type Placement = Readonly<{ inline: boolean; reason?: string }>;

function placeImage(part: Extract<Part, { kind: "image" }>, inlineSoFar: number): Placement {
	if (!INLINE_IMAGE_TYPES.includes(part.mimeType.toLowerCase())) return { inline: false, reason: "type not shown inline" };
	if (part.data.length > MAX_IMAGE_BASE64)
		return { inline: false, reason: `larger than ${formatBytes(MAX_IMAGE_BASE64)} of base64` };
	if (inlineSoFar >= MAX_INLINE_IMAGES) return { inline: false, reason: `more than ${MAX_INLINE_IMAGES} images in one result` };
	return { inline: true };
}

/** Why the overflow store did not save a file, in words. */
export function refusalText(refused: Refused): string {
	return refused.refused === "ended"
		? "the session has ended"
		: `this session's overflow limit of ${formatBytes(refused.capBytes)} is reached (${formatBytes(refused.usedBytes)} used)`;
}

function savedLine(what: string, mimeType: string, bytes: number, saved: Saved | Refused, reason?: string): string {
	const why = reason ? `, ${reason}` : "";
	const where = "path" in saved ? `saved to ${saved.path}` : `not saved: ${refusalText(saved)}`;
	return `[${what} ${oneLine(mimeType, 60)}, ${formatBytes(bytes)}${why}: ${where}]`;
}

/**
 * Builds the model's content from parts: escapes stripped, text cut to Pi's inline limits with an
 * explicit notice, the full text and every non-inline blob saved as overflow files.
 */
export async function present(parts: readonly Part[], store: OverflowStore, label: string): Promise<Presented> {
	const pieces: string[] = [];
	// Texts too long to show whole, encoded and checked once (`encodeClean`): their bytes go to the file as they are.
	const encoded = new Map<number, Counted>();
	const images: PiBlock[] = [];
	const saved: string[] = [];
	const add = (text: string, counted?: Counted) => {
		if (pieces.length > 0) pieces.push("\n");
		if (counted) encoded.set(pieces.length, counted);
		pieces.push(text);
	};
	for (const part of parts) {
		if (part.kind === "text") {
			// Clean (nothing to strip): the text as it came; otherwise, or without the kernel, the exact path.
			const clean = part.text.length > INLINE_MAX_BYTES ? encodeClean(part.text) : undefined;
			add(clean ? part.text : stripTerminal(part.text), clean);
			continue;
		}
		const placement = part.kind === "image" ? placeImage(part, images.length) : { inline: false };
		if (part.kind === "image" && placement.inline) {
			images.push({ type: "image", data: part.data, mimeType: part.mimeType });
			continue;
		}
		const bytes = Buffer.from(part.data, "base64");
		const result = await store.save(`${label}-${part.kind}.${extensionOf(part.mimeType)}`, [bytes]);
		if ("path" in result) saved.push(result.path);
		add(savedLine(part.label, part.mimeType, bytes.length, result, placement.reason));
	}
	const whole = cutHead(pieces, INLINE_MAX_BYTES, INLINE_MAX_LINES, encoded.size > 0 ? pieceTotals(pieces, encoded) : undefined);
	// When cutting, room is kept for the notice so that text and notice together stay within the limits.
	const cut = whole.truncated ? cutHead(pieces, INLINE_MAX_BYTES - NOTICE_ROOM, INLINE_MAX_LINES - 1, whole) : whole;
	if (!cut.truncated) {
		const text = cut.text || (images.length > 0 ? "" : "(no content)");
		const content: PiBlock[] = [...(text ? [{ type: "text" as const, text }] : []), ...images];
		return { content, text, info: { textBytes: cut.totalBytes, images: images.length, saved } };
	}
	const full = await store.save(
		`${label}.txt`,
		pieces.map((piece, index) => encoded.get(index)?.bytes ?? piece),
	);
	const where = "path" in full ? `Full output: ${full.path}` : `The full output was not saved: ${refusalText(full)}.`;
	const hidden = cut.totalBytes - cut.shownBytes;
	const notice = `[Output truncated: showing ${cut.shownLines} of ${cut.totalLines} lines (${formatBytes(cut.shownBytes)} of ${formatBytes(cut.totalBytes)}; ${hidden} bytes not shown). ${where}]`;
	const text = `${cut.text}${cut.text.endsWith("\n") || cut.text === "" ? "" : "\n"}${notice}`;
	return {
		content: [{ type: "text", text }, ...images],
		text,
		info: {
			textBytes: cut.totalBytes,
			images: images.length,
			truncated: {
				shownBytes: cut.shownBytes,
				totalBytes: cut.totalBytes,
				shownLines: cut.shownLines,
				totalLines: cut.totalLines,
			},
			overflowPath: "path" in full ? full.path : undefined,
			saved: "path" in full ? [...saved, full.path] : saved,
		},
	};
}

/**
 * A listing (tools, resources, templates, prompts; for the model and for `/mcp`): its lines as one
 * text through the same path as a tool result, so escapes are stripped, the text is kept within
 * 50 KiB / 2,000 lines, and the full listing goes to an overflow file. Server-given names in the
 * lines are expected escaped already (`escapeName`); descriptions are stripped here.
 */
export function presentListing(lines: readonly string[], store: OverflowStore, label: string): Promise<Presented> {
	return present([{ kind: "text", text: lines.join("\n") }], store, `${label}-list`);
}

/** A tool as every listing shows it: `name — one-line description` (`name` escaped by the caller). */
export function toolEntry(name: string, description: string | undefined): string {
	const text = shortText(description);
	return text ? `${name} — ${text}` : name;
}
