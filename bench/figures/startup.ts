/**
 * Figure 1, start-up tax: a Pi `-p` run (faux model answering text at once) with our extension and 8
 * configured but unused stdio servers ÷ the same run with an empty extension (`-ne -e empty-ext.ts`: what
 * loading any extension costs), paired in the same rounds, in wall and in CPU time. At least 100 rounds, so
 * that the median ratio resolves 2 % (its bootstrap interval is printed). Peers, for reference and with
 * fewer rounds, against Pi without any extension (`-ne`): Pi's built-in MCP with `direct` exposure (connects
 * every server before the first prompt) and with its default `codemode` exposure, and pi-mcp-adapter.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { count, readWire } from "../../tests/helpers/servers.ts";
import type { BenchConfig, FigureResult } from "../lib/config.ts";
import {
	ADAPTER_EXTENSION,
	EMPTY_EXTENSION,
	makeSandbox,
	OUR_EXTENSION,
	runPiRetrying,
	type Sandbox,
	SERVER,
	TOOL_ONLY_EXTENSION,
	writeMcpJson,
} from "../lib/pi.ts";
import {
	formatSummary,
	formatValue,
	interleave,
	medianInterval,
	pairedRatios,
	ratiosOf,
	type Summary,
	summarize,
	verdict,
} from "../lib/stats.ts";

/**
 * Figure 1's targets (restated, issue 49): wall ≤ 1.02×; CPU time at most 15 ms over the empty extension, in
 * ms (a ratio grows as Pi's own start gets faster while the tax stays ~12 ms).
 */
const TARGET = 1.02;
const CPU_TARGET_MS = 15;

type Variant = Readonly<{ sandbox: Sandbox; extensions: readonly string[]; noExtensions: boolean }>;

export async function startup(config: BenchConfig): Promise<FigureResult> {
	const rounds = config.pick(100, 1);
	const peerRounds = config.pick(3, 1);
	const SERVERS = config.pick(8, 2);
	const lazy = await makeSandbox("pi-bench-startup-");
	const direct = await makeSandbox("pi-bench-startup-direct-");
	try {
		const servers = (sandbox: Sandbox, exposure?: string) =>
			Object.fromEntries(
				Array.from({ length: SERVERS }, (_, i) => [
					`s${i + 1}`,
					{
						command: process.execPath,
						args: [SERVER],
						env: { FIXTURE_LOG: join(sandbox.root, "wire.log") },
						...(exposure ? { exposure } : {}),
					},
				]),
			);
		await writeMcpJson(lazy, servers(lazy));
		await writeMcpJson(direct, servers(direct, "direct"));
		const processes = new Map<string, number[]>();
		const cpu = new Map<string, number[]>();
		const measure = (key: string, variant: Variant) => async () => {
			const wire = join(variant.sandbox.root, "wire.log");
			await rm(wire, { force: true });
			const run = await runPiRetrying({ ...variant, mode: "print", script: [{ text: "ok" }], cpu: true });
			processes.set(key, [...(processes.get(key) ?? []), count(readWire(wire), "start")]);
			cpu.set(key, [...(cpu.get(key) ?? []), run.cpuMs]);
			return run.wallMs;
		};
		const baseline = measure("baseline", { sandbox: lazy, extensions: [], noExtensions: true });
		const ours = measure("ours", { sandbox: lazy, extensions: [OUR_EXTENSION], noExtensions: true });
		const empty = measure("empty", { sandbox: lazy, extensions: [EMPTY_EXTENSION], noExtensions: true });
		const toolOnly = measure("tool-only", { sandbox: lazy, extensions: [TOOL_ONLY_EXTENSION], noExtensions: true });
		const builtinDirect = measure("builtin-direct", { sandbox: direct, extensions: [], noExtensions: false });
		const builtinCodemode = measure("builtin-codemode", { sandbox: lazy, extensions: [], noExtensions: false });
		const adapter = measure("adapter", { sandbox: lazy, extensions: [ADAPTER_EXTENSION], noExtensions: true });
		// Untimed warm-up: Pi's extension transpile cache, the OS file cache, the adapter's metadata cache.
		if (!config.smoke)
			for (const variant of [baseline, ours, empty, toolOnly, builtinDirect, builtinCodemode, adapter]) await variant();
		processes.clear();
		cpu.clear();

		const main = await interleave(rounds, { empty, ours, toolOnly });
		const peers = await interleave(peerRounds, { baseline, builtinDirect, builtinCodemode, adapter });
		const base = summarize(peers.baseline);
		const oursSummary = summarize(main.ours);
		const emptySummary = summarize(main.empty);
		const ratio = pairedRatios(main.ours, main.empty);
		const interval = medianInterval(ratiosOf(main.ours, main.empty));
		const peer = (samples: number[]) => ({ wall: summarize(samples), ratio: pairedRatios(samples, peers.baseline) });
		const peerDirect = peer(peers.builtinDirect);
		const peerCodemode = peer(peers.builtinCodemode);
		const peerAdapter = peer(peers.adapter);
		const started = (key: string) => Math.max(0, ...(processes.get(key) ?? []));
		// CPU time of Pi and its children (bash `times`): less disturbed than wall time when others share the cores.
		const cpuOf = (key: string) => cpu.get(key) ?? [];
		const cpuRatio = pairedRatios(cpuOf("ours"), cpuOf("empty"));
		const cpuInterval = medianInterval(ratiosOf(cpuOf("ours"), cpuOf("empty")));
		// The CPU tax in ms: the median of per-round differences (paired like the ratios).
		const cpuOver = cpuOf("ours")
			.map((ms, i) => ms - (cpuOf("empty")[i] ?? Number.NaN))
			.filter(Number.isFinite);
		const cpuTax = summarize(cpuOver);
		const cpuTaxInterval = medianInterval(cpuOver);
		// The same rounds against an extension registering only pi-mcp's tool: what pi-mcp's code adds to the tool.
		const toolRatio = pairedRatios(main.ours, main.toolOnly);
		const toolCpuRatio = pairedRatios(cpuOf("ours"), cpuOf("tool-only"));
		const toolOverEmpty = pairedRatios(cpuOf("tool-only"), cpuOf("empty"));
		const short = (summary: Summary) => formatSummary(summary, "×").replace(/ \[.*$/, "");
		const range = (at: Readonly<{ low: number; high: number }>) => `95 % interval ${at.low.toFixed(3)}–${at.high.toFixed(3)}×`;
		const lines = [
			{
				name: "1 start-up tax",
				value: `${formatSummary(oursSummary, "ms")} with ${SERVERS} unused stdio servers, ${started("ours")} server processes started`,
				comparison: `baseline an empty extension ${formatSummary(emptySummary, "ms")}; ${rounds} paired rounds: wall ratio ${short(ratio)} (${range(interval)}), CPU time ${formatValue(cpuTax.median, "ms")} over it (95 % interval ${formatValue(cpuTaxInterval.low, "ms")}–${formatValue(cpuTaxInterval.high, "ms")}; ratio ${short(cpuRatio)}, ${range(cpuInterval)})`,
				target: `≤ ${TARGET}× in wall time, CPU time ≤ ${CPU_TARGET_MS} ms over the empty extension, 0 processes`,
				verdict: verdict(ratio.median <= TARGET && cpuTax.median <= CPU_TARGET_MS && started("ours") === 0),
			},
			{
				name: "1 start-up tax beyond the tool",
				value: `pi-mcp ÷ an extension registering only its \`mcp\` tool (same definition, no code behind it): wall ${short(toolRatio)} (${range(medianInterval(ratiosOf(main.ours, main.toolOnly)))}), CPU time ${short(toolCpuRatio)} (${range(medianInterval(ratiosOf(cpuOf("ours"), cpuOf("tool-only"))))})`,
				comparison: `that extension ÷ the empty one, CPU time ${short(toolOverEmpty)} (${range(medianInterval(ratiosOf(cpuOf("tool-only"), cpuOf("empty"))))}): what any extension with this tool pays`,
				target: "reference (splits figure 1's tax)",
				verdict: "info" as const,
			},
			{
				name: "1 start-up peers",
				value: `Pi built-in direct ${formatSummary(peerDirect.wall, "ms")} (${started("builtin-direct")} processes), built-in codemode ${formatSummary(peerCodemode.wall, "ms")} (${started("builtin-codemode")}), pi-mcp-adapter ${formatSummary(peerAdapter.wall, "ms")} (${started("adapter")})`,
				comparison: `ratios to Pi -ne in the same rounds ${short(peerDirect.ratio)}, ${short(peerCodemode.ratio)}, ${short(peerAdapter.ratio)}`,
				target: "reference only",
				verdict: "info" as const,
			},
		];
		const row = (name: string, how: string, wall: Summary, r: Summary | undefined, key: string) =>
			`| ${name} | ${how} | ${formatSummary(wall, "ms")} | ${r ? formatSummary(r, "×") : "1"} | ${started(key)} |`;
		const notes = [
			"Pi 1.6 `-p --no-session --model faux/faux-1 -e bench/fixtures/faux-record.ts … go` in a sandbox (own agent dir, cwd, HOME),",
			`\`PI_OFFLINE=1\`; the faux model answers \`ok\` at once. The agent dir's \`mcp.json\` lists ${SERVERS} stdio servers`,
			"(`node tests/fixtures/server.mjs`, each logging to a wire log); the built-in `direct` row uses the same list with",
			'`"exposure": "direct"`. Wall time from spawn to exit. One untimed warm-up run per variant (Pi\'s jiti transpile',
			"cache, the adapter's metadata cache), then the variants interleaved with the order rotated every round.",
			"",
			"| variant | Pi arguments | wall time median [min–max] | ratio (paired) | server processes started |",
			"|---|---|---|---|---|",
			row("an empty extension (the baseline)", "`-ne -e bench/fixtures/empty-ext.ts`", emptySummary, undefined, "empty"),
			row("**pi-mcp**", "`-ne -e index.ts`", oursSummary, ratio, "ours"),
			row(
				"pi-mcp's tool alone (no code behind it)",
				"`-ne -e bench/fixtures/tool-only-ext.ts`",
				summarize(main.toolOnly),
				pairedRatios(main.toolOnly, main.empty),
				"tool-only",
			),
			"",
			`Peers, against Pi without any extension in their own ${peerRounds} rounds:`,
			"",
			"| variant | Pi arguments | wall time median [min–max] | ratio to `-ne` (paired) | server processes started |",
			"|---|---|---|---|---|",
			row("Pi without MCP", "`-ne`: no built-in or discovered extension", base, undefined, "baseline"),
			row(
				"Pi built-in MCP, `direct`",
				"defaults (built-in `mcp`, `codemode`, `tool_search` loaded)",
				peerDirect.wall,
				peerDirect.ratio,
				"builtin-direct",
			),
			row("Pi built-in MCP, default `codemode`", "defaults", peerCodemode.wall, peerCodemode.ratio, "builtin-codemode"),
			row("pi-mcp-adapter", "`-ne -e node_modules/pi-mcp-adapter/index.ts`", peerAdapter.wall, peerAdapter.ratio, "adapter"),
			"",
			`CPU time (user + system of Pi and its children, from bash \`times\`; Pi runs as \`bash -c 'node cli.js …; times'\`):`,
			`empty extension ${formatSummary(summarize(cpuOf("empty")), "ms")}, pi-mcp ${formatSummary(summarize(cpuOf("ours")), "ms")},`,
			`paired ratio ${formatSummary(cpuRatio, "×")} (${range(cpuInterval)}); wall ${range(interval)}.`,
		].join("\n");
		return { lines, notes };
	} finally {
		await lazy.cleanup();
		await direct.cleanup();
	}
}
