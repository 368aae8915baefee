/**
 * Headless Pi runs for the benchmarks: the real Pi 1.6 CLI, offline, with the bench faux model
 * (bench/fixtures/faux-record.ts), in a throw-away sandbox. Wall time is measured from spawn to exit.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PI_CLI } from "../../tests/helpers/pi.ts";
import { SERVER } from "../../tests/helpers/servers.ts";

export { PI_CLI, SERVER };

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const OUR_EXTENSION = join(ROOT, "index.ts");
export const EMPTY_EXTENSION = join(ROOT, "bench/fixtures/empty-ext.ts");
export const TOOL_ONLY_EXTENSION = join(ROOT, "bench/fixtures/tool-only-ext.ts");
export const FAUX_RECORD = join(ROOT, "bench/fixtures/faux-record.ts");
export const ADAPTER_EXTENSION = join(ROOT, "node_modules/pi-mcp-adapter/index.ts");
export const EVERYTHING_SERVER = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
export const MEMORY_SERVER = join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js");

export type Sandbox = Readonly<{ root: string; agentDir: string; cwd: string; home: string; cleanup(): Promise<void> }>;

export async function makeSandbox(prefix = "pi-bench-"): Promise<Sandbox> {
	const root = await mkdtemp(join(tmpdir(), prefix));
	const agentDir = join(root, "agent");
	const cwd = join(root, "proj");
	const home = join(root, "home");
	await Promise.all([agentDir, cwd, home].map((dir) => mkdir(dir, { recursive: true })));
	return { root, agentDir, cwd, home, cleanup: () => rm(root, { recursive: true, force: true, maxRetries: 3 }) };
}

export function writeMcpJson(sandbox: Sandbox, servers: Readonly<Record<string, unknown>>): Promise<void> {
	return writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: servers }, null, 1));
}

export type Step = Readonly<{ tool: string; args?: Record<string, unknown> }> | Readonly<{ text: string }>;

export type PiRun = Readonly<{
	code: number | null;
	wallMs: number;
	/** CPU time (user + system) of Pi and its children, from bash's `times`; NaN unless `cpu` was asked for. */
	cpuMs: number;
	stdout: string;
	stderr: string;
	/** JSON-mode records with the time (ms since spawn) each arrived. */
	events: readonly Readonly<{ at: number; event: Record<string, unknown> }>[];
}>;

export type PiOptions = Readonly<{
	sandbox: Sandbox;
	mode: "print" | "json";
	/** Extensions after the faux model. */
	extensions: readonly string[];
	/** `-ne` (no built-in or discovered extensions) unless false. */
	noExtensions: boolean;
	script: readonly Step[];
	env?: Readonly<Record<string, string>>;
	timeoutMs?: number;
	/** Run Pi under `bash -c '…; times'` to also get its CPU time (Pi's stdout and exit code are kept). */
	cpu?: boolean;
}>;

/** Parses bash `times` output (second line: children's user and system time, e.g. `0m1.234s 0m0.345s`). */
function childCpuMs(stderr: string): { cpuMs: number; rest: string } {
	const lines = stderr.trimEnd().split("\n");
	const children = lines.at(-1) ?? "";
	const parts = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((match) => Number(match[1]) * 60_000 + Number(match[2]) * 1000);
	if (parts.length !== 2) return { cpuMs: Number.NaN, rest: stderr };
	return { cpuMs: (parts[0] as number) + (parts[1] as number), rest: lines.slice(0, -2).join("\n") };
}

const scriptCounter = { n: 0 };

export async function runPi(options: PiOptions): Promise<PiRun> {
	const script = join(options.sandbox.root, `script-${scriptCounter.n++}.json`);
	await writeFile(script, JSON.stringify(options.script));
	const argv = [
		PI_CLI,
		...(options.mode === "print" ? ["-p"] : ["--mode", "json"]),
		"--no-session",
		"--model",
		"faux/faux-1",
		...(options.noExtensions ? ["-ne"] : []),
		"-e",
		FAUX_RECORD,
		...options.extensions.flatMap((extension) => ["-e", extension]),
		"go",
	];
	const env = {
		PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
		HOME: options.sandbox.home,
		PI_CODING_AGENT_DIR: options.sandbox.agentDir,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		PI_FAUX_SCRIPT: script,
		...options.env,
	};
	const started = performance.now();
	const [command, args] = options.cpu
		? ["bash", ["-c", '"$0" "$@"; code=$?; times >&2; exit $code', process.execPath, ...argv]]
		: [process.execPath, argv];
	const child = spawn(command, args, {
		cwd: options.sandbox.cwd,
		env,
		stdio: ["ignore", "pipe", "pipe"],
		detached: true,
	});
	const out: string[] = [];
	const err: string[] = [];
	const events: { at: number; event: Record<string, unknown> }[] = [];
	const pending = { text: "" };
	child.stdout.setEncoding("utf8");
	child.stderr.setEncoding("utf8");
	child.stdout.on("data", (chunk: string) => {
		out.push(chunk);
		if (options.mode !== "json") return;
		const lines = (pending.text + chunk).split("\n");
		pending.text = lines.pop() ?? "";
		const at = performance.now() - started;
		for (const line of lines) {
			try {
				events.push({ at, event: JSON.parse(line) as Record<string, unknown> });
			} catch {
				// Not a JSON record.
			}
		}
	});
	child.stderr.on("data", (chunk: string) => err.push(chunk));
	const timer = setTimeout(() => killGroup(child.pid), options.timeoutMs ?? 60_000);
	const code = await new Promise<number | null>((resolve) => child.once("close", (exitCode) => resolve(exitCode)));
	clearTimeout(timer);
	const wallMs = performance.now() - started;
	// Whatever Pi left in its process group (it should leave nothing) goes now.
	killGroup(child.pid);
	await rm(script, { force: true });
	const cpu = options.cpu ? childCpuMs(err.join("")) : { cpuMs: Number.NaN, rest: err.join("") };
	const result = { code, wallMs, cpuMs: cpu.cpuMs, stdout: out.join(""), stderr: cpu.rest, events };
	if (code !== 0) throw new Error(`Pi exited with ${code}\n${result.stderr.slice(-2000)}\n${result.stdout.slice(-2000)}`);
	return result;
}

/**
 * `runPi`, tried again (up to `tries` times in all) when a run fails: on a shared machine one run in hundreds
 * can be killed from outside, and a figure of 100 rounds should not be lost to it. Each retry is logged.
 */
export async function runPiRetrying(options: PiOptions, tries = 3): Promise<PiRun> {
	const failures: unknown[] = [];
	while (failures.length < tries) {
		try {
			return await runPi(options);
		} catch (error) {
			failures.push(error);
			console.error(
				`bench: a Pi run failed (${String(error).split("\n", 1)[0]}); ${failures.length < tries ? "trying again" : "giving up"}`,
			);
		}
	}
	throw failures.at(-1);
}

function killGroup(pid: number | undefined): void {
	if (pid === undefined) return;
	try {
		process.kill(-pid, "SIGKILL");
	} catch {
		// Already gone.
	}
}

/** Tool executions of a JSON run: name, error flag, result text, and start→end time as seen on stdout. */
export function toolExecutions(run: PiRun): { name: string; isError: boolean; text: string; ms: number }[] {
	const starts = new Map<string, number>();
	const found: { name: string; isError: boolean; text: string; ms: number }[] = [];
	for (const { at, event } of run.events) {
		if (event.type === "tool_execution_start") starts.set(String(event.toolCallId), at);
		if (event.type === "tool_execution_end") {
			const result = event.result as { content?: { type: string; text?: string }[] } | undefined;
			found.push({
				name: String(event.toolName),
				isError: event.isError === true,
				text: (result?.content ?? []).map((block) => block.text ?? "").join(""),
				ms: at - (starts.get(String(event.toolCallId)) ?? at),
			});
		}
	}
	return found;
}

export type RecordedTool = Readonly<{ name: string; description: string; parameters: unknown }>;
export type RecordedSystem = Readonly<{
	content: string;
	sections: Readonly<Record<string, string | null>>;
	tools: readonly RecordedTool[];
	removed: readonly string[];
}>;

/** The system messages of every model request recorded through `BENCH_CONTEXT_LOG`. */
export async function readContextLog(path: string): Promise<RecordedSystem[][]> {
	const text = await readFile(path, "utf8");
	return text
		.split("\n")
		.filter(Boolean)
		.map((line) => (JSON.parse(line) as { system: RecordedSystem[] }).system);
}
