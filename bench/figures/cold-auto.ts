/**
 * Figure 2's `auto` part (issue 49): one server's first call in `auto` against the same call pinned to the
 * server's era, in one run, for the fixture (modern), a server that takes ~1.5 s to start (the fixture behind
 * `tests/fixtures/startup.mjs`, modern: it sleeps, so its start costs no CPU) and a published server
 * (`@modelcontextprotocol/server-everything`, legacy), run directly and through `npx` as users configure it (a
 * ~1 s start, most of it npm's own CPU). Each sample: `loadConfig` + `createRuntime` + one `tools/call`, timed
 * to the result; the processes the call started (Node's `child_process` diagnostics channel) and those still running after it (`/proc`).
 * A third, reference mode: pinned with a bystander, a second process of the same server started beside it
 * and left alone (killed after the call): what a second start costs on this machine, with no probe at all.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pidAlive } from "../../tests/helpers/processes.ts";
import type { BenchConfig } from "../lib/config.ts";
import { oursRuntime, resultText, SERVER_NAME } from "../lib/mcp.ts";
import { EVERYTHING_SERVER, makeSandbox, ROOT, SERVER } from "../lib/pi.ts";
import { formatSummary, interleave, type Line, pairedRatios, type Summary, summarize, verdict } from "../lib/stats.ts";

/** The first call in `auto` ÷ the same call pinned to the server's era. */
export const AUTO_TARGET = 1.1;

const STARTUP = join(ROOT, "tests/fixtures/startup.mjs");

export type AutoServer = Readonly<{
	key: string;
	label: string;
	entry: Readonly<Record<string, unknown>>;
	/** The era it answers in: what `auto` finds and the pin names. */
	era: "2026-07-28" | "legacy";
	tool: string;
	args: Readonly<Record<string, unknown>>;
}>;

export const AUTO_SERVERS: readonly AutoServer[] = [
	{
		key: "fixture",
		label: "fixture (modern)",
		entry: { command: process.execPath, args: [SERVER] },
		era: "2026-07-28",
		tool: "echo",
		args: { text: "cold" },
	},
	{
		key: "slow",
		label: "a 1.5 s start (modern)",
		entry: { command: process.execPath, args: [STARTUP, "stdio"], env: { FIXTURE_START_MS: "1500" } },
		era: "2026-07-28",
		tool: "echo",
		args: { text: "cold" },
	},
	{
		key: "everything",
		label: "server-everything (legacy)",
		entry: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] },
		era: "legacy",
		tool: "echo",
		args: { message: "cold" },
	},
	{
		key: "everything-npx",
		label: "server-everything through npx (legacy)",
		// As users configure a published server; `--offline`: the installed copy, never the registry.
		entry: { command: "npx", args: ["--offline", "-y", "@modelcontextprotocol/server-everything", "stdio"], cwd: ROOT },
		era: "legacy",
		tool: "echo",
		args: { message: "cold" },
	},
];

type Sample = Readonly<{ ms: number; used: number; left: number }>;

/** A second process of `server`, started now and never spoken to (stdin stays open, so it keeps running). */
function bystander(server: AutoServer): ChildProcess {
	const { command, args, env, cwd } = server.entry as {
		command: string;
		args: string[];
		env?: Record<string, string>;
		cwd?: string;
	};
	// Its own group, killed whole (see `firstCall`): `npx` starts the server as a child of its own.
	const options = { cwd, env: { ...process.env, ...env }, detached: true };
	return spawn(command, args, { ...options, stdio: ["pipe", "ignore", "ignore"] });
}

/** One first call: timed, with the processes it started and those left running after it. */
async function firstCall(server: AutoServer, protocolVersion: string, beside = false): Promise<Sample> {
	const sandbox = await makeSandbox(`pi-bench-auto-${server.key}-`);
	const other = beside ? bystander(server) : undefined;
	try {
		const entry = { ...server.entry, protocolVersion };
		await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { [SERVER_NAME]: entry } }));
		const spawned: ChildProcess[] = [];
		const onSpawn = (message: unknown) => {
			const child = (message as { process?: ChildProcess }).process;
			if (child) spawned.push(child);
		};
		subscribe("child_process", onSpawn);
		const started = performance.now();
		const runtime = await oursRuntime(sandbox, join(sandbox.root, "wire.log"));
		try {
			const result = await runtime.call(SERVER_NAME, server.tool, server.args);
			const ms = performance.now() - started;
			if (!resultText(result).toLowerCase().includes("cold"))
				throw new Error(`${server.label}: ${resultText(result).slice(0, 200)}`);
			unsubscribe("child_process", onSpawn);
			const left = spawned.filter((child) => child.pid !== undefined && pidAlive(child.pid)).length;
			return { ms, used: spawned.length, left };
		} finally {
			unsubscribe("child_process", onSpawn);
			await runtime.dispose();
		}
	} finally {
		try {
			if (other?.pid !== undefined) process.kill(-other.pid, "SIGKILL");
		} catch {
			// Already gone.
		}
		await sandbox.cleanup();
	}
}

export type AutoResult = Readonly<{
	server: AutoServer;
	auto: Summary;
	pinned: Summary;
	ratio: Summary;
	/** Pinned with a bystander (a second start beside it, no probe), and auto ÷ that. */
	beside: Summary;
	besideRatio: Summary;
	/** Most processes a first call started, and most left running after it: auto, pinned. */
	used: Readonly<{ auto: number; pinned: number }>;
	left: Readonly<{ auto: number; pinned: number }>;
}>;

/** Every server, `auto` and pinned interleaved (order rotated each round), after one untimed warm-up each. */
export async function autoVersusPinned(config: BenchConfig): Promise<readonly AutoResult[]> {
	const rounds = config.pick(8, 1);
	const results: AutoResult[] = [];
	for (const server of AUTO_SERVERS) {
		const seen: Record<"auto" | "pinned" | "beside", Sample[]> = { auto: [], pinned: [], beside: [] };
		const measure = (mode: "auto" | "pinned" | "beside") => async () => {
			const sample = await firstCall(server, mode === "auto" ? "auto" : server.era, mode === "beside");
			seen[mode].push(sample);
			return sample.ms;
		};
		await measure("auto")();
		await measure("pinned")();
		seen.auto.length = 0;
		seen.pinned.length = 0;
		seen.beside.length = 0;
		const samples = await interleave(rounds, { auto: measure("auto"), pinned: measure("pinned"), beside: measure("beside") });
		const most = (mode: "auto" | "pinned", key: "used" | "left") => Math.max(...seen[mode].map((sample) => sample[key]));
		results.push({
			server,
			auto: summarize(samples.auto),
			pinned: summarize(samples.pinned),
			ratio: pairedRatios(samples.auto, samples.pinned),
			beside: summarize(samples.beside),
			besideRatio: pairedRatios(samples.auto, samples.beside),
			used: { auto: most("auto", "used"), pinned: most("pinned", "used") },
			left: { auto: most("auto", "left"), pinned: most("pinned", "left") },
		});
	}
	return results;
}

export function autoLine(result: AutoResult): Line {
	const { server, used, left } = result;
	const ok = result.ratio.median <= AUTO_TARGET && used.auto <= 2 && used.pinned === 1 && left.auto === 1 && left.pinned === 1;
	return {
		name: `2 cold call auto vs pinned, ${server.label}`,
		value: `auto ${formatSummary(result.auto, "ms")}, ${used.auto} processes started, ${left.auto} left`,
		comparison: `baseline pinned to ${server.era} ${formatSummary(result.pinned, "ms")}, ${used.pinned} started, ${left.pinned} left; ratio ${formatSummary(result.ratio, "×")}; pinned with a bystander start ${formatSummary(result.beside, "ms")}, auto ÷ that ${formatSummary(result.besideRatio, "×")}`,
		target: `≤ ${AUTO_TARGET}× pinned; ≤ 2 processes (1 pinned), 1 left after the call`,
		verdict: verdict(ok),
	};
}

export function autoRows(results: readonly AutoResult[]): string[] {
	return [
		"| server | auto | started / left | pinned | started / left | ratio (paired) | pinned + bystander | auto ÷ that |",
		"|---|---|---|---|---|---|---|---|",
		...results.map(
			(r) =>
				`| ${r.server.label} | ${formatSummary(r.auto, "ms")} | ${r.used.auto} / ${r.left.auto} | ${r.server.era}: ${formatSummary(r.pinned, "ms")} | ${r.used.pinned} / ${r.left.pinned} | ${formatSummary(r.ratio, "×")} | ${formatSummary(r.beside, "ms")} | ${formatSummary(r.besideRatio, "×")} |`,
		),
	];
}
