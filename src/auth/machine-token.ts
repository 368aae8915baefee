/** The client_credentials token's clock: when it was issued and expires, and the fetch under way. */
import { expiresAtOf, isStale } from "./record.ts";

/** One fetch at a time, shared by concurrent callers; each success dates the token anew. */
export class MachineToken {
	readonly #now: () => number;
	#times?: Readonly<{ issuedAt: number; expiresAt?: number }>;
	#fetching?: Promise<void>;

	constructor(now: () => number) {
		this.#now = now;
	}

	/** Runs `fetch` unless one is under way; what it resolves to is the token's lifetime in seconds. */
	fetch(fetch: () => Promise<number | undefined>): Promise<void> {
		this.#fetching ??= fetch()
			.then((expiresIn) => {
				const issuedAt = this.#now();
				this.#times = { issuedAt, expiresAt: expiresAtOf(expiresIn, issuedAt) };
			})
			.finally(() => {
				this.#fetching = undefined;
			});
		return this.#fetching;
	}

	/** Whether the token should be fetched again before use (its lifetime, when known, sets the margin). */
	stale(): boolean {
		return isStale(this.#times?.expiresAt, this.#now(), this.#times?.issuedAt);
	}
}
