/**
 * One server's connection as the connection table (`table.ts`) records it, replaced whole on each change:
 * `idle` until used, `connecting` while the shared setup runs, `ready` with its tool index and any listing
 * in flight, `failed` with the latched error.
 */
import type { Live } from "../contracts.ts";
import type { ToolIndex } from "./visible-tools.ts";

export type Connection =
	| Readonly<{ state: "idle" }>
	| Readonly<{ state: "connecting"; setup: Promise<Live>; abort: AbortController }>
	| Readonly<{ state: "ready"; live: Live; index?: ToolIndex; listing?: Promise<ToolIndex> }>
	| Readonly<{ state: "failed"; error: Error }>;
