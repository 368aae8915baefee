/**
 * The open manager's changing state, each piece with one owner: the view (screens, credential states,
 * configuration, the one-line message), a slot replaced whole, and a list's or text's scroll position.
 */
import type { ConfigSnapshot } from "../schema.ts";

/** One value replaced whole; readers take the current one. */
export class Slot<T> {
	#value: T;

	constructor(value: T) {
		this.#value = value;
	}

	get(): T {
		return this.#value;
	}

	set(value: T): void {
		this.#value = value;
	}
}

/**
 * What every screen reads: the screen stack, credential states, the configuration as last read (an
 * enable or disable replaces it; the runtime is the same object throughout) and the one-line message.
 */
export class View<S> {
	#stack: readonly S[] = [];
	#credentials: ReadonlyMap<string, string> = new Map();
	#config: ConfigSnapshot;
	#message: string | undefined;

	constructor(config: ConfigSnapshot) {
		this.#config = config;
	}

	get stack(): readonly S[] {
		return this.#stack;
	}

	get credentials(): ReadonlyMap<string, string> {
		return this.#credentials;
	}

	get config(): ConfigSnapshot {
		return this.#config;
	}

	get message(): string | undefined {
		return this.#message;
	}

	push(screen: S): void {
		this.#stack = [...this.#stack, screen];
	}

	/** Drops the top screen; how many are left. */
	pop(): number {
		this.#stack = this.#stack.slice(0, -1);
		return this.#stack.length;
	}

	setCredentials(credentials: ReadonlyMap<string, string>): void {
		this.#credentials = credentials;
	}

	setConfig(config: ConfigSnapshot): void {
		this.#config = config;
	}

	say(message: string | undefined): void {
		this.#message = message;
	}
}

/** A window of `page` lines over `lines`, starting at `top`; moves keep it inside. */
export class Window {
	#top = 0;
	#lines = 0;
	#page = 1;

	get top(): number {
		return this.#top;
	}

	get page(): number {
		return this.#page;
	}

	/** New sizes; `top` stays where it was as far as they allow, and at or above `keep` when given. */
	fit(lines: number, page: number, keep = Number.POSITIVE_INFINITY): void {
		this.#lines = lines;
		this.#page = page;
		this.#top = Math.max(0, Math.min(this.#top, keep, lines - page));
	}

	/** Keeps line `index` in view, moving down as little as needed. */
	show(index: number): void {
		if (index >= this.#top + this.#page) this.#top = index - this.#page + 1;
	}

	/** Scrolls by `step` lines, inside the text. */
	scroll(step: number): void {
		this.#top = Math.max(0, Math.min(this.#top + step, this.#lines - this.#page));
	}
}
