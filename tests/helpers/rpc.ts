/**
 * A long-lived Pi in RPC mode for a test: prompts, commands, the extension UI's dialogs answered by the
 * test, and a close that reports what was left running.
 */
import { rm, writeFile } from "node:fs/promises";
import type { RpcCommand } from "@earendil-works/pi-coding-agent";
import type { FauxStep } from "../fixtures/faux.ts";
import { isRecord, type JsonEvent, JsonlSplitter, type JsonValue } from "./events.ts";
import { type ExitInfo, PiTimeoutError, piArgs, type Sandbox, spawnPi, writeScript } from "./spawn.ts";
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
