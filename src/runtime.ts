/**
 * The runtime: composes the connection table (`connections.ts`) with how one server is opened and
 * closed (`connect.ts`, given the table's credentials, stderr tail and close handling), and serves
 * the `Runtime` face: one SDK client per server, opened lazily and shared by concurrent callers;
 * independent calls; latched failures; reset and teardown. State per server is a readonly record
 * replaced whole; every `await` is followed by a re-read (a reconnect or shutdown may have replaced it).
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import { settledWithin } from "./async.ts";
import type { Live, Runtime, RuntimeOptions } from "./contracts.ts";
import { CallFailed } from "./errors.ts";
import { sanitize } from "./output/text.ts";
import { closedError } from "./runtime/failures.ts";
import { closeLive, openServer } from "./runtime/open.ts";
import type { TailBuffer } from "./runtime/stderr-tail.ts";
import {
	type Connection,
	callError,
	clean,
	configOf,
	connection,
	credentials,
	HELD,
	index,
	NEW,
	ready,
	reset,
	statusOf,
	stepUp,
	type Table,
	tailOf,
	unknownServer,
	visibleTool,
} from "./runtime/table.ts";
import type { ToolIndex } from "./runtime/visible-tools.ts";
import type { ServerConfig, ServerEntry } from "./schema.ts";
import { loadSdk } from "./sdk.ts";

/** How long `dispose` waits for an aborted setup to wind down. */
const SHUTDOWN_SETUP_WAIT_MS = 2000;

/**
 * Opens one server for the table: its credentials, stderr tail, step-up mapping and close handling.
 * Credentials are checked before anything connects: a missing one never costs a process or a request.
 */
async function open(t: Table, config: ServerConfig, signal: AbortSignal): Promise<Live> {
	const name = config.name;
	const authProvider = await credentials(t, config, signal);
	const tail = tailOf(t, name);
	return openServer(config, {
		clientInfo: t.options.clientInfo,
		signal,
		authProvider,
		tail,
		mapError: async (error) => stepUp(t, await loadSdk(), name, error),
		onClose: (live) => {
			const current = connection(t, name);
			if (current.state !== "ready" || current.live !== live) return;
			t.connections.set(name, { state: "failed", error: closedError(name, tail.text(), (text) => clean(t, name, text)) });
		},
	});
}

/**
 * The tool listing of a starting or ready server, once in: only one already held or in flight (the early
 * start's), so this never sends a request. Undefined without one, or when the setup or listing fails (the
 * call reports that).
 */
async function heldListing(t: Table, name: string): Promise<Readonly<{ live: Live; index: ToolIndex }> | undefined> {
	const current = connection(t, name);
	if (current.state !== "connecting" && current.state !== "ready") return undefined;
	try {
		const live = current.state === "ready" ? current.live : await current.setup;
		const now = connection(t, name);
		if (now.state !== "ready" || now.live !== live) return undefined;
		const index = await (now.listing ?? now.index);
		return index ? { live, index } : undefined;
	} catch {
		return undefined;
	}
}

export function createRuntime(options: RuntimeOptions): Runtime {
	const t: Table = {
		options,
		entries: new Map<string, ServerEntry>(options.servers.map((entry) => [entry.name, entry])),
		connections: new Map<string, Connection>(),
		stderrTails: new Map<string, TailBuffer>(),
		shutdown: new AbortController(),
		open: (config, signal) => open(t, config, signal),
		close: closeLive,
	};
	return {
		status: () => [...t.entries.values()].map((entry) => statusOf(t, entry)),
		names: () => [...t.entries.keys()],

		async tools(name, signal, since = NEW) {
			const live = await ready(t, name, signal);
			return (await index(t, name, live, since, signal)).tools;
		},

		async tool(name, toolName, signal) {
			return (await visibleTool(t, name, toolName, signal)).tool;
		},

		async call(name, toolName, args, callOptions = {}) {
			const { signal, onProgress } = callOptions;
			const { live, tool } = await visibleTool(t, name, toolName, signal);
			const timeout = configOf(t, name).requestTimeoutMs;
			// The caller's signal goes straight through (AbortSignal.any costs ~9 µs a call); shutdown closes
			// every client, which rejects calls in flight, and callError names the session's end.
			try {
				return (await live.client.callTool(
					{ name: toolName, arguments: args },
					{
						signal,
						timeout,
						resetTimeoutOnProgress: true,
						maxTotalTimeout: Math.max(timeout, 30 * 60_000),
						toolDefinition: tool,
						...(onProgress
							? {
									onprogress: (p: { progress: number; total?: number; message?: string }) =>
										onProgress({ progress: p.progress, total: p.total, message: p.message ? sanitize(p.message) : undefined }),
								}
							: {}),
					},
				)) as CallToolResult;
			} catch (error) {
				throw await callError(t, name, error, signal, toolName);
			}
		},

		async request(name, what, capability, run, signal) {
			const live = await ready(t, name, signal);
			if (!live.client.getServerCapabilities()?.[capability]) {
				throw new CallFailed(name, `MCP server "${name}" does not offer ${capability}`, "refused");
			}
			try {
				return await run(live.client, { signal, timeout: configOf(t, name).requestTimeoutMs });
			} catch (error) {
				throw await callError(t, name, error, signal, undefined, what);
			}
		},

		reset: (name) => reset(t, name),

		async connect(name, signal) {
			await ready(t, name, signal).catch(() => undefined);
			const current = connection(t, name);
			if (current.state === "ready") await index(t, name, current.live, NEW, signal).catch(() => undefined);
			const entry = t.entries.get(name);
			if (!entry) throw unknownServer(t, name);
			return statusOf(t, entry);
		},

		start(name, startOptions = {}) {
			const entry = t.entries.get(name);
			if (!entry?.enabled || entry.config === undefined || entry.error !== undefined) return false;
			if (t.shutdown.signal.aborted) return false;
			const current = connection(t, name);
			if (current.state === "ready" && startOptions.since !== undefined) {
				index(t, name, current.live, startOptions.since).catch(() => undefined); // The call reports a failure.
				return false;
			}
			if (current.state !== "idle") return false;
			const setup = ready(t, name);
			const listed = startOptions.tools ? setup.then((live) => index(t, name, live, HELD)) : setup;
			// The call that joins this setup (or listing) reports its failure.
			listed.catch(() => undefined);
			return true;
		},

		async prepare(name, toolName) {
			const held = await heldListing(t, name);
			const schema = held?.index.byName.get(toolName)?.outputSchema;
			return held && schema ? held.live.outputChecks.prepare(schema) : "none";
		},

		listed: async (name) => (await heldListing(t, name))?.index.tools,

		async update(servers) {
			const next = new Map(servers.map((entry) => [entry.name, entry]));
			const changed = [...t.entries.keys()].filter(
				(name) => JSON.stringify(t.entries.get(name)) !== JSON.stringify(next.get(name)),
			);
			t.entries.clear();
			for (const [name, entry] of next) t.entries.set(name, entry);
			await Promise.all(changed.map((name) => reset(t, name)));
			for (const name of changed) if (!next.has(name)) t.connections.delete(name);
		},

		async dispose() {
			if (!t.shutdown.signal.aborted) t.shutdown.abort(new Error("shutdown"));
			const all = [...t.connections.entries()];
			for (const [name] of all) t.connections.set(name, { state: "idle" });
			await Promise.all(
				all.map(async ([, current]) => {
					if (current.state === "connecting") {
						current.abort.abort(new Error("shutdown"));
						// An aborted setup ends promptly (it closes what it opened); the bound is a backstop so
						// that nothing it waits on can keep Pi from exiting.
						await settledWithin(current.setup, SHUTDOWN_SETUP_WAIT_MS);
					}
					if (current.state === "ready") await closeLive(current.live);
				}),
			);
		},
	};
}
