/**
 * What the user approved of each server, and what is withheld until they do (#47). `Pins` owns the
 * pins file for a session (read at the first connection, written in the background, `flush` awaits
 * it); `ServerPins` is one server identity's view: it filters each list result page before the SDK
 * sees it (a changed, new or unpinnable definition is taken out and held as pending), pins a kind on
 * first use (its first whole listing), and says which instructions may be given.
 */
import { canonical } from "./canonical.ts";
import { type Approved, applyChanges, type Kind, type PinChange, type PinsData, PinsUnreadable, parsePins } from "./file.ts";

type Held = { server: string; seen: Set<Kind>; definitions: Map<string, Approved> };

const PREFIX: Readonly<Record<Kind, string>> = { tools: "tool", prompts: "prompt", templates: "template", instructions: "" };

/** The key of a definition in the pins: `tool:read_file`, `prompt:review`, `template:notes`, `instructions`. */
export function keyOf(kind: Kind, name: string): string {
	return kind === "instructions" ? "instructions" : `${PREFIX[kind]}:${name}`;
}

function nameOf(kind: Kind, item: unknown): string {
	const record = (item ?? {}) as Record<string, unknown>;
	const name = kind === "templates" ? (record.name ?? record.uriTemplate) : record.name;
	return typeof name === "string" ? name : "";
}

/** `value` with each exact secret replaced (the stored copy; the hash is of what came). */
export function redacted(value: unknown, secrets: readonly string[]): unknown {
	const present = secrets.filter((secret) => secret.length >= 4);
	if (present.length === 0) return value;
	const text = JSON.stringify(value) ?? "null";
	if (!present.some((secret) => text.includes(secret))) return value;
	const escaped = present.map((secret) => (JSON.stringify(secret) ?? "").slice(1, -1));
	return JSON.parse(escaped.reduce((acc, secret) => acc.split(secret).join("[redacted]"), text));
}

/** A definition withheld from the model until the user approves it. */
export type Pending = Readonly<{
	key: string;
	kind: Kind;
	name: string;
	hash: string;
	/** The definition as it came on the wire (never shown to the model). */
	definition: unknown;
	/** The approved one, when this is a change of it. */
	approved?: unknown;
	/** Why: changed, new, an external `$ref` (cannot be pinned), or the pins file cannot be read. */
	reason: "changed" | "new" | "external" | "unreadable";
	external?: string;
}>;

/** The file's I/O (the runtime gives it: the lock and the safe writes live in rooms above this one). */
export type PinsIo = Readonly<{
	/** The file's text, undefined when it does not exist; throws when it cannot be read. */
	read(path: string): Promise<string | undefined>;
	/** Re-reads the file under its lock and writes what `next` makes of its text. */
	update(path: string, next: (text: string | undefined) => string): Promise<void>;
}>;

export class Pins {
	readonly path: string;
	#loaded?: Promise<void>;
	#error?: PinsUnreadable;
	readonly #held = new Map<string, Held>();
	readonly #views = new Map<string, ServerPins>();
	#writes: Promise<void> = Promise.resolve();
	#writeError?: Error;

	readonly #io: PinsIo;

	constructor(path: string, io: PinsIo) {
		this.path = path;
		this.#io = io;
	}

	/** Reads the file once (a missing file is first use); later calls share the read. */
	load(): Promise<void> {
		this.#loaded ??= this.#io
			.read(this.path)
			.then((text) => this.#adopt(parsePins(this.path, text)))
			.catch((error: unknown) => {
				this.#error = error instanceof PinsUnreadable ? error : new PinsUnreadable(this.path, String(error));
			});
		return this.#loaded;
	}

	#adopt(data: PinsData): void {
		for (const [identity, entry] of Object.entries(data.servers)) {
			this.#held.set(identity, {
				server: entry.server,
				seen: new Set(entry.seen),
				definitions: new Map(Object.entries(entry.definitions)),
			});
		}
	}

	/** Set when the file cannot be read: every definition stays withheld, nothing is written. */
	get error(): PinsUnreadable | undefined {
		return this.#error;
	}

	/** The last background write's failure, if any (approvals await their own). */
	get writeError(): Error | undefined {
		return this.#writeError;
	}

	/** One identity's view, the same object for the whole session. */
	server(identity: string, label: string, secrets: () => readonly string[] = () => []): ServerPins {
		const existing = this.#views.get(identity);
		if (existing) return existing;
		const view = new ServerPins(this, identity, label, secrets);
		this.#views.set(identity, view);
		return view;
	}

	held(identity: string): Held | undefined {
		return this.#held.get(identity);
	}

	/** Applies `change` now in memory and queues its write; the promise is the write's. */
	record(change: PinChange): Promise<void> {
		if (this.#error) return Promise.reject(this.#error);
		const held = this.#held.get(change.identity) ?? { server: change.server, seen: new Set(), definitions: new Map() };
		if (change.forget) this.#held.delete(change.identity);
		else {
			for (const kind of change.seen ?? []) held.seen.add(kind);
			for (const [key, approved] of Object.entries(change.set ?? {})) held.definitions.set(key, approved);
			this.#held.set(change.identity, held);
		}
		const write = this.#writes.then(() =>
			this.#io.update(this.path, (text) => `${JSON.stringify(applyChanges(parsePins(this.path, text), [change]))}\n`),
		);
		this.#writes = write.then(
			() => undefined,
			(error: Error) => {
				this.#writeError = error;
			},
		);
		return write;
	}

	/** Waits for every write queued so far. */
	flush(): Promise<void> {
		return this.#writes;
	}
}

export class ServerPins {
	readonly #pins: Pins;
	readonly identity: string;
	readonly label: string;
	/** The values never stored in clear, read at each write (a stored secret is known only once the server connects). */
	readonly #secrets: () => readonly string[];
	/** Per kind, what the last whole listing withheld. */
	readonly #pending = new Map<Kind, Map<string, Pending>>();
	/** Per kind, the pages of a listing still coming. */
	readonly #pages = new Map<Kind, Map<string, Pending>>();
	/** Kinds whose first listing is being pinned now (all its pages). */
	readonly #first = new Set<Kind>();
	readonly #firstSeen = new Map<Kind, Record<string, Approved>>();
	/** Kinds this session has a whole listing of. */
	readonly #listed = new Set<Kind>();
	/** The last canonical hash per key and the wire text it came from: an unchanged list costs one stringify. */
	readonly #hashes = new Map<string, Readonly<{ wire: string; hash: string; external?: string }>>();

	constructor(pins: Pins, identity: string, label: string, secrets: () => readonly string[]) {
		this.#pins = pins;
		this.identity = identity;
		this.label = label;
		this.#secrets = secrets;
	}

	#hash(key: string, item: unknown): Readonly<{ hash: string; external?: string }> {
		const wire = JSON.stringify(item) ?? "null";
		const known = this.#hashes.get(key);
		if (known && known.wire === wire) return known;
		const made = { wire, ...canonical(item) };
		this.#hashes.set(key, made);
		return made;
	}

	/** One page of a list result: the definitions the model may see; the rest is held as pending. */
	page(kind: Kind, items: readonly unknown[], last: boolean): unknown[] {
		const error = this.#pins.error;
		const held = this.#pins.held(this.identity);
		const pages = this.#pages.get(kind) ?? new Map<string, Pending>();
		this.#pages.set(kind, pages);
		if (!error && !held?.seen.has(kind) && !this.#first.has(kind)) this.#first.add(kind);
		const first = this.#first.has(kind);
		const approvedNow = this.#firstSeen.get(kind) ?? {};
		const shown = items.filter((item) => {
			const name = nameOf(kind, item);
			const key = keyOf(kind, name);
			const { hash, external } = this.#hash(key, item);
			const approved = held?.definitions.get(key);
			if (!error && approved?.hash === hash) return true;
			if (!error && first && external === undefined) {
				approvedNow[key] = { hash, definition: redacted(item, this.#secrets()) };
				return true;
			}
			const reason = error ? "unreadable" : external !== undefined ? "external" : approved ? "changed" : "new";
			pages.set(key, { key, kind, name, hash, definition: item, approved: approved?.definition, reason, external });
			return false;
		});
		if (first) this.#firstSeen.set(kind, approvedNow);
		if (last) this.#complete(kind, pages, first, approvedNow);
		return shown;
	}

	#complete(kind: Kind, pages: Map<string, Pending>, first: boolean, approvedNow: Record<string, Approved>): void {
		this.#pending.set(kind, pages);
		this.#pages.delete(kind);
		this.#listed.add(kind);
		if (!first) return;
		this.#first.delete(kind);
		this.#firstSeen.delete(kind);
		void this.#pins
			.record({ identity: this.identity, server: this.label, set: approvedNow, seen: [kind] })
			.catch(() => undefined);
	}

	/** The last instructions judged and what may be given of them (status asks often). */
	#given?: Readonly<{ text: string | undefined; give: string | undefined }>;

	/** The instructions the model may be given: these if approved (pinned on first use), else the approved ones. */
	instructions(text: string | undefined): string | undefined {
		if (this.#given && this.#given.text === text && !this.#pins.error) return this.#given.give;
		const give = this.#judge(text);
		this.#given = { text, give };
		return give;
	}

	#judge(text: string | undefined): string | undefined {
		const value = text ?? "";
		const key = "instructions";
		const { hash } = this.#hash(key, value);
		const held = this.#pins.held(this.identity);
		const approved = held?.definitions.get(key);
		const pending = new Map<string, Pending>();
		this.#pending.set("instructions", pending);
		if (this.#pins.error) {
			pending.set(key, { key, kind: "instructions", name: "instructions", hash, definition: value, reason: "unreadable" });
			return undefined;
		}
		if (approved?.hash === hash) return text;
		if (!held?.seen.has("instructions")) {
			void this.#pins
				.record({
					identity: this.identity,
					server: this.label,
					set: { [key]: { hash, definition: redacted(value, this.#secrets()) } },
					seen: ["instructions"],
				})
				.catch(() => undefined);
			return text;
		}
		const reason = approved ? "changed" : "new";
		pending.set(key, {
			key,
			kind: "instructions",
			name: "instructions",
			hash,
			definition: value,
			approved: approved?.definition,
			reason,
		});
		const old = approved?.definition;
		return typeof old === "string" && old !== "" ? old : undefined;
	}

	/** Whether a whole listing of `kind` was seen this session. */
	listed(kind: Kind): boolean {
		return this.#listed.has(kind);
	}

	/** Everything withheld now, instructions included. */
	pending(): readonly Pending[] {
		return [...this.#pending.values()].flatMap((each) => [...each.values()]);
	}

	/** The pending definition of `kind` named `name` (a template also by its URI template), if any. */
	withheld(kind: Kind, name: string): Pending | undefined {
		const pending = this.#pending.get(kind);
		const found = pending?.get(keyOf(kind, name));
		if (found || kind !== "templates") return found;
		return [...(pending?.values() ?? [])].find((each) => (each.definition as { uriTemplate?: unknown }).uriTemplate === name);
	}

	/** Approves the pending definitions with these keys (all when none given); resolves once written. */
	async approve(keys?: readonly string[]): Promise<readonly Pending[]> {
		const chosen = this.pending().filter((each) => keys === undefined || keys.includes(each.key));
		if (chosen.length === 0) return [];
		if (this.#pins.error) throw this.#pins.error;
		const set = Object.fromEntries(
			chosen.map((each) => [
				each.key,
				{ hash: each.hash, definition: redacted(each.definition, this.#secrets()) } satisfies Approved,
			]),
		);
		await this.#pins.record({
			identity: this.identity,
			server: this.label,
			set,
			seen: [...new Set(chosen.map((each) => each.kind))],
		});
		for (const each of chosen) this.#pending.get(each.kind)?.delete(each.key);
		if (chosen.some((each) => each.kind === "instructions")) this.#given = undefined;
		return chosen;
	}
}
