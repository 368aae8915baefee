/**
 * The early start (`src/tool/early/start.ts`) over a session, and a model writing `mcp` calls to it, for
 * tests that drive it without Pi (fast tier and real tier alike).
 */
import type { MessageUpdateEvent } from "@earendil-works/pi-coding-agent";
import type { Session } from "../../src/contracts.ts";
import { DESCRIPTION, parameters } from "../../src/tool/definition.ts";
import { EarlyStart } from "../../src/tool/early/start.ts";

/** The `mcp` tool as `index.ts` registers it and hands it to the early start: the same schema object. */
export const MCP_TOOL = { name: "mcp", description: DESCRIPTION, parameters };

/** The early start over `session`, and a model writing `mcp` calls to it. */
export function writer(session: Session) {
	const early = new EarlyStart(
		{
			entries: () => session.config.servers,
			runtime: () => session.runtime,
			preload: async () => undefined,
			open: async () => session,
		},
		() => true,
		MCP_TOOL,
	);
	const block = (id: string, args: Record<string, unknown>) => ({ type: "toolCall", id, name: "mcp", arguments: args });
	const update = (assistantMessageEvent: Record<string, unknown>) =>
		early.update({ type: "message_update", assistantMessageEvent } as unknown as MessageUpdateEvent);
	/** Writes a whole call (begun, then complete); its steps run once the session is open (a tick later). */
	const write = async (id: string, args: Record<string, unknown>) => {
		update({ type: "toolcall_start", contentIndex: 0, partial: { content: [block(id, {})] } });
		update({ type: "toolcall_end", contentIndex: 0, toolCall: block(id, args) });
		await new Promise((resolve) => setImmediate(resolve));
	};
	/** The call runs: the session it gets. */
	const run = (id: string, action: string, server?: string) => early.take({ id, action, server })(session);
	return { early, write, run };
}
