/**
 * Figure 13, pinning 5,000 tools (#47): one `tools/list` of 5,000 tools (a description and a small
 * schema each) from an SDK server over the in-memory pair, listed by an SDK client with and without
 * pinning in the same run, interleaved: without, the result goes straight to the SDK; with, every
 * definition is hashed in canonical form and compared with its pin first (`runtime/pinned.ts`'s filter,
 * the pins already written: a later listing). The first listing (pinning all 5,000, written once in the
 * background) is reported beside it. Target: at most 50 ms more per listing.
 */
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { Server } from "@modelcontextprotocol/server";
import { Pins, type PinsIo } from "../../src/pins/pins.ts";
import { filterMessage } from "../../src/runtime/pinned.ts";
import type { BenchConfig, FigureResult } from "../lib/config.ts";
import { formatValue, summarize, verdict } from "../lib/stats.ts";

const TOOLS = 5000;
const TARGET_MS = 50;

const tools = Array.from({ length: TOOLS }, (_, i) => ({
	name: `tool_${i}`,
	description: `Does thing number ${i} with the project's files, carefully and quickly.`,
	inputSchema: {
		type: "object" as const,
		properties: { path: { type: "string", description: "a path" }, count: { type: "number", default: i } },
		required: ["path"],
	},
	annotations: { readOnlyHint: i % 2 === 0 },
}));

const memoryIo = (): PinsIo => {
	const held = { text: undefined as string | undefined };
	return {
		read: async () => held.text,
		update: async (_path, next) => {
			held.text = next(held.text);
		},
	};
};

/** A client listing 5,000 tools; `pinned`: through the pins filter (its view). */
async function pair(pins: Pins | undefined) {
	const server = new Server({ name: "many", version: "1" }, { capabilities: { tools: {} } });
	server.setRequestHandler("tools/list", async () => ({ tools }));
	const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
	const client = new Client({ name: "bench", version: "0" }, { capabilities: {} });
	await server.connect(serverEnd);
	await client.connect(clientEnd);
	if (pins) {
		await pins.load();
		const view = pins.server("bench-identity", "user:many");
		const deliver = clientEnd.onmessage;
		const port = clientEnd as unknown as { onmessage?: (message: Readonly<Record<string, unknown>>, extra?: unknown) => void };
		if (deliver)
			port.onmessage = (message, extra) => (deliver as (m: unknown, e?: unknown) => void)(filterMessage(view, message), extra);
	}
	return { list: async () => (await client.listTools()).tools.length, close: () => client.close() };
}

export async function pinning(config: BenchConfig): Promise<FigureResult> {
	const rounds = config.pick(15, 2);
	const pins = new Pins("/bench/mcp-pins.json", memoryIo());
	const plain = await pair(undefined);
	const pinned = await pair(pins);
	const t0 = performance.now();
	if ((await pinned.list()) !== TOOLS) throw new Error("pinning withheld tools on first use");
	const first = performance.now() - t0;
	await pins.flush();
	const without: number[] = [];
	const withPins: number[] = [];
	for (const _ of Array.from({ length: rounds })) {
		const a = performance.now();
		await plain.list();
		const b = performance.now();
		if ((await pinned.list()) !== TOOLS) throw new Error("pinning withheld an unchanged tool");
		without.push(b - a);
		withPins.push(performance.now() - b);
	}
	await Promise.all([plain.close(), pinned.close()]);
	const added = summarize(withPins.map((ms, i) => ms - (without[i] ?? 0)));
	const base = summarize(without);
	return {
		lines: [
			{
				name: "13 pinning 5,000 tools",
				value: `${added.median >= 0 ? "+" : ""}${formatValue(added.median, "ms")} a listing (first use ${formatValue(first - base.median, "ms")} more)`,
				comparison: `baseline ${formatValue(base.median, "ms")} unpinned`,
				target: `≤ +${TARGET_MS} ms`,
				verdict: verdict(added.median <= TARGET_MS),
			},
		],
		notes: `Listing ${TOOLS} tools over the SDK's in-memory pair, ${rounds} interleaved rounds: unpinned median ${base.median.toFixed(1)} ms (min ${base.min.toFixed(1)}, max ${base.max.toFixed(1)}); pinned adds median ${added.median.toFixed(1)} ms (min ${added.min.toFixed(1)}, max ${added.max.toFixed(1)}). First listing (pins all ${TOOLS}): ${first.toFixed(1)} ms.`,
	};
}
