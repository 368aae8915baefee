/**
 * The runtime's face (`Runtime`): one SDK client per server, opened lazily and shared by concurrent
 * callers; independent calls; latched failures; reset and teardown. The face is what a call needs. The connection table behind it is
 * `runtime/table.ts` (state per server, replaced whole and re-read after every `await`); how one server
 * is opened and closed, `runtime/open.ts`.
 */
import type { Runtime, RuntimeOptions } from "./contracts.ts";
import { CallFailed } from "./errors.ts";
import { Given } from "./runtime/instructions.ts";
import { PinnedServers } from "./runtime/pinned.ts";
import { approve, changes, refuseWithheld } from "./runtime/review.ts";
import type { TailBuffer } from "./runtime/stderr-tail.ts";
import {
	type Connection,
	callError,
	callTool,
	configOf,
	connection,
	dispose,
	index,
	ready,
	reset,
	statusOf,
	type Table,
	unknownServer,
	update,
	visibleTool,
} from "./runtime/table.ts";
import type { ServerEntry } from "./schema.ts";
import { sdkConsole } from "./sdk.ts";

export function createRuntime(options: RuntimeOptions): Runtime {
	const t: Table = {
		options,
		entries: new Map<string, ServerEntry>(options.servers.map((entry) => [entry.name, entry])),
		connections: new Map<string, Connection>(),
		stderrTails: new Map<string, TailBuffer>(),
		shutdown: new AbortController(),
		pins: new PinnedServers(options.pinsPath),
	};
	// Held from creation to disposal: the SDK's console notices stay off the terminal meanwhile.
	const release = sdkConsole.hold();
	const given = new Given();
	return {
		status: () => [...t.entries.values()].map((entry) => statusOf(t, entry)),
		names: () => [...t.entries.keys()],

		async tools(name, signal) {
			const live = await ready(t, name, signal);
			return (await index(t, name, live, "fresh", signal)).tools;
		},

		async tool(name, toolName, signal) {
			const { live, tool } = await visibleTool(t, name, toolName, signal);
			// Compiled now, the check is ready for the call that follows (one the model is still writing).
			if (tool.outputSchema) void live.outputChecks.prepare(tool.outputSchema);
			return tool;
		},

		call: (name, toolName, args, callOptions = {}) => callTool(t, name, toolName, args, callOptions),

		async request(name, what, capability, run, signal, named) {
			const live = await ready(t, name, signal);
			if (!live.client.getServerCapabilities()?.[capability]) {
				throw new CallFailed(name, `MCP server "${name}" does not offer ${capability}`, "refused");
			}
			if (named) await refuseWithheld(t, name, named, signal);
			try {
				return await run(live.client, { signal, timeout: configOf(t, name).requestTimeoutMs });
			} catch (error) {
				throw await callError(t, name, error, signal, undefined, what);
			}
		},

		reset: (name) => reset(t, name),

		changes: (name, signal) => changes(t, name, signal),
		approve: (name, keys, signal) => approve(t, name, keys, signal),

		async connect(name, signal) {
			await ready(t, name, signal).catch(() => undefined);
			const current = connection(t, name);
			if (current.state === "ready") await index(t, name, current.live, "fresh", signal).catch(() => undefined);
			const entry = t.entries.get(name);
			if (!entry) throw unknownServer(t, name);
			return statusOf(t, entry);
		},

		instructionsOnce: (name) => {
			const entry = t.entries.get(name);
			return entry && given.once(name, statusOf(t, entry).instructions);
		},

		update: (servers) => update(t, servers),
		dispose: async () => {
			await dispose(t);
			await t.pins.flush();
			release();
		},
	};
}
