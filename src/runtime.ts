/**
 * The runtime's face (`Runtime`): one SDK client per server, opened lazily and shared by concurrent
 * callers; independent calls; latched failures; reset and teardown. The face is what a call needs; the
 * connection table behind it (`runtime/table.ts`) owns the state per server; the call path over it is
 * `runtime/calls.ts`'s; how one server is opened and closed is `runtime/open.ts`'s.
 */
import type { Runtime, RuntimeOptions } from "./contracts.ts";
import { redactDeep } from "./output/redact.ts";
import { callTool, request, visibleTool } from "./runtime/calls.ts";
import { Given } from "./runtime/instructions.ts";
import { approve, changes, refuseWithheld } from "./runtime/review.ts";
import { ConnectionTable } from "./runtime/table.ts";
import { sdkConsole } from "./sdk.ts";

export function createRuntime(options: RuntimeOptions): Runtime {
	const table = new ConnectionTable(options);
	// Held from creation to disposal: the SDK's console notices stay off the terminal meanwhile.
	const release = sdkConsole.hold();
	const given = new Given();
	return {
		status: () => table.status(),
		names: () => table.names(),
		listed: (name) => table.listed(name),

		async tools(name, signal) {
			const live = await table.ready(name, signal);
			return (await table.listTools(name, live, "fresh", signal)).tools;
		},

		async tool(name, toolName, signal) {
			const { live, tool } = await visibleTool(table, name, toolName, signal);
			// Compiled now, the check is ready for the call that follows (one the model is still writing).
			if (tool.outputSchema) void live.outputChecks.prepare(tool.outputSchema);
			return tool;
		},

		// What a server returns reaches nobody with a configured secret in it, error or not (`output/redact.ts`).
		call: async (name, toolName, args, callOptions = {}) =>
			redactDeep(await callTool(table, name, toolName, args, callOptions), table.secrets(name)),
		async request(name, what, capability, run, signal, named) {
			if (named) await refuseWithheld(table, name, named, signal);
			return redactDeep(await request(table, name, what, capability, run, signal), table.secrets(name));
		},
		changes: (name, signal) => changes(table, name, signal),
		approve: (name, keys, signal) => approve(table, name, keys, signal),
		reset: (name) => table.reset(name),
		connect: (name, signal) => table.connect(name, signal),

		instructionsOnce: (name) => {
			const known = table.names().includes(name);
			return known ? given.once(name, table.statusOf(name).instructions) : undefined;
		},

		update: (servers) => table.update(servers),
		dispose: async () => {
			await table.dispose();
			await table.pins.flush();
			release();
		},
	};
}
