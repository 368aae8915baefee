/** Small promise helpers shared by every module (one copy each). */

/**
 * `make` runs on the first call only; later calls get the same value. A rejected promise is
 * forgotten, so the next call tries again (a failed import or directory check is not latched).
 */
export function once<T>(make: () => T): () => T {
	const memo = new Memo(make);
	return () => memo.get();
}

/** `once`'s value: made on the first `get`, forgotten if it is a promise that rejects. */
class Memo<T> {
	readonly #make: () => T;
	#held?: { readonly current: T };

	constructor(make: () => T) {
		this.#make = make;
	}

	get(): T {
		if (this.#held) return this.#held.current;
		const current = this.#make();
		this.#held = { current };
		if (current instanceof Promise) {
			current.catch(() => {
				if (this.#held?.current === current) this.#held = undefined;
			});
		}
		return current;
	}
}

/** Resolves after `ms`. Not unref()ed: teardown must finish even when nothing else keeps the loop alive. */
export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Races a promise against a caller's signal, without cancelling the shared work. */
export function awaitWith<T>(promise: Promise<T>, signal: AbortSignal | undefined, onAbort: () => Error): Promise<T> {
	if (!signal) return promise;
	if (signal.aborted) return Promise.reject(onAbort());
	return new Promise<T>((resolve, reject) => {
		const abort = () => reject(onAbort());
		signal.addEventListener("abort", abort, { once: true });
		promise.then(
			(value) => {
				signal.removeEventListener("abort", abort);
				resolve(value);
			},
			(error: unknown) => {
				signal.removeEventListener("abort", abort);
				reject(error);
			},
		);
	});
}

/** Resolves when `promise` settles or after `ms`, whichever is first (the timer does not hold the process). */
export function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
	return new Promise<void>((resolve) => {
		const timer = setTimeout(resolve, ms);
		timer.unref();
		promise.then(
			() => {
				clearTimeout(timer);
				resolve();
			},
			() => {
				clearTimeout(timer);
				resolve();
			},
		);
	});
}
