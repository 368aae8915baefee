/**
 * The early start, registered in one line: `withEarlyStart(pi, calls)` listens to the model writing `mcp`
 * calls and hands back the same `Calls`, whose sessions give each call what was started for it. Its work
 * (`start.ts`) loads when the model begins its first `mcp` call, not with Pi (bench figure 1); what
 * happens meanwhile is replayed in order, and a call that runs before then simply gets no head start.
 * Without this file, `index.ts` would hand its `Calls` to the tool as they are.
 */
import type { ExtensionAPI, MessageUpdateEvent } from "@earendil-works/pi-coding-agent";
import type { Calls } from "../../contracts.ts";
import type { EarlyStart } from "./start.ts";
import type { ToolDefinition } from "./stream.ts";

/** Whether a `message_update` is about a call of the `mcp` tool (its start, a delta or its end). */
function mcpCall(event: MessageUpdateEvent): boolean {
	const update = event.assistantMessageEvent;
	if (update.type !== "toolcall_start" && update.type !== "toolcall_delta" && update.type !== "toolcall_end") return false;
	const block = update.type === "toolcall_end" ? update.toolCall : update.partial.content[update.contentIndex];
	return block?.type === "toolCall" && block.name === "mcp";
}

/** The early start until its module has loaded: what arrives is queued, then replayed in order. */
class Pending {
	#real?: EarlyStart;
	#queue?: ((real: EarlyStart) => void)[];
	readonly #make: () => Promise<EarlyStart>;

	constructor(make: () => Promise<EarlyStart>) {
		this.#make = make;
	}

	get real(): EarlyStart | undefined {
		return this.#real;
	}

	/** Loads the early start at the first `mcp` call (once; a failed load leaves the calls without it). */
	load(event: MessageUpdateEvent): void {
		if (this.#real || this.#queue || !mcpCall(event)) return;
		this.#queue = [];
		this.#make().then(
			(real) => {
				for (const op of this.#queue ?? []) op(real);
				this.#real = real;
				this.#queue = undefined;
			},
			() => {
				this.#queue = undefined; // The call itself reports a damaged installation.
			},
		);
	}

	later(op: (real: EarlyStart) => void): void {
		if (this.#real) op(this.#real);
		else this.#queue?.push(op);
	}
}

export function withEarlyStart(pi: ExtensionAPI, calls: Calls, tool: ToolDefinition): Calls {
	// A host without an active-tool list (before Pi 1.6) has every registered tool active.
	const active = () => typeof pi.getActiveTools !== "function" || pi.getActiveTools().includes("mcp");
	const early = new Pending(async () => {
		// The SDK's load begins with the call, not after the early start's own; the configuration is read first.
		await calls.preload();
		const { EarlyStart } = await import("./start.ts");
		return new EarlyStart(calls, active, tool);
	});
	pi.on("message_update", (event) => {
		early.load(event);
		early.later((real) => real.update(event));
	});
	pi.on("tool_execution_end", (event) => early.later((real) => real.ended(event.toolCallId, event.result)));
	pi.on("turn_end", () => early.later((real) => real.sweep()));
	pi.on("agent_end", () => early.later((real) => real.sweep()));
	return {
		...calls,
		open: (call) => {
			if (!call) return calls.open();
			// Taken at once, before any wait: what the call uses is in use from now on. Before the early start
			// has loaded, the call runs without early work and its take is replayed so nothing waits for it.
			const taken = early.real?.take(call);
			if (!taken) early.later((real) => void real.take(call));
			return calls.open(call).then((session) => (taken ? taken(session) : session));
		},
	};
}
