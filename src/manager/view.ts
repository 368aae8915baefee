/**
 * The open manager's shared state, with one owner: the screens, credential states, configuration and the
 * one-line message. A screen's own state (its scroll position, what it loaded) lives in the function that
 * makes the screen.
 */
import type { CredentialState } from "../contracts.ts";
import type { ConfigSnapshot } from "../schema.ts";

/**
 * What every screen reads: the screen stack, credential states, the configuration as last read (an
 * enable or disable replaces it; the runtime is the same object throughout) and the one-line message.
 */
export class View<S> {
	#stack: readonly S[] = [];
	#credentials: ReadonlyMap<string, CredentialState> = new Map();
	#config: ConfigSnapshot;
	#message: string | undefined;

	constructor(config: ConfigSnapshot) {
		this.#config = config;
	}

	get stack(): readonly S[] {
		return this.#stack;
	}

	get credentials(): ReadonlyMap<string, CredentialState> {
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

	setCredentials(credentials: ReadonlyMap<string, CredentialState>): void {
		this.#credentials = credentials;
	}

	setConfig(config: ConfigSnapshot): void {
		this.#config = config;
	}

	say(message: string | undefined): void {
		this.#message = message;
	}
}
