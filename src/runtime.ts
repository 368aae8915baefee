/**
 * The runtime's face (`Runtime`): one SDK client per server, opened lazily and shared by concurrent
 * callers; independent calls; latched failures; reset and teardown. The connection table behind it is
 * `runtime/table.ts` (state per server, replaced whole and re-read after every `await`); how one server
 * is opened and closed, `runtime/open.ts`.
 */
import type { Runtime, RuntimeOptions } from "./contracts.ts";
import { CallFailed } from "./errors.ts";
import { Given } from "./runtime/instructions.ts";
import type { TailBuffer } from "./runtime/stderr-tail.ts";
import {
	type Connection,
	callError,
	callTool,
	configOf,
	connection,
	dispose,
	HELD,
	heldListing,
	index,
	NEW,
	ready,
	reset,
	statusOf,
	type Table,
	unknownServer,
	update,
	visibleTool,
} from "./runtime/table.ts";
import type { ServerEntry } from "./schema.ts";

export function createRuntime(options: RuntimeOptions): Runtime {
	const t: Table = {
		options,
		entries: new Map<string, ServerEntry>(options.servers.map((entry) => [entry.name, entry])),
		connections: new Map<string, Connection>(),
		stderrTails: new Map<string, TailBuffer>(),
		shutdown: new AbortController(),
	};
	const given = new Given();
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

		call: (name, toolName, args, callOptions = {}) => callTool(t, name, toolName, args, callOptions),

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

		instructionsOnce: (name) => {
			const entry = t.entries.get(name);
			return entry && given.once(name, statusOf(t, entry).instructions);
		},

		update: (servers) => update(t, servers),
		dispose: () => dispose(t),
	};
}
