/**
 * The call path over the connection table: the model-visible tool a call names (refused from the
 * configuration alone when the user hid it, listed once more when the server may have added it), one
 * tool call with its progress, timeout and output check, and one other SDK request after checking the
 * server offers it. Errors name the server and what was asked.
 */
import type { CallToolResult, Client, Tool } from "@modelcontextprotocol/client";
import type { CallOptions, Capability, Live, Progress, RequestOptions } from "../contracts.ts";
import { CallFailed } from "../errors.ts";
import { escapeName, sanitize } from "../output/text.ts";
import { noSuchTool } from "./failures.ts";
import type { ConnectionTable } from "./table.ts";
import { checkedCall } from "./validate.ts";
import { filteredRefusal, filterFor, hiddenFor } from "./visible-tools.ts";

/** The longest a call may run while its server keeps reporting progress. */
const MAX_TOTAL_TIMEOUT_MS = 30 * 60_000;

const toolOn = (name: string, toolName: string) => `tool "${escapeName(toolName)}" on MCP server "${name}"`;

/**
 * One model-visible tool and the connection it is on; a hidden or unknown tool is refused naming the
 * reason. A tool the user hid is refused from the configuration alone: nothing starts, nothing is sent.
 */
export async function visibleTool(
	table: ConnectionTable,
	name: string,
	toolName: string,
	signal?: AbortSignal,
): Promise<{ live: Live; tool: Tool }> {
	const refusal = filteredRefusal(filterFor(table.entry(name)), toolName);
	if (refusal && table.configOf(name)) throw new CallFailed(name, `${toolOn(name, toolName)} ${refusal}`, "refused");
	const live = await table.ready(name, signal);
	const first = await table.listTools(name, live, "held", signal);
	const found = first.byName.get(toolName);
	if (found) return { live, tool: found };
	// Not in the index we hold: the server may have added it since; list once more before refusing.
	const fresh = hiddenFor(first, toolName) !== undefined ? first : await table.listTools(name, live, "fresh", signal);
	const again = fresh.byName.get(toolName);
	if (again) return { live, tool: again };
	const reason = table.pins.refusal(table.entry(name)?.config, "tools", toolName) ?? hiddenFor(fresh, toolName);
	if (reason) throw new CallFailed(name, `${toolOn(name, toolName)} ${reason}`, "refused");
	const listed = fresh.tools.map((tool) => tool.name);
	throw new CallFailed(name, sanitize(noSuchTool(name, toolName, listed), table.secrets(name)), "refused");
}

/** One tool call, connecting first if needed; errors name the server and the tool. */
export async function callTool(
	table: ConnectionTable,
	name: string,
	toolName: string,
	args: Record<string, unknown>,
	options: CallOptions,
): Promise<CallToolResult> {
	const { signal, onProgress } = options;
	const { live, tool } = await visibleTool(table, name, toolName, signal);
	const timeout = table.configOf(name).requestTimeoutMs;
	// The caller's signal goes straight through (AbortSignal.any costs ~9 µs a call); shutdown closes
	// every client, which rejects calls in flight, and the request error names the session's end.
	// Structured results are checked off Pi's thread, within the call's timeout (#39).
	const onprogress = (p: Progress) =>
		onProgress?.({ progress: p.progress, total: p.total, message: p.message ? sanitize(p.message) : undefined });
	const sent = {
		signal,
		timeout,
		resetTimeoutOnProgress: true,
		maxTotalTimeout: Math.max(timeout, MAX_TOTAL_TIMEOUT_MS),
		toolDefinition: tool,
		...(onProgress ? { onprogress } : {}),
	};
	const call = () => live.client.callTool({ name: toolName, arguments: args }, sent) as Promise<CallToolResult>;
	try {
		return await checkedCall(live.outputChecks, tool.outputSchema, { timeoutMs: timeout, signal }, call);
	} catch (error) {
		throw await table.requestError(name, error, signal, toolOn(name, toolName));
	}
}

/** One SDK request on a server's client after checking the capability; errors name the server and `what`. */
export async function request<T>(
	table: ConnectionTable,
	name: string,
	what: string,
	capability: Capability,
	run: (client: Client, options: RequestOptions) => Promise<T>,
	signal?: AbortSignal,
): Promise<T> {
	const live = await table.ready(name, signal);
	if (!live.client.getServerCapabilities()?.[capability]) {
		throw new CallFailed(name, `MCP server "${name}" does not offer ${capability}`, "refused");
	}
	try {
		return await run(live.client, { signal, timeout: table.configOf(name).requestTimeoutMs });
	} catch (error) {
		throw await table.requestError(name, error, signal, `${what} on MCP server "${name}"`);
	}
}
