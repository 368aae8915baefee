/**
 * The runtime's face (`Runtime`): one SDK client per server, opened lazily and shared by concurrent
 * callers; independent calls; latched failures; reset and teardown. The face is what a call needs. The connection table behind it is
 * `runtime/table.ts` (state per server, replaced whole and re-read after every `await`); how one server
 * is opened and closed, `runtime/open.ts`.
 */
import type { Runtime, RuntimeOptions } from "./contracts.ts";
import { CallFailed } from "./errors.ts";
import { redactDeep } from "./output/redact.ts";
import { Given } from "./runtime/instructions.ts";
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
	secretsOf,
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

		// What a server returns reaches nobody with a configured secret in it, error or not (`output/redact.ts`).
		call: async (name, toolName, args, callOptions = {}) =>
			redactDeep(await callTool(t, name, toolName, args, callOptions), secretsOf(t, name)),

		async request(name, what, capability, run, signal) {
			const live = await ready(t, name, signal);
			if (!live.client.getServerCapabilities()?.[capability]) {
				throw new CallFailed(name, `MCP server "${name}" does not offer ${capability}`, "refused");
			}
			try {
				return redactDeep(await run(live.client, { signal, timeout: configOf(t, name).requestTimeoutMs }), secretsOf(t, name));
			} catch (error) {
				throw await callError(t, name, error, signal, undefined, what);
			}
		},

		reset: (name) => reset(t, name),

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
			release();
		},
	};
}
