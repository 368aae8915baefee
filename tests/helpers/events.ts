/**
 * Pi's JSON output as tests read it: one record per line of stdout (JSON-mode events, RPC responses and
 * extension UI requests), and the tool results, assistant messages and texts in them.
 */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [k: string]: JsonValue };
/** One JSONL record from Pi's stdout (JSON-mode event, session header, RPC response or extension UI request). */
export interface JsonEvent {
	readonly type: string;
	readonly [key: string]: JsonValue | undefined;
}

export interface ToolExecution {
	readonly toolCallId: string;
	readonly toolName: string;
	/** Arguments from `tool_execution_start`. */
	readonly args: JsonValue | undefined;
	/** `undefined` while no `tool_execution_end` was seen. */
	readonly isError: boolean | undefined;
	/** Text blocks of `result.content` joined with "" (image blocks as `[image:<mimeType>]`). */
	readonly text: string;
	/** Raw `result` ({ content, details }) of `tool_execution_end`. */
	readonly result: JsonValue | undefined;
	readonly durationMs: number | undefined;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function isJsonEvent(v: unknown): v is JsonEvent {
	return isRecord(v) && typeof v.type === "string";
}

const str = (v: JsonValue | undefined): string | undefined => (typeof v === "string" ? v : undefined);

/** Text of a content array ([{type:"text",text}|{type:"image",mimeType}…]). */
export function contentText(content: JsonValue | undefined): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((block: JsonValue) => {
			if (!isRecord(block)) return "";
			if (block.type === "text" && typeof block.text === "string") return block.text;
			if (block.type === "image") return `[image:${String(block.mimeType)}]`;
			return "";
		})
		.join("");
}

/** Tool executions in start order, from `tool_execution_start` / `tool_execution_end` events. */
export function toolResults(events: readonly JsonEvent[]): ToolExecution[] {
	const starts = events.filter((e) => e.type === "tool_execution_start");
	const ends = new Map(events.filter((e) => e.type === "tool_execution_end").map((e) => [str(e.toolCallId) ?? "", e] as const));
	return starts.map((s) => {
		const id = str(s.toolCallId) ?? "";
		const end = ends.get(id);
		const result = end?.result;
		return {
			toolCallId: id,
			toolName: str(s.toolName) ?? "",
			args: s.args,
			isError: typeof end?.isError === "boolean" ? end.isError : undefined,
			text: isRecord(result) ? contentText(result.content) : "",
			result,
			durationMs: typeof end?.durationMs === "number" ? end.durationMs : undefined,
		};
	});
}

/** Completed assistant messages (`message_end` with role assistant). */
export function assistantMessages(events: readonly JsonEvent[]): JsonValue[] {
	return events.flatMap((e) =>
		e.type === "message_end" && isRecord(e.message) && e.message.role === "assistant" ? [e.message] : [],
	);
}

/** Text of the last completed assistant message ("" if none). */
export function finalText(events: readonly JsonEvent[]): string {
	const last = assistantMessages(events).at(-1);
	return isRecord(last) ? contentText(last.content) : "";
}

/** Splits a stream on "\n" only (never readline: U+2028/U+2029 are valid inside JSON strings). */
export class JsonlSplitter {
	private buffer = "";
	private readonly onRecord: (record: JsonEvent) => void;
	private readonly onJunk: (line: string) => void;
	constructor(onRecord: (record: JsonEvent) => void, onJunk: (line: string) => void) {
		this.onRecord = onRecord;
		this.onJunk = onJunk;
	}
	push(chunk: string): void {
		this.buffer += chunk;
		const lines = this.buffer.split("\n");
		this.buffer = lines.pop() ?? "";
		for (const line of lines) this.line(line);
	}
	end(): void {
		if (this.buffer !== "") this.line(this.buffer);
		this.buffer = "";
	}
	private line(raw: string): void {
		const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
		if (line.trim() === "") return;
		const parsed: unknown = (() => {
			try {
				return JSON.parse(line);
			} catch {
				return undefined;
			}
		})();
		if (isJsonEvent(parsed)) this.onRecord(parsed);
		else this.onJunk(line);
	}
}
