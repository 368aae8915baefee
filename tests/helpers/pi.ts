/**
 * Headless harness for the REAL Pi CLI (`@earendil-works/pi-coding-agent` 1.6) driven by the scripted faux model
 * (tests/fixtures/faux.ts). Every run gets its own sandbox (agent dir, cwd, HOME) and a minimal clean env.
 *
 * Processes: Pi is spawned `detached` (its own process group, pgid = pid). On a timeout the helper SIGKILLs that
 * group plus every descendant it can still see, then rejects. After Pi exits, processes still alive in its process
 * group are reported as `leftoverPids` (so a test can assert the product cleaned up) and then SIGKILLed, so the
 * harness never leaves anything behind. A child that moved to another process group (setsid / detached spawn)
 * escapes this net once Pi has exited: check `descendantPids(pi.pid)` while Pi is still running.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RpcCommand } from "@earendil-works/pi-coding-agent";
import type { FauxStep } from "../fixtures/faux.ts";

export type { FauxStep as Step } from "../fixtures/faux.ts";

// ---------------------------------------------------------------------------------------------------------------
// Paths

function piCliPath(): string {
	const entry = fileURLToPath(import.meta.resolve("@earendil-works/pi-coding-agent"));
	// entry = <pkg>/dist/index.js; walk up to the package.json that names the package.
	const find = (dir: string): string => {
		const pkgFile = join(dir, "package.json");
		const pkg: unknown = (() => {
			try {
				return JSON.parse(readFileSync(pkgFile, "utf8"));
			} catch {
				return undefined;
			}
		})();
		if (isRecord(pkg) && pkg.name === "@earendil-works/pi-coding-agent") {
			const bin = pkg.bin;
			const rel = typeof bin === "string" ? bin : isRecord(bin) && typeof bin.pi === "string" ? bin.pi : undefined;
			if (rel === undefined) throw new Error(`${pkgFile} has no bin.pi`);
			return join(dir, rel);
		}
		const parent = dirname(dir);
		if (parent === dir) throw new Error(`package.json of @earendil-works/pi-coding-agent not found above ${entry}`);
		return find(parent);
	};
	return find(dirname(entry));
}

/** Absolute path of the Pi CLI entry (package `bin.pi`, i.e. `dist/bundle/cli.js`); run it with `process.execPath`. */
export const PI_CLI: string = piCliPath();
/** The test-only scripted provider extension. */
export const FAUX_EXT: string = fileURLToPath(new URL("../fixtures/faux.ts", import.meta.url));
/** The harness probe extension (`probe_echo` tool, `/probe` command). */
export const PROBE_EXT: string = fileURLToPath(new URL("../fixtures/probe-ext.ts", import.meta.url));
export const FAUX_MODEL = "faux/faux-1";

// ---------------------------------------------------------------------------------------------------------------
// Sandbox

export interface Sandbox {
	/** Temp root holding everything below (and the faux script files). */
	readonly root: string;
	/** PI_CODING_AGENT_DIR (settings.json, mcp.json, trust.json, auth.json …). */
	readonly agentDir: string;
	/** Working directory of the Pi process (the "project"). */
	readonly cwd: string;
	/** HOME of the Pi process. */
	readonly home: string;
	/** Minimal clean environment for Pi. */
	readonly env: Readonly<Record<string, string>>;
	/** Remove the temp root (idempotent). */
	cleanup(): Promise<void>;
}

export async function makeSandbox(extraEnv: Readonly<Record<string, string>> = {}): Promise<Sandbox> {
	const root = await mkdtemp(join(tmpdir(), "pi-harness-"));
	const agentDir = join(root, "agent");
	const cwd = join(root, "proj");
	const home = join(root, "home");
	await Promise.all([agentDir, cwd, home].map((d) => mkdir(d, { recursive: true })));
	const env: Record<string, string> = {
		PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
		HOME: home,
		PI_CODING_AGENT_DIR: agentDir,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		...extraEnv,
	};
	return {
		root,
		agentDir,
		cwd,
		home,
		env,
		cleanup: () => rm(root, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 }),
	};
}

// ---------------------------------------------------------------------------------------------------------------
// Wire records

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

function isRecord(v: unknown): v is Record<string, unknown> {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isJsonEvent(v: unknown): v is JsonEvent {
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
class JsonlSplitter {
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

// ---------------------------------------------------------------------------------------------------------------
// Processes

interface ProcStat {
	readonly pid: number;
	readonly state: string;
	readonly ppid: number;
	readonly pgrp: number;
}

function readStat(pid: number): ProcStat | undefined {
	try {
		const raw = readFileSync(`/proc/${pid}/stat`, "utf8");
		// "pid (comm) state ppid pgrp …"; comm may contain spaces and parentheses.
		const fields = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
		return { pid, state: fields[0] ?? "", ppid: Number(fields[1]), pgrp: Number(fields[2]) };
	} catch {
		return undefined;
	}
}

function allStats(): ProcStat[] {
	return readdirSync("/proc")
		.filter((name) => /^\d+$/.test(name))
		.flatMap((name) => {
			const s = readStat(Number(name));
			return s === undefined ? [] : [s];
		});
}

const isLive = (s: ProcStat): boolean => s.state !== "Z" && s.state !== "X";

/** True if the pid exists and is not a zombie. */
export function pidAlive(pid: number): boolean {
	const s = readStat(pid);
	return s !== undefined && isLive(s);
}

/** All live descendants of `pid` (children, grandchildren, …), from the ppid field of /proc/<pid>/stat. */
export function descendantPids(pid: number): number[] {
	const stats = allStats();
	const children = new Map<number, ProcStat[]>();
	for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
	const walk = (p: number): ProcStat[] => (children.get(p) ?? []).flatMap((c) => [c, ...walk(c.pid)]);
	return walk(pid)
		.filter(isLive)
		.map((s) => s.pid);
}

/** Live processes whose process group is `pgid` (Pi is spawned detached, so its pgid is its pid). */
export function processGroupPids(pgid: number): number[] {
	return allStats()
		.filter((s) => s.pgrp === pgid && isLive(s))
		.map((s) => s.pid);
}

function killQuietly(pid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(pid, signal);
	} catch {
		// already gone
	}
}

/** SIGKILL the process group of `pid` and every live descendant of it. */
function killTree(pid: number): void {
	const descendants = descendantPids(pid);
	killQuietly(-pid, "SIGKILL");
	killQuietly(pid, "SIGKILL");
	for (const d of descendants) killQuietly(d, "SIGKILL");
}

/** Pi processes spawned and not yet exited; killed when the test process exits (node:test turns SIGINT/SIGTERM into exit). */
const liveChildren = new Set<number>();
process.once("exit", () => {
	for (const pid of liveChildren) killTree(pid);
});

interface Spawned {
	readonly child: ChildProcess;
	readonly pid: number;
	readonly stderr: () => string;
	/** Resolves on exit with the code/signal and the still-alive members of Pi's process group (then killed). */
	readonly exited: Promise<ExitInfo>;
	readonly kill: () => void;
}

export interface ExitInfo {
	readonly code: number | null;
	readonly signal: NodeJS.Signals | null;
	/** Processes still alive in Pi's process group right after it exited (they have been SIGKILLed since). */
	readonly leftoverPids: readonly number[];
}

function spawnPi(argv: readonly string[], sandbox: Sandbox, env: Readonly<Record<string, string>>): Spawned {
	const child = spawn(process.execPath, [PI_CLI, ...argv], {
		cwd: sandbox.cwd,
		env: { ...sandbox.env, ...env },
		stdio: ["pipe", "pipe", "pipe"],
		detached: true,
	});
	child.on("error", () => {
		// Spawn failures leave `pid` undefined (thrown below); kill errors on a dead process are irrelevant.
	});
	const pid = child.pid;
	if (pid === undefined) throw new Error(`failed to spawn ${process.execPath} ${PI_CLI}`);
	liveChildren.add(pid);
	const errChunks: string[] = [];
	child.stderr?.setEncoding("utf8");
	child.stderr?.on("data", (c: string) => errChunks.push(c));
	child.stdin?.on("error", () => {
		// EPIPE after Pi exited: reported through the exit code.
	});
	// "exit" can come before the last stderr chunk is read: the result waits for stderr to close too (after
	// the leftovers, which could hold it, are killed), so `stderr()` is whole once `exited` resolves. The
	// timer only guards against a pipe some stray process keeps open.
	const stderrClosed = new Promise<void>((resolve) => child.stderr?.once("close", () => resolve()));
	const exited = new Promise<ExitInfo>((resolve) => {
		child.once("exit", (code, signal) => {
			const leftoverPids = processGroupPids(pid);
			for (const p of leftoverPids) killQuietly(p, "SIGKILL");
			liveChildren.delete(pid);
			const guard: { id?: NodeJS.Timeout } = {};
			const stray = new Promise<void>((done) => {
				guard.id = setTimeout(done, 5000);
			});
			void Promise.race([stderrClosed, stray]).then(() => {
				clearTimeout(guard.id);
				resolve({ code, signal, leftoverPids });
			});
		});
	});
	return { child, pid, stderr: () => errChunks.join(""), exited, kill: () => killTree(pid) };
}

/** Error thrown when a helper timed out; Pi and its tree were killed. */
export class PiTimeoutError extends Error {
	override readonly name = "PiTimeoutError";
	readonly stdout: string;
	readonly stderr: string;
	constructor(message: string, stdout: string, stderr: string) {
		super(`${message}\n--- stderr (tail) ---\n${stderr.slice(-4000)}\n--- stdout (tail) ---\n${stdout.slice(-4000)}`);
		this.stdout = stdout;
		this.stderr = stderr;
	}
}

const scriptCounter = { n: 0 };
async function writeScript(sandbox: Sandbox, script: readonly FauxStep[]): Promise<string> {
	const file = join(sandbox.root, `faux-script-${process.pid}-${scriptCounter.n++}.json`);
	await writeFile(file, JSON.stringify(script));
	return file;
}

// ---------------------------------------------------------------------------------------------------------------
// One-shot runs: JSON and print mode

export interface RunOptions {
	readonly sandbox: Sandbox;
	/** Extensions to load after faux.ts (`-e`). */
	readonly extensions: readonly string[];
	readonly script: readonly FauxStep[];
	readonly prompt: string;
	/** Extra CLI args, placed before the `-e` list (e.g. `--approve`, `--no-approve`, `-ne`, `--no-mcp`). */
	readonly args?: readonly string[];
	/** Extra env on top of `sandbox.env`. */
	readonly env?: Readonly<Record<string, string>>;
	/** Default 30 s. On timeout Pi's tree is killed and the promise rejects with PiTimeoutError. */
	readonly timeoutMs?: number;
}

export interface PrintResult extends ExitInfo {
	readonly stdout: string;
	readonly stderr: string;
	readonly durationMs: number;
}

export interface JsonResult extends PrintResult {
	readonly events: readonly JsonEvent[];
	/** stdout lines that were not JSON records (should be empty). */
	readonly junk: readonly string[];
}

/** Pi's arguments: the mode, no session, the faux model, extra args, then faux.ts and the extensions. */
function piArgs(mode: readonly string[], opts: Readonly<{ args?: readonly string[]; extensions: readonly string[] }>): string[] {
	return [
		...mode,
		"--no-session",
		"--model",
		FAUX_MODEL,
		...(opts.args ?? []),
		"-e",
		FAUX_EXT,
		...opts.extensions.flatMap((e) => ["-e", e]),
	];
}

async function runOnce(mode: readonly string[], opts: RunOptions): Promise<PrintResult> {
	const scriptFile = await writeScript(opts.sandbox, opts.script);
	const argv = [...piArgs(mode, opts), opts.prompt];
	const started = performance.now();
	const pi = spawnPi(argv, opts.sandbox, { ...opts.env, PI_FAUX_SCRIPT: scriptFile });
	pi.child.stdin?.end();
	const outChunks: string[] = [];
	pi.child.stdout?.setEncoding("utf8");
	pi.child.stdout?.on("data", (c: string) => outChunks.push(c));
	const stdoutClosed = new Promise<void>((resolve) => pi.child.stdout?.once("close", () => resolve()));
	const timeoutMs = opts.timeoutMs ?? 30_000;
	const timer = { id: undefined as NodeJS.Timeout | undefined, fired: false };
	const timedOut = new Promise<never>((_, reject) => {
		timer.id = setTimeout(() => {
			timer.fired = true;
			pi.kill();
			// Reject only once Pi is gone, so callers never see a process that is still dying.
			void pi.exited.then(() =>
				reject(new PiTimeoutError(`Pi ${mode.join(" ")} timed out after ${timeoutMs} ms`, outChunks.join(""), pi.stderr())),
			);
		}, timeoutMs);
	});
	try {
		const exit = await Promise.race([
			Promise.all([pi.exited, stdoutClosed]).then(([e]) => (timer.fired ? timedOut : e)),
			timedOut,
		]);
		return {
			...exit,
			stdout: outChunks.join(""),
			stderr: pi.stderr(),
			durationMs: Math.round(performance.now() - started),
		};
	} finally {
		clearTimeout(timer.id);
		if (pidAlive(pi.pid)) pi.kill();
		await rm(scriptFile, { force: true });
	}
}

/** `node PI_CLI --mode json --no-session --model faux/faux-1 [args] -e faux.ts -e <ext>… <prompt>` in sandbox.cwd. */
export async function runPiJson(opts: RunOptions): Promise<JsonResult> {
	const result = await runOnce(["--mode", "json"], opts);
	const events: JsonEvent[] = [];
	const junk: string[] = [];
	const splitter = new JsonlSplitter(
		(r) => events.push(r),
		(l) => junk.push(l),
	);
	splitter.push(result.stdout);
	splitter.end();
	return { ...result, events, junk };
}

/** Same as runPiJson with `-p` (print mode): stdout is the final assistant text. */
export function runPiPrint(opts: RunOptions): Promise<PrintResult> {
	return runOnce(["-p"], opts);
}

// ---------------------------------------------------------------------------------------------------------------
// RPC mode

export interface RpcResponse extends JsonEvent {
	readonly type: "response";
	readonly id?: string;
	readonly command: string;
	readonly success: boolean;
	readonly data?: JsonValue;
	readonly error?: string;
}

export interface UiRequest extends JsonEvent {
	readonly type: "extension_ui_request";
	readonly id: string;
	/** notify | setStatus | setWidget | setTitle | set_editor_text | select | confirm | input | editor */
	readonly method: string;
}

/** Payload of an `extension_ui_response` (without type/id). */
export type UiAnswer = { readonly value: string } | { readonly confirmed: boolean } | { readonly cancelled: true };

const DIALOG_METHODS: ReadonlySet<string> = new Set(["select", "confirm", "input", "editor"]);

export interface RpcOptions {
	readonly sandbox: Sandbox;
	/** Extensions to load after faux.ts. */
	readonly extensions: readonly string[];
	/** Faux script for prompts that reach the model (default []: every model call answers "faux script exhausted"). */
	readonly script?: readonly FauxStep[];
	readonly args?: readonly string[];
	readonly env?: Readonly<Record<string, string>>;
	/**
	 * Answers dialog requests (select/confirm/input/editor). Return undefined to leave one unanswered.
	 * Without a handler dialogs stay unanswered (a dialog with a `timeout` auto-resolves inside Pi).
	 */
	readonly onDialog?: (request: UiRequest) => UiAnswer | undefined;
	/** Default timeout of prompt()/request(); default 30 s. On timeout Pi's tree is killed. */
	readonly timeoutMs?: number;
}

export interface PromptResult {
	readonly response: RpcResponse;
	/** Every non-response, non-UI record received between sending the prompt and resolving. */
	readonly events: readonly JsonEvent[];
	/** `extension_ui_request` records received in that window (notify, setStatus, dialogs …). */
	readonly uiRequests: readonly UiRequest[];
}

export interface CloseResult extends ExitInfo {
	readonly stderr: string;
	readonly durationMs: number;
}

export interface PiRpc {
	readonly pid: number;
	/** Every record received so far. */
	readonly records: readonly JsonEvent[];
	/** stdout lines that were not JSON records. */
	readonly junk: readonly string[];
	stderr(): string;
	/** Write one raw JSONL record to stdin (no waiting). */
	send(record: RpcCommand | JsonEvent): void;
	/** Send a command (an id is added if missing) and resolve with its `response`. */
	request(command: RpcCommand, timeoutMs?: number): Promise<RpcResponse>;
	/**
	 * Send `{type:"prompt", message}`; resolve when the matching response arrived and, if it reports
	 * `disposition: "started"`, after the following `agent_settled`.
	 */
	prompt(message: string, timeoutMs?: number): Promise<PromptResult>;
	/**
	 * Resolves with the first record (already received or still to come) for which `accept` returns a
	 * value: a wait on Pi's own output, never a sleep. Rejects on exit, or after `timeoutMs` (killing Pi).
	 */
	until<T>(what: string, accept: (record: JsonEvent) => T | undefined, timeoutMs?: number): Promise<T>;
	/** Answer a dialog request. */
	answer(requestId: string, answer: UiAnswer): void;
	/** Rewrite the faux script file (the cursor keeps its position: pass the full, longer script). */
	setScript(script: readonly FauxStep[]): Promise<void>;
	/** Close stdin (orderly shutdown) and resolve on exit; SIGKILL the tree after `timeoutMs` (default 15 s). */
	close(timeoutMs?: number): Promise<CloseResult>;
	/** SIGKILL Pi's tree now. */
	kill(): void;
}

interface Waiter {
	readonly onRecord: (record: JsonEvent) => void;
	readonly onExit: (error: Error) => void;
}

/** Start a long-lived `--mode rpc --no-session --model faux/faux-1 [args] -e faux.ts -e <ext>…` in sandbox.cwd. */
export async function startPiRpc(opts: RpcOptions): Promise<PiRpc> {
	const scriptFile = await writeScript(opts.sandbox, opts.script ?? []);
	const argv = piArgs(["--mode", "rpc"], opts);
	const started = performance.now();
	const pi = spawnPi(argv, opts.sandbox, { ...opts.env, PI_FAUX_SCRIPT: scriptFile });
	const records: JsonEvent[] = [];
	const junk: string[] = [];
	const waiters = new Set<Waiter>();
	const ids = { n: 0 };
	const defaultTimeout = opts.timeoutMs ?? 30_000;
	const rawOut: string[] = [];

	const write = (record: RpcCommand | JsonEvent | Record<string, JsonValue>): void => {
		pi.child.stdin?.write(`${JSON.stringify(record)}\n`);
	};

	const splitter = new JsonlSplitter(
		(record) => {
			records.push(record);
			for (const w of [...waiters]) w.onRecord(record);
			if (record.type === "extension_ui_request" && opts.onDialog !== undefined) {
				const req = record as UiRequest;
				if (DIALOG_METHODS.has(req.method)) {
					const answer = opts.onDialog(req);
					if (answer !== undefined) write({ type: "extension_ui_response", id: req.id, ...answer });
				}
			}
		},
		(line) => junk.push(line),
	);
	pi.child.stdout?.setEncoding("utf8");
	pi.child.stdout?.on("data", (c: string) => {
		rawOut.push(c);
		splitter.push(c);
	});
	pi.child.stdout?.once("end", () => splitter.end());
	const exitState = { exited: false };
	void pi.exited.then((info) => {
		exitState.exited = true;
		const error = new Error(`Pi RPC exited (code ${info.code}, signal ${info.signal})\n${pi.stderr().slice(-4000)}`);
		for (const w of [...waiters]) w.onExit(error);
	});

	/** Wait until `accept` returns a value for some record (or reject on exit/timeout; the tree is killed on timeout). */
	const waitFor = <T>(what: string, accept: (r: JsonEvent) => T | undefined, timeoutMs: number): Promise<T> =>
		new Promise<T>((resolve, reject) => {
			if (exitState.exited) {
				reject(new Error(`Pi RPC already exited; cannot wait for ${what}\n${pi.stderr().slice(-4000)}`));
				return;
			}
			const finish = (): void => {
				clearTimeout(timer);
				waiters.delete(waiter);
			};
			const waiter: Waiter = {
				onRecord: (r) => {
					const value = accept(r);
					if (value !== undefined) {
						finish();
						resolve(value);
					}
				},
				onExit: (error) => {
					finish();
					reject(error);
				},
			};
			const timer = setTimeout(() => {
				finish();
				pi.kill();
				reject(new PiTimeoutError(`Pi RPC: timed out after ${timeoutMs} ms waiting for ${what}`, rawOut.join(""), pi.stderr()));
			}, timeoutMs);
			waiters.add(waiter);
		});

	const nextId = (prefix: string): string => `${prefix}-${++ids.n}`;

	const request = (command: RpcCommand, timeoutMs = defaultTimeout): Promise<RpcResponse> => {
		const id = command.id ?? nextId(command.type);
		const pending = waitFor(
			`response ${id}`,
			(r) => (r.type === "response" && r.id === id ? (r as RpcResponse) : undefined),
			timeoutMs,
		);
		write({ ...command, id });
		return pending;
	};

	const prompt = async (message: string, timeoutMs = defaultTimeout): Promise<PromptResult> => {
		const id = nextId("prompt");
		const events: JsonEvent[] = [];
		const uiRequests: UiRequest[] = [];
		const seen = { settled: false, response: undefined as RpcResponse | undefined };
		const done = waitFor(
			`prompt ${id} (${JSON.stringify(message)})`,
			(r) => {
				if (r.type === "response" && r.id === id) seen.response = r as RpcResponse;
				else if (r.type === "extension_ui_request") uiRequests.push(r as UiRequest);
				else if (r.type !== "response") events.push(r);
				if (r.type === "agent_settled") seen.settled = true;
				const response = seen.response;
				if (response === undefined) return undefined;
				const started = response.success && isRecord(response.data) && response.data.disposition === "started";
				return !started || seen.settled ? response : undefined;
			},
			timeoutMs,
		);
		write({ id, type: "prompt", message });
		const response = await done;
		return { response, events, uiRequests };
	};

	const close = async (timeoutMs = 15_000): Promise<CloseResult> => {
		pi.child.stdin?.end();
		const timer = setTimeout(() => pi.kill(), timeoutMs);
		try {
			const info = await pi.exited;
			return { ...info, stderr: pi.stderr(), durationMs: Math.round(performance.now() - started) };
		} finally {
			clearTimeout(timer);
			await rm(scriptFile, { force: true });
		}
	};

	return {
		pid: pi.pid,
		records,
		junk,
		stderr: pi.stderr,
		send: write,
		request,
		prompt,
		until: <T>(what: string, accept: (record: JsonEvent) => T | undefined, timeoutMs = defaultTimeout): Promise<T> => {
			const seen = records.map(accept).find((value) => value !== undefined);
			return seen !== undefined ? Promise.resolve(seen) : waitFor(what, accept, timeoutMs);
		},
		answer: (requestId, answer) => write({ type: "extension_ui_response", id: requestId, ...answer }),
		setScript: (script) => writeFile(scriptFile, JSON.stringify(script)),
		close,
		kill: pi.kill,
	};
}
