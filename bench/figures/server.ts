/**
 * Figure 10, a server's own first call: how much longer a stdio server takes to answer its first
 * `tools/call` than its later ones, with no MCP client library on this side. Each round spawns the
 * server, does the legacy handshake and a `tools/list`, waits idle (so the server has settled after its
 * start, as a server connected long before the call has), then sends six calls one after another and
 * times each from the request's write to its answer's line. Servers: the fixture (SDK v2),
 * `@modelcontextprotocol/server-everything` and `@modelcontextprotocol/server-memory` (both published).
 *
 * This is the floor under figure 8's cold wait: whatever a client does, its first call
 * waits for the server's first answer. No target; it is context for figure 8.
 *
 * The client here is a few lines of newline-delimited JSON-RPC written by hand, on purpose: any MCP client
 * library would add its own first-call cost (the SDK compiles its codecs on first use), and that cost is
 * exactly what must stay out of this figure.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { BenchConfig, FigureResult } from "../lib/config.ts";
import { SETSID } from "../lib/mcp.ts";
import { EVERYTHING_SERVER, MEMORY_SERVER, SERVER } from "../lib/pi.ts";
import { formatSummary, type Line, type Summary, summarize } from "../lib/stats.ts";

const LATER_CALLS = 5;

type Target = Readonly<{
	name: string;
	script: string;
	args: readonly string[];
	tool: string;
	arguments: Readonly<Record<string, unknown>>;
	/** Extra environment, given a temporary directory of the round's own. */
	env?: (dir: string) => Readonly<Record<string, string>>;
}>;

const TARGETS: readonly Target[] = [
	{ name: "fixture", script: SERVER, args: ["stdio"], tool: "echo", arguments: { text: "hello" } },
	{ name: "server-everything", script: EVERYTHING_SERVER, args: ["stdio"], tool: "echo", arguments: { message: "hello" } },
	{
		name: "server-memory",
		script: MEMORY_SERVER,
		args: [],
		tool: "read_graph",
		arguments: {},
		env: (dir) => ({ MEMORY_FILE_PATH: join(dir, "memory.jsonl") }),
	},
];

/** One round: the first call's time and the later calls' times (ms). */
async function round(target: Target, idleMs: number): Promise<{ first: number; later: number[] }> {
	const dir = await mkdtemp(join(tmpdir(), "pi-bench-server-"));
	const command = [...(SETSID ? [process.execPath] : []), target.script, ...target.args];
	const child = spawn(SETSID ?? process.execPath, command, {
		env: { ...process.env, ...target.env?.(dir) },
		stdio: ["pipe", "pipe", "ignore"],
	});
	const waiting = new Map<number, (message: { error?: unknown }) => void>();
	createInterface({ input: child.stdout }).on("line", (line) => {
		const message = JSON.parse(line) as { id?: number; error?: unknown };
		const settle = message.id === undefined ? undefined : waiting.get(message.id);
		if (settle && message.id !== undefined) {
			waiting.delete(message.id);
			settle(message);
		}
	});
	const gone = new Promise<number | null>((resolve) => child.once("exit", resolve));
	const exited = gone.then((code) => Promise.reject(new Error(`${target.name} exited (${code}) during the figure`)));
	exited.catch(() => undefined);
	const ids = { last: 0 };
	const send = (message: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
	const request = async (method: string, params: object): Promise<void> => {
		const id = ++ids.last;
		const answered = new Promise<{ error?: unknown }>((resolve) => waiting.set(id, resolve));
		send({ id, method, params });
		const answer = await Promise.race([answered, exited]);
		if (answer.error) throw new Error(`${target.name}: ${method} failed: ${JSON.stringify(answer.error)}`);
	};
	const timedCall = async (): Promise<number> => {
		const started = performance.now();
		await request("tools/call", { name: target.tool, arguments: target.arguments });
		return performance.now() - started;
	};
	try {
		await request("initialize", {
			protocolVersion: "2025-11-25",
			capabilities: {},
			clientInfo: { name: "pi-mcp-bench", version: "0" },
		});
		send({ method: "notifications/initialized" });
		await request("tools/list", {});
		await new Promise((resolve) => setTimeout(resolve, idleMs));
		const first = await timedCall();
		const later: number[] = [];
		for (const _ of Array.from({ length: LATER_CALLS })) later.push(await timedCall());
		return { first, later };
	} finally {
		child.kill();
		await gone;
		await rm(dir, { recursive: true, force: true });
	}
}

export async function serverFirstCall(config: BenchConfig): Promise<FigureResult> {
	const rounds = config.pick(8, 1);
	const idleMs = config.pick(1000, 0);
	const targets = config.pick(TARGETS, TARGETS.slice(0, 1));
	const rows: { target: Target; first: Summary; later: Summary; ratio: Summary }[] = [];
	for (const target of targets) {
		const firsts: number[] = [];
		const laters: number[] = [];
		const ratios: number[] = [];
		for (const _ of Array.from({ length: rounds })) {
			const { first, later } = await round(target, idleMs);
			const laterMedian = summarize(later).median;
			firsts.push(first);
			laters.push(laterMedian);
			ratios.push(first / laterMedian);
		}
		rows.push({ target, first: summarize(firsts), later: summarize(laters), ratio: summarize(ratios) });
	}
	const lines: Line[] = rows.map(({ target, first, later, ratio }) => ({
		name: `10 server first call, ${target.name}`,
		value: `first ${formatSummary(first, "ms")}, later ${formatSummary(later, "ms")}`,
		comparison: `ratio ${formatSummary(ratio, "×")}`,
		target: "none (the floor under figure 8)",
		verdict: "info",
	}));
	const notes = [
		`Each of ${rounds} rounds spawns the server (through \`setsid\` when there is one, as pi-mcp starts stdio servers),`,
		`does the legacy handshake and a \`tools/list\`, waits ${idleMs} ms idle, then sends ${1 + LATER_CALLS} \`tools/call\` one after`,
		"another with a hand-written JSON-RPC client (no MCP client library, so no client-side first-call cost).",
		"First call: its round trip. Later calls: the median of the other five in the round. The ratio is per round.",
		"",
		"| server | tool | first call | later calls | first / later |",
		"|---|---|---|---|---|",
		...rows.map(
			({ target, first, later, ratio }) =>
				`| ${target.name} | \`${target.tool}\` | ${formatSummary(first, "ms")} | ${formatSummary(later, "ms")} | ${formatSummary(ratio, "×")} |`,
		),
	].join("\n");
	return { lines, notes };
}
