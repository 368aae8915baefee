/**
 * Figure 6, coalescing: 16 concurrent first calls on a fresh runtime → processes spawned, handshake
 * requests (`initialize` in legacy, `server/discover` in auto) and `tools/list` requests on the wire
 * (the fixture's FIXTURE_LOG). In auto the handshakes counted are the resident's (the process that lists);
 * the probe sibling's `server/discover` is the probe. Reference: the raw SDK, 16 concurrent `listTools()`
 * on one connection.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { count, readWire, type WireLine } from "../../tests/helpers/servers.ts";
import type { BenchConfig, FigureResult } from "../lib/config.ts";
import { expectEcho, type Mode, oursRuntime, oursSandbox, rawClient, SERVER_NAME } from "../lib/mcp.ts";
import { type Line, summarize, verdict } from "../lib/stats.ts";

const CALLS = 16;

type Counts = Readonly<{ processes: number; initialize: number; discover: number; list: number; calls: number }>;

const counts = (wire: readonly WireLine[]): Counts => {
	const residents = new Set(wire.filter((line) => line.method === "tools/list").map((line) => line.pid));
	const onResidents = wire.filter((line) => residents.has(line.pid));
	return {
		processes: count(wire, "start"),
		initialize: count(onResidents, "initialize"),
		discover: count(onResidents, "server/discover"),
		list: count(wire, "tools/list"),
		calls: count(wire, "tools/call"),
	};
};

async function ours(mode: Mode, rounds: number): Promise<{ counts: Counts[]; ms: number[] }> {
	const sandbox = await oursSandbox(mode);
	const wire = join(sandbox.root, "wire.log");
	const found: Counts[] = [];
	const times: number[] = [];
	try {
		for (const _ of Array.from({ length: rounds })) {
			await rm(wire, { force: true });
			const runtime = await oursRuntime(sandbox, wire);
			try {
				const started = performance.now();
				const results = await Promise.all(
					Array.from({ length: CALLS }, (_, i) => runtime.call(SERVER_NAME, "echo", { text: `first-${i}` })),
				);
				times.push(performance.now() - started);
				for (const [i, result] of results.entries()) expectEcho(result, `first-${i}`);
			} finally {
				await runtime.dispose();
			}
			found.push(counts(readWire(wire)));
		}
		return { counts: found, ms: times };
	} finally {
		await sandbox.cleanup();
	}
}

/** The SDK does not coalesce: 16 concurrent listTools() on one connection send 16 tools/list. */
async function rawLists(mode: Mode): Promise<Counts> {
	const sandbox = await oursSandbox(mode);
	const wire = join(sandbox.root, "wire.log");
	try {
		const { client, transport } = rawClient(mode, wire);
		await client.connect(transport);
		await Promise.all(Array.from({ length: CALLS }, () => client.listTools()));
		await client.close();
		return counts(readWire(wire));
	} finally {
		await sandbox.cleanup();
	}
}

const worst = (list: readonly Counts[], key: keyof Counts): number => Math.max(...list.map((entry) => entry[key]));

export async function coalesce(config: BenchConfig): Promise<FigureResult> {
	const rounds = config.pick(3, 1);
	const legacy = await ours("legacy", rounds);
	const auto = await ours("auto", rounds);
	const rawLegacy = await rawLists("legacy");
	const line = (mode: Mode, result: { counts: Counts[]; ms: number[] }): Line => {
		const handshake = mode === "legacy" ? "initialize" : "discover";
		const processes = worst(result.counts, "processes");
		const handshakes = worst(result.counts, handshake);
		const lists = worst(result.counts, "list");
		const wantProcesses = mode === "legacy" ? 1 : 2;
		return {
			name: `6 coalescing ${mode}`,
			value: `${CALLS} concurrent first calls → ${processes} process${processes === 1 ? "" : "es"}, ${handshakes} ${mode === "legacy" ? "initialize" : "server/discover"}, ${lists} tools/list, ${worst(result.counts, "calls")} tools/call (all ${CALLS} answered in ${summarize(result.ms).median.toFixed(0)} ms)`,
			comparison: `baseline raw SDK, ${CALLS} concurrent listTools() on one connection: ${rawLegacy.list} tools/list`,
			target: mode === "legacy" ? "1 / 1 / 1" : "2 (1 + probe) / 1 / 1",
			verdict: verdict(processes === wantProcesses && handshakes === 1 && lists === 1),
		};
	};
	const lines = [line("legacy", legacy), line("auto", auto)];
	const row = (mode: Mode, list: readonly Counts[]) =>
		list
			.map(
				(entry, i) =>
					`| ${mode} | ${i + 1} | ${entry.processes} | ${entry.initialize} | ${entry.discover} | ${entry.list} | ${entry.calls} |`,
			)
			.join("\n");
	const notes = [
		`A fresh runtime (loadConfig + createRuntime) gets ${CALLS} \`runtime.call("fx", "echo", …)\` at once; the fixture server's`,
		"wire log (`FIXTURE_LOG`, shared by every process of the connection, the SDK's probe sibling included) counts process",
		`starts and requests. ${rounds} round${rounds === 1 ? "" : "s"} per mode; the line shows the worst round.`,
		"",
		"| mode | round | processes | initialize | server/discover | tools/list | tools/call |",
		"|---|---|---|---|---|---|---|",
		row("legacy", legacy.counts),
		row("auto", auto.counts),
		"",
		`Reference: the raw SDK with ${CALLS} concurrent \`listTools()\` on one legacy connection sent ${rawLegacy.list} \`tools/list\` requests`,
		"(the SDK does not coalesce; with the legacy default TTL of 0 it does not cache either).",
	].join("\n");
	return { lines, notes };
}
