/**
 * A server's status as the faces show it, from what the connection table holds: its entry, its
 * connection, its stderr tail. Pure: never connects, never waits.
 */
import type { ServerStatus } from "../contracts.ts";
import { wordedOf } from "../errors.ts";
import { sanitize } from "../output/text.ts";
import type { ServerEntry } from "../schema.ts";
import type { Connection } from "./connection.ts";
import { boundedInstructions } from "./instructions.ts";
import type { PinnedServers } from "./pinned.ts";
import { filterFor, hiddenSummary } from "./visible-tools.ts";

export type StatusInputs = Readonly<{
	entry: ServerEntry;
	connection: Connection;
	/** The server's stderr tail, already cleaned of secrets. */
	stderrTail: string;
	/** Values never to show (the instructions are redacted with them). */
	secrets: readonly string[];
	/** Pinning (#47): the server's pin status, and which instructions may be given (changed ones are not). */
	pinned?: PinnedServers;
}>;

export function serverStatus({ entry, connection, stderrTail, secrets, pinned }: StatusInputs): ServerStatus {
	const base = {
		name: entry.name,
		source: entry.source,
		transport: entry.config?.transport,
		description: entry.config?.description ? sanitize(entry.config.description) : undefined,
		ignoredKeys: entry.ignoredKeys,
		stderrTail: stderrTail || undefined,
		pins: pinned?.status(entry.config),
	};
	if (entry.error !== undefined) return { ...base, state: "invalid", error: entry.error, problem: entry.problem };
	if (!entry.enabled) return { ...base, state: "disabled" };
	if (connection.state === "failed") {
		return { ...base, state: "failed", error: connection.error.message, errorIn: wordedOf(connection.error) };
	}
	const hiddenTools = hiddenSummary(filterFor(entry), connection.state === "ready" ? connection.index : undefined);
	if (connection.state !== "ready") return { ...base, state: connection.state, hiddenTools };
	return {
		...base,
		hiddenTools,
		instructions: boundedInstructions(
			pinned ? pinned.instructions(entry.config, connection.live.instructions) : connection.live.instructions,
			secrets,
		),
		state: "ready",
		era: connection.live.era,
		protocolVersion: connection.live.protocolVersion,
		serverName: connection.live.serverName ? sanitize(connection.live.serverName) : undefined,
		toolCount: connection.index?.tools.length,
	};
}
