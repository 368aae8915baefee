/**
 * Figures 8 and 9 (issue 15): the first call as a user feels it, with a faux model that streams its tool
 * calls at a realistic pace (`BENCH_FAUX_TPS`, one token of 4 characters per delta, on the wall clock).
 * - 8 "first-call wait": from the end of a call's streaming (`toolcall_end` on Pi's JSON stream) to its
 *   result (`tool_execution_end`), for the first call (cold) and a second one (warm) of the same run, held
 *   against built-in `direct`'s cold wait (it spawns its servers at start-up) in the same rounds;
 * - 9 "launch to first result": from spawning Pi to the first call's result, with 1 and with 8 servers.
 * Each against Pi's built-in MCP (`direct` and its default `codemode`) and pi-mcp-adapter, in the same run.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { BenchConfig, FigureResult } from "../lib/config.ts";
import {
	ADAPTER_EXTENSION,
	makeSandbox,
	OUR_EXTENSION,
	type PiRun,
	runPiRetrying,
	type Sandbox,
	SERVER,
	writeMcpJson,
} from "../lib/pi.ts";
import { formatSummary, interleave, type Line, pairedRatios, type Summary, summarize, verdict } from "../lib/stats.ts";

/** Tokens per second of the faux model: a fast hosted model's output rate. */
export const TOKENS_PER_SECOND = 50;
/** What each call sends: a sentence of 120 characters (~30 tokens), as a search query or a short message would be. */
const TEXTS = ["first", "second"].map((label) =>
	`${label}: summarise the open issues about streaming tool calls and list the three oldest ones with their owners`.padEnd(
		120,
		".",
	),
);

type Variant = Readonly<{
	key: string;
	label: string;
	how: string;
	/** Extra fields for every server entry in mcp.json. */
	entry: Readonly<Record<string, unknown>>;
	extensions: readonly string[];
	noExtensions: boolean;
	/** The tool call that echoes `text` through the fixture server `fx`. */
	call: (text: string) => Readonly<{ tool: string; args: Record<string, unknown> }>;
	/** Pi settings.json for the variant's agent dir. */
	settings?: Readonly<Record<string, unknown>>;
	/** Whether a result's text answers the call that sent `text` (default: it echoes the text). */
	answers?: (result: string, text: string) => boolean;
}>;

const OURS_CALL = (text: string) => ({ tool: "mcp", args: { action: "call", server: "fx", tool: "echo", args: { text } } });

export const VARIANTS: readonly Variant[] = [
	{
		key: "ours-legacy",
		label: "pi-mcp (legacy)",
		how: '`-ne -e index.ts`, `"protocolVersion": "legacy"`',
		entry: { protocolVersion: "legacy" },
		extensions: [OUR_EXTENSION],
		noExtensions: true,
		call: OURS_CALL,
	},
	{
		key: "ours-auto",
		label: "pi-mcp (auto, the default)",
		how: "`-ne -e index.ts`",
		entry: {},
		extensions: [OUR_EXTENSION],
		noExtensions: true,
		call: OURS_CALL,
	},
	{
		key: "ours-legacy-schema",
		label: "pi-mcp (legacy), echo with an output schema",
		how: "as pi-mcp (legacy), the fixture started with `FIXTURE_ECHO_SCHEMA=1`",
		entry: { protocolVersion: "legacy", env: { FIXTURE_ECHO_SCHEMA: "1" } },
		extensions: [OUR_EXTENSION],
		noExtensions: true,
		call: OURS_CALL,
	},
	{
		key: "ours-legacy-tools",
		label: "pi-mcp (legacy), a `tools` query instead of the call",
		how: 'as pi-mcp (legacy), `mcp({ action: "tools", server: "fx", query })` with the same sentence as the query',
		entry: { protocolVersion: "legacy" },
		extensions: [OUR_EXTENSION],
		noExtensions: true,
		call: (text) => ({ tool: "mcp", args: { action: "tools", server: "fx", query: text } }),
		answers: (result) => result.startsWith("fx: "),
	},
	{
		key: "direct",
		label: "Pi built-in MCP, `direct`",
		how: 'defaults, `"exposure": "direct"`, tool `mcp__fx__echo`',
		entry: { exposure: "direct" },
		extensions: [],
		noExtensions: false,
		call: (text) => ({ tool: "mcp__fx__echo", args: { text } }),
	},
	{
		key: "codemode",
		label: "Pi built-in MCP, default `codemode`",
		how: "defaults, a `codemode` script calling `tools.mcp__fx__echo`",
		entry: {},
		extensions: [],
		noExtensions: false,
		call: (text) => ({
			tool: "codemode",
			args: {
				code: `const result = await tools.mcp__fx__echo({ text: ${JSON.stringify(text)} });\nreturn result.content[0].text;`,
			},
		}),
		settings: { defaultTools: ["+codemode"] },
	},
	{
		key: "adapter",
		label: "pi-mcp-adapter",
		how: '`-ne -e node_modules/pi-mcp-adapter/index.ts`, proxy `mcp({ tool: "fx_echo" })`, metadata cache warm',
		entry: {},
		extensions: [ADAPTER_EXTENSION],
		noExtensions: true,
		call: (text) => ({ tool: "mcp", args: { tool: "fx_echo", args: { text } } }),
	},
];

/** What one run measured (ms): each call's wait after its streaming ended, and spawn → first result. */
type Sample = Readonly<{ cold: number; warm: number; firstResult: number }>;

/** Reads the two calls' `toolcall_end` and `tool_execution_end` times from Pi's JSON stream. */
function measure(run: PiRun, variant: Variant): Sample {
	const ended = new Map<string, number>();
	const results: { id: string; at: number; text: string; isError: boolean }[] = [];
	for (const { at, event } of run.events) {
		const update = event.assistantMessageEvent as { type?: string; toolCall?: { id?: string } } | undefined;
		if (event.type === "message_update" && update?.type === "toolcall_end" && update.toolCall?.id) {
			ended.set(update.toolCall.id, at);
		}
		// Only the model's own calls (a codemode script's inner calls have ids of their own).
		if (event.type === "tool_execution_end" && ended.has(String(event.toolCallId))) {
			const result = event.result as { content?: { type: string; text?: string }[] } | undefined;
			const text = (result?.content ?? []).map((block) => block.text ?? "").join("");
			results.push({ id: String(event.toolCallId), at, text, isError: event.isError === true });
		}
	}
	const [first, second] = results;
	const answers = variant.answers ?? ((result, text) => result.includes(text.slice(0, 60)));
	const echoed = (result: typeof first, text: string) => result && !result.isError && answers(result.text, text);
	if (!first || !second || !echoed(first, TEXTS[0] as string) || !echoed(second, TEXTS[1] as string)) {
		throw new Error(
			`${variant.label}: the echo calls failed: ${JSON.stringify(results).slice(0, 600)}\n${run.stderr.slice(-1000)}`,
		);
	}
	const wait = (result: { id: string; at: number }) => result.at - (ended.get(result.id) ?? Number.NaN);
	return { cold: wait(first), warm: wait(second), firstResult: first.at };
}

type Measured = Readonly<{ variant: Variant; samples: readonly Sample[] }>;

/** Runs of this bench process by server count: figure 9 with 1 server reuses figure 8's runs. */
const measuredRuns = new Map<number, Promise<Measured[]>>();

function measured(config: BenchConfig, servers: number): Promise<Measured[]> {
	const known = measuredRuns.get(servers);
	if (known) return known;
	const made = measureAll(
		config,
		servers,
		servers === 1 ? VARIANTS : VARIANTS.filter((variant) => !variant.key.startsWith("ours-legacy")),
	);
	measuredRuns.set(servers, made);
	return made;
}

/** Every variant in its own sandbox with `servers` fixture servers (the calls go to `fx`), interleaved. */
async function measureAll(config: BenchConfig, servers: number, variants: readonly Variant[]): Promise<Measured[]> {
	const rounds = config.pick(8, 1);
	const sandboxes: Sandbox[] = [];
	try {
		const prepared = await Promise.all(
			variants.map(async (variant) => {
				const sandbox = await makeSandbox(`pi-bench-stream-${variant.key}-`);
				sandboxes.push(sandbox);
				const names = ["fx", ...Array.from({ length: servers - 1 }, (_, i) => `s${i + 2}`)];
				await writeMcpJson(
					sandbox,
					Object.fromEntries(names.map((name) => [name, { command: process.execPath, args: [SERVER], ...variant.entry }])),
				);
				if (variant.settings) await writeFile(join(sandbox.agentDir, "settings.json"), JSON.stringify(variant.settings));
				return { variant, sandbox };
			}),
		);
		const samples = new Map<string, Sample[]>();
		const runs = Object.fromEntries(
			prepared.map(({ variant, sandbox }) => [
				variant.key,
				async () => {
					const run = await runPiRetrying({
						sandbox,
						mode: "json",
						extensions: variant.extensions,
						noExtensions: variant.noExtensions,
						script: [variant.call(TEXTS[0] as string), variant.call(TEXTS[1] as string), { text: "done" }],
						env: { BENCH_FAUX_TPS: String(config.pick(TOKENS_PER_SECOND, 1000)) },
					});
					const sample = measure(run, variant);
					samples.set(variant.key, [...(samples.get(variant.key) ?? []), sample]);
					return sample.firstResult;
				},
			]),
		);
		// Untimed warm-up: Pi's transpile cache, the OS file cache, the adapter's metadata cache.
		if (!config.smoke) for (const run of Object.values(runs)) await run();
		samples.clear();
		await interleave(rounds, runs);
		return variants.map((variant) => ({ variant, samples: samples.get(variant.key) ?? [] }));
	} finally {
		for (const sandbox of sandboxes) await sandbox.cleanup();
	}
}

const of = (measured: readonly Measured[], key: string, pick: (sample: Sample) => number): number[] =>
	(measured.find((entry) => entry.variant.key === key)?.samples ?? []).map(pick);

const PEERS = ["direct", "codemode", "adapter"] as const;
/** Peers that start no server at start-up (Pi's built-in connects every server at session start, `codemode` too). */
const LAZY_PEERS = ["adapter"] as const;
/** Figure 8's targets: pi-mcp's cold wait ÷ built-in `direct`'s, paired by round. */
export const COLD_TARGETS = { legacy: 1.2, auto: 1.5 } as const;
const PEER_NAMES: Readonly<Record<string, string>> = {
	direct: "built-in direct",
	codemode: "built-in codemode",
	adapter: "pi-mcp-adapter",
	"ours-legacy": "pi-mcp legacy",
	"ours-auto": "pi-mcp auto",
};

const METHOD = [
	`Pi 1.6 \`--mode json\`, the faux model (\`bench/fixtures/faux-record.ts\`) streaming at ${TOKENS_PER_SECOND} tokens/s, one token`,
	"(4 characters) per delta, on the wall clock (delta n due n/TPS s after the response starts; a late one goes out at once, as",
	"a hosted model's stream keeps coming while the client works), each tool-call delta with the partial arguments of its own",
	"text, as a real provider's. Each run: two calls that echo a 120-character",
	"sentence (~30 tokens) through the fixture server `fx` (`tests/fixtures/server.mjs` over stdio), then a text answer. Each",
	"variant writes its call the way its model would (pi-mcp `mcp({ action, server, tool, args })`, ~44 tokens; built-in",
	"`mcp__fx__echo({ text })`, ~32; codemode a script, ~48; adapter `mcp({ tool, args })`, ~38), each in its own sandbox, with",
	"one untimed warm-up run each (the adapter's metadata cache) and the variants interleaved, order rotated every round.",
	"Times are taken when Pi's JSON records arrive on stdout: `toolcall_end` (the model finished writing the call) and",
	"`tool_execution_end` (the result), and from spawning Pi for the launch time. Codemode runs with",
	'`"defaultTools": ["+codemode"]`, so the tool is there before its server connects.',
].join("\n");

export async function firstCallWait(config: BenchConfig): Promise<FigureResult> {
	const runs = await measured(config, 1);
	const cold = (key: string) => summarize(of(runs, key, (sample) => sample.cold));
	const warm = (key: string) => summarize(of(runs, key, (sample) => sample.warm));
	const ratio = (key: string) =>
		pairedRatios(
			of(runs, key, (sample) => sample.cold),
			of(runs, key, (sample) => sample.warm),
		);
	const toDirect = (key: string) =>
		pairedRatios(
			of(runs, key, (sample) => sample.cold),
			of(runs, "direct", (sample) => sample.cold),
		);
	const lazy = LAZY_PEERS.map((peer) => `${PEER_NAMES[peer]} ${formatSummary(cold(peer), "ms")}`);
	const line = (key: "ours-legacy" | "ours-auto", mode: "legacy" | "auto"): Line => {
		const target = COLD_TARGETS[mode];
		const quicker = LAZY_PEERS.filter((peer) => cold(peer).median < cold(key).median).map((peer) => PEER_NAMES[peer]);
		return {
			name: `8 first-call wait ${mode}`,
			value: `cold ${formatSummary(cold(key), "ms")}, warm ${formatSummary(warm(key), "ms")}`,
			comparison: `baseline built-in direct cold ${formatSummary(cold("direct"), "ms")}, ratio ${formatSummary(toDirect(key), "×")}; peers that start nothing at start-up, cold: ${lazy.join(", ")}; faster of those: ${quicker.length > 0 ? quicker.join(", ") : "none"}`,
			target: `cold ≤ ${target}× direct's cold, no peer that starts nothing at start-up faster`,
			verdict: verdict(toDirect(key).median <= target && quicker.length === 0),
		};
	};
	const lines = [line("ours-legacy", "legacy"), line("ours-auto", "auto")];
	const notes = [
		METHOD,
		"",
		"| variant | Pi arguments | cold wait (first call) | cold ÷ direct's cold (paired) | warm wait (second call) | cold ÷ warm (paired) |",
		"|---|---|---|---|---|---|",
		...VARIANTS.map(
			(variant) =>
				`| ${variant.label} | ${variant.how} | ${formatSummary(cold(variant.key), "ms")} | ${formatSummary(toDirect(variant.key), "×")} | ${formatSummary(warm(variant.key), "ms")} | ${formatSummary(ratio(variant.key), "×")} |`,
		),
		"",
		"pi-mcp starts the server when the streamed arguments name it (`server` complete, the action one that connects), and for",
		"`call`, `describe` and `tools` also lists its tools, so the first call finds the connection ready when the model finishes",
		"writing it; once the call names its tool, the check of that tool's output schema is compiled (the SDK compiles it on a",
		"tool's first call: the schema row, against the plain legacy row, shows what is left of it). A `tools` call uses the",
		"listing sent while it was written (also on a connected server: the second call's), and a query finds its search index",
		"built (the `tools` row; legacy, where the SDK caches no listing). The built-in connects `direct` servers before the first prompt and `codemode` servers in the background from session start.",
	].join("\n");
	return { lines, notes };
}

export async function launchToResult(config: BenchConfig): Promise<FigureResult> {
	const counts = [1, config.pick(8, 2)];
	const all = [];
	for (const servers of counts) all.push({ servers, measured: await measured(config, servers) });
	const first = (measured: readonly Measured[], key: string) => summarize(of(measured, key, (sample) => sample.firstResult));
	const lines: Line[] = all.map(({ servers, measured }) => {
		const ours = first(measured, "ours-auto");
		const peers = PEERS.map((peer) => ({ peer, summary: first(measured, peer) }));
		const fastestPeer = Math.min(...peers.map(({ summary }) => summary.median));
		const target = servers === 1 ? 1.05 : 1;
		return {
			name: `9 launch to first result, ${servers} server${servers === 1 ? "" : "s"}`,
			value: `pi-mcp ${formatSummary(ours, "ms")}`,
			comparison: `peers: ${peers.map(({ peer, summary }) => `${PEER_NAMES[peer]} ${formatSummary(summary, "ms")}`).join(", ")}; ratio to the fastest peer ${(ours.median / fastestPeer).toFixed(3)}×`,
			target: servers === 1 ? "within 1.05× of the fastest" : "the fastest of all",
			verdict: verdict(ours.median <= fastestPeer * target),
		};
	});
	const row = (measured: readonly Measured[], servers: number, variant: Variant, base: Summary) => {
		const summary = first(measured, variant.key);
		return `| ${servers} | ${variant.label} | ${formatSummary(summary, "ms")} | ${(summary.median / base.median).toFixed(3)}× |`;
	};
	const notes = [
		METHOD,
		"",
		"Launch to first result: from spawning Pi to the first call's `tool_execution_end`, with 1 and with 8 configured",
		"servers (`fx` and seven more of the same fixture; the calls go to `fx`). pi-mcp in its default `auto` mode.",
		"",
		"| servers | variant | launch to first result | ÷ pi-mcp |",
		"|---|---|---|---|",
		...all.flatMap(({ servers, measured }) =>
			measured.map(({ variant }) => row(measured, servers, variant, first(measured, "ours-auto"))),
		),
	].join("\n");
	return { lines, notes };
}
