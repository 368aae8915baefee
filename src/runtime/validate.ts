/**
 * Output-schema checks off Pi's thread (#39): a server's `outputSchema` is untrusted code for a regular
 * expression engine and a schema compiler. A `pattern` such as `^(a+)+$` backtracks for minutes on thirty
 * letters, and a synchronous check would hold Pi's event loop (no timeout fires, the TUI freezes). So the
 * schema is compiled and each structured result checked in a worker thread, with the SDK's own Ajv engine
 * (same dialects and formats), under a deadline: a worker that overruns it is terminated (that interrupts
 * the regular expression) and the next request starts a fresh one. The SDK is given a check that accepts
 * everything; the call awaits these instead (`checkedCall`), so the event loop is never held by a schema.
 */
import { Worker } from "node:worker_threads";
import type { CallToolResult, JsonSchemaType, JsonSchemaValidator } from "@modelcontextprotocol/client";
import { awaitWith } from "../async.ts";
import type { OutputChecks } from "../contracts.ts";

/** How long a compile may take when the early start prepares it (a call's own: as long as a check). */
const PREPARE_LIMIT_MS = 5000;
/** What a check may take at least and at most, whatever remains of the call's timeout. */
const CHECK_FLOOR_MS = 1000;
const CHECK_CEILING_MS = 10_000;
/** Compiled checks a worker keeps (oldest dropped first), and the longest message it sends back. */
const WORKER_HELD = 128;
const MESSAGE_LIMIT = 1000;

/** The checking thread's module (plain JavaScript: see its header), beside this file. */
const WORKER_MODULE = new URL("./check-worker.mjs", import.meta.url);
/** Checks whose deadlines fall this close after an overrun's are settled with it: one restart for a burst. */
const OVERRUN_BATCH_MS = 50;

type Outcome = Readonly<{
	outcome: "ok" | "invalid-schema" | "mismatch" | "failed" | "late";
	message?: string;
	/** For "late": the deadline it overran. */
	withinMs?: number;
}>;
type Request = Readonly<{ id: number; key: number; schema: JsonSchemaType; check: boolean; value?: unknown }>;
type Pending = Readonly<{
	request: Request;
	withinMs: number;
	/** `performance.now()` when it overruns. */
	deadline: number;
	settle: (outcome: Outcome) => void;
	timer: NodeJS.Timeout;
}>;

/** The check's time: what remains of the call's timeout, within the floor and the ceiling. */
const checkBudget = (timeoutMs: number, elapsedMs: number) =>
	Math.min(CHECK_CEILING_MS, Math.max(CHECK_FLOOR_MS, timeoutMs - elapsedMs));

/**
 * `call` with its structured result checked against `schema` (when the tool has one), off Pi's thread: the
 * schema compiled first (one that does not compile refuses the call before it is sent, as the SDK did),
 * then the result within what remains of `timeoutMs`. Throws what the call reports.
 */
export async function checkedCall(
	checks: OutputChecks,
	schema: JsonSchemaType | undefined,
	bounds: Readonly<{ timeoutMs: number; signal?: AbortSignal }>,
	call: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
	if (!schema) return call();
	const { timeoutMs, signal } = bounds;
	const begun = performance.now();
	const waited = (step: Promise<void>) => awaitWith(step, signal, () => signal?.reason);
	await waited(checks.compile(schema, checkBudget(timeoutMs, 0)));
	const result = await call();
	if (result.structuredContent !== undefined && !result.isError) {
		await waited(checks.check(schema, result.structuredContent, checkBudget(timeoutMs, performance.now() - begun)));
	}
	return result;
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** One worker thread, started on the first request and replaced after one overran its deadline. */
class SchemaWorker {
	#worker: Worker | undefined;
	#next = 0;
	readonly #pending = new Map<number, Pending>();
	readonly #keys = new WeakMap<JsonSchemaType, number>();
	#closed = false;

	run(schema: JsonSchemaType, withinMs: number, check: boolean, value?: unknown): Promise<Outcome> {
		if (this.#closed) return Promise.resolve({ outcome: "failed", message: "the connection closed" });
		const key = this.#keys.get(schema) ?? this.#next++;
		this.#keys.set(schema, key);
		const request: Request = { id: this.#next++, key, schema, check, value };
		return new Promise<Outcome>((resolve) => {
			const timer = setTimeout(() => this.#overran(), withinMs);
			this.#pending.set(request.id, { request, withinMs, deadline: performance.now() + withinMs, settle: resolve, timer });
			this.#post(request);
		});
	}

	close(): void {
		this.#closed = true;
		this.#stop();
		for (const id of [...this.#pending.keys()]) this.#settle(id, { outcome: "failed", message: "the connection closed" });
	}

	#post(request: Request): void {
		try {
			this.#started().postMessage(request);
		} catch (error) {
			this.#settle(request.id, { outcome: "failed", message: error instanceof Error ? error.message : String(error) });
		}
	}

	#started(): Worker {
		if (this.#worker) return this.#worker;
		// Bounded memory: a schema or result built to exhaust it ends the worker, not Pi.
		const worker = new Worker(WORKER_MODULE, {
			workerData: { held: WORKER_HELD, messageLimit: MESSAGE_LIMIT },
			resourceLimits: { maxOldGenerationSizeMb: 128 },
			// Plain JavaScript: it needs none of the host's loaders (`--import …`); without tsx's it starts in half the time.
			execArgv: [],
			stdout: true,
			stderr: true,
		});
		worker.unref(); // The deadline timers keep the process alive while a request waits.
		// Ajv's warnings would draw over Pi's TUI: what the worker prints is read and dropped.
		worker.stdout.resume();
		worker.stderr.resume();
		worker.on("message", (reply: Outcome & { id: number }) => this.#settle(reply.id, reply));
		const lost = (error?: unknown) => {
			if (this.#worker !== worker) return;
			this.#worker = undefined;
			const message = error instanceof Error ? error.message : "the checking thread stopped";
			for (const id of [...this.#pending.keys()]) this.#settle(id, { outcome: "failed", message });
		};
		worker.on("error", lost);
		worker.on("exit", () => lost());
		this.#worker = worker;
		return worker;
	}

	#settle(id: number, outcome: Outcome): void {
		const pending = this.#pending.get(id);
		if (!pending) return;
		this.#pending.delete(id);
		clearTimeout(pending.timer);
		pending.settle({ outcome: outcome.outcome, message: outcome.message?.slice(0, MESSAGE_LIMIT), withinMs: pending.withinMs });
	}

	/**
	 * A request overran: settle every one whose deadline has come (or comes within `OVERRUN_BATCH_MS`), then
	 * end the worker (that stops it mid-match) and resend the rest to a new one, once. Restarting per overrun
	 * would re-post every waiting request each time: 200 checks overrunning together held Pi's thread ~0.9 s.
	 */
	#overran(): void {
		const now = performance.now() + OVERRUN_BATCH_MS;
		const expired = [...this.#pending].filter(([, pending]) => pending.deadline <= now);
		if (expired.length === 0) return;
		for (const [id] of expired) this.#settle(id, { outcome: "late" });
		this.#stop();
		for (const pending of this.#pending.values()) this.#post(pending.request);
	}

	#stop(): void {
		const worker = this.#worker;
		this.#worker = undefined;
		if (worker) void worker.terminate().catch(() => undefined);
	}
}

const accept = <T>(input: unknown) => ({ valid: true as const, data: input as T, errorMessage: undefined });

/**
 * A connection's output checks: the SDK's validator slot gets `accept` (its synchronous check would run on
 * Pi's thread); `compile` and `check` run in the worker and throw what the call reports. Compiles are held
 * per schema object (a new listing brings new objects), which lets the early start compile the one a
 * streamed call names while the model is still writing it.
 */
export function outputChecks(): OutputChecks {
	const worker = new SchemaWorker();
	const compiles = new WeakMap<JsonSchemaType, Promise<Outcome>>();
	const compiled = (schema: JsonSchemaType, withinMs: number): Promise<Outcome> => {
		const known = compiles.get(schema);
		if (known) return known;
		const made = worker.run(schema, withinMs, false);
		compiles.set(schema, made);
		// A worker lost to another request's fault says nothing about this schema: the next ask tries again.
		void made.then(({ outcome }) => {
			if (outcome === "failed" && compiles.get(schema) === made) compiles.delete(schema);
		});
		return made;
	};
	return {
		getValidator: <T>(_schema: JsonSchemaType): JsonSchemaValidator<T> => accept<T>,
		async prepare(schema) {
			if (compiles.has(schema)) return "held";
			return (await compiled(schema, PREPARE_LIMIT_MS)).outcome === "ok" ? "compiled" : "failed";
		},
		async compile(schema, withinMs) {
			// A compile the early start began is awaited with its own deadline.
			const { outcome, message, withinMs: bound = withinMs } = await compiled(schema, withinMs);
			if (outcome === "invalid-schema") throw new Error(`its output schema is invalid: ${message}`);
			if (outcome === "late") {
				throw new Error(`its output schema could not be compiled within ${seconds(bound)} (too costly); the tool was not called`);
			}
			if (outcome !== "ok") throw new Error(`its output schema could not be compiled: ${message}`);
		},
		async check(schema, value, withinMs) {
			const { outcome, message } = await worker.run(schema, withinMs, true, value);
			if (outcome === "mismatch") throw new Error(`structured content does not match the tool's output schema: ${message}`);
			if (outcome === "late") {
				throw new Error(
					`its structured result could not be checked against its output schema within ${seconds(withinMs)} (the schema is too costly to check), so the result was not used`,
				);
			}
			if (outcome !== "ok") throw new Error(`its structured result could not be checked: ${message}`);
		},
		close: () => worker.close(),
	};
}
