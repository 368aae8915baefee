/**
 * The runtime's side of pinning (#47): which servers are pinned, each connection's list results
 * filtered before the SDK parses them (the SDK drops keys no spec names, so the raw result is seen at
 * the transport, through its public `onmessage`), the line the model gets about withheld definitions,
 * and the refusal of a call, a get or a completion of one. What counts and what is approved is
 * `pins/`'s; this file only asks it. One visible set: the SDK client never holds a withheld definition,
 * so every listing, search, count, describe and hint (and `confirm`'s hints) is of approved ones only.
 */

import { serverIdentity } from "../config/identity.ts";
import type { Live, PendingChange, PinStatus } from "../contracts.ts";
import { escapeName } from "../output/text.ts";
import { pendingTitle, shownDefinition } from "../pins/diff.ts";
import type { Kind } from "../pins/file.ts";
import { Pins, redacted, type ServerPins } from "../pins/pins.ts";
import type { ServerConfig } from "../schema.ts";
import type { OpenOptions } from "./open.ts";
import { pinsIo } from "./pins-io.ts";

/** A JSON-RPC message as the transport hands it on (only a result's lists are looked at). */
type Message = Readonly<Record<string, unknown>>;

const LISTS: readonly (readonly [string, Kind])[] = [
	["tools", "tools"],
	["prompts", "prompts"],
	["resourceTemplates", "templates"],
];

/** A list result page with its withheld definitions taken out; any other message as it came. */
export function filterMessage(view: ServerPins, message: Message): Message {
	const result = message.result as Record<string, unknown> | undefined;
	if (result === null || typeof result !== "object") return message;
	for (const [field, kind] of LISTS) {
		const items = result[field];
		if (!Array.isArray(items)) continue;
		const last = result.nextCursor === undefined || result.nextCursor === null;
		return { ...message, result: { ...result, [field]: view.page(kind, items, last) } };
	}
	return message;
}

/** Pinning for one runtime: the pins file (`path`; none: nothing is pinned, a session made by hand). */
type Hooks = Required<Pick<OpenOptions, "onListChanged">> & Pick<OpenOptions, "filter">;

export class PinnedServers {
	readonly #pins?: Pins;
	/** Servers whose tool list changed since last listed (`list_changed`): the held index will not do. */
	readonly #changed = new Set<string>();

	/**
	 * Opens a server with pinning's hooks (its list results filtered, `list_changed` heard); its pins are read
	 * first (the file at the first connection) and its instructions pinned once it is open.
	 */
	async open(config: ServerConfig, open: (hooks: Hooks) => Promise<Live>): Promise<Live> {
		const view = await this.prepare(config);
		const onListChanged = (kind: string) => void (kind === "tools" && this.#changed.add(config.name));
		const live = await open({ onListChanged, ...(view && { filter: (message) => filterMessage(view, message) }) });
		this.#changed.delete(config.name);
		view?.instructions(live.instructions);
		return live;
	}

	/** Whether the server's tool list changed since this was last asked (the answer is given once). */
	changed(name: string): boolean {
		return this.#changed.delete(name);
	}

	/** `secretsOf`: every value never to store in clear for a server (configured, stored, seen tokens). */
	constructor(
		path: string | undefined,
		readonly secretsOf: (config: ServerConfig) => readonly string[] = (config) => config.secretValues,
	) {
		this.#pins = path === undefined ? undefined : new Pins(path, pinsIo);
	}

	/** The server's view once its pins are read (at its first connection); undefined when not pinned. */
	async prepare(config: ServerConfig): Promise<ServerPins | undefined> {
		if (!this.#pins || config.pin === false) return undefined;
		await this.#pins.load();
		return this.view(config);
	}

	/** The view of a server whose pins were read; undefined before that or when not pinned. */
	view(config: ServerConfig | undefined): ServerPins | undefined {
		if (!this.#pins || !config || config.pin === false) return undefined;
		const identity = serverIdentity(config);
		return this.#pins.server(identity.key, identity.label, () => this.secretsOf(config));
	}

	/** The instructions the model may be given: these once approved, else the approved ones (none while unreadable). */
	instructions(config: ServerConfig | undefined, text: string | undefined): string | undefined {
		const view = this.view(config);
		return view ? view.instructions(text) : text;
	}

	/** What status says: not pinned, pinned with N withheld, or the file unreadable. */
	status(config: ServerConfig | undefined): PinStatus | undefined {
		if (!config) return undefined;
		if (!this.#pins || config.pin === false) return { state: "not pinned", pending: 0 };
		const pending = this.view(config)?.pending().length ?? 0;
		const state = this.#pins.error ? "unreadable" : "pinned";
		return { state, pending, note: pending > 0 ? this.note(config, pending) : undefined };
	}

	/** The one line the model gets about a server's withheld definitions: never their text. */
	note(config: ServerConfig, pending: number): string {
		const server = escapeName(config.name);
		const error = this.#pins?.error;
		if (error) return `${pending} definitions of ${server} are withheld: ${error.message.replace("<server>", server)}`;
		return `${pending} definition${pending === 1 ? "" : "s"} of ${server} changed since you approved them; review with /mcp or pi-mcp trust ${server}`;
	}

	/** Why a call, get or completion of `name` is refused (it is withheld), if it is: "is withheld: …". */
	refusal(config: ServerConfig | undefined, kind: Kind, name: string): string | undefined {
		const view = this.view(config);
		const pending = view?.withheld(kind, name);
		if (!config || !pending) return undefined;
		const server = escapeName(config.name);
		const why =
			pending.reason === "external"
				? "its schema has an external $ref, which cannot be pinned"
				: pending.reason === "unreadable"
					? `the pins file cannot be read (${this.#pins?.path}); run pi-mcp trust --reset ${server}`
					: pending.reason === "new"
						? "it is new since the user approved this server's definitions"
						: "it changed since the user approved it";
		return `is withheld: ${why}; the user can review it with /mcp or pi-mcp trust ${server}`;
	}

	/** The definitions withheld now (after the listings this session made), as a review shows them. */
	pending(config: ServerConfig | undefined): readonly PendingChange[] {
		return (this.view(config)?.pending() ?? []).map((each) => ({
			key: each.key,
			kind: each.kind,
			name: each.name,
			reason: each.reason,
			title: pendingTitle(each),
			before: shownDefinition(each.approved),
			after: shownDefinition(redacted(each.definition, config ? this.secretsOf(config) : [])),
		}));
	}

	/** The pins file's problem, when it cannot be read. */
	get error(): Error | undefined {
		return this.#pins?.error;
	}

	/** Waits for the writes queued so far (the shell, before it exits). */
	flush(): Promise<void> {
		return this.#pins?.flush() ?? Promise.resolve();
	}
}
