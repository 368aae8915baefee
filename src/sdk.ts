/**
 * The one door to the MCP SDK at runtime: `loadSdk()` imports `sdk.lazy.ts` once, for the runtime
 * and the auth modules alike; `sdkConsole` keeps the SDK's console chatter (it logs with `console.*`,
 * which would draw over Pi's TUI) off the terminal while a runtime lives.
 */
import { once } from "./async.ts";
import { errorText, SdkUnavailable } from "./errors.ts";
import { sanitize, shortText } from "./output/text.ts";
import type { Sdk } from "./sdk.lazy.ts";

const SDK_CONSOLE = /^(\[mcp-sdk\]|Client\.list\w*\(\) called)/;
const METHODS = ["debug", "warn", "log", "info", "error"] as const;

/**
 * The SDK's console chatter, diverted while a runtime holds the guard (it would draw over Pi's TUI); the
 * console is restored once the last holder lets go. Other output passes untouched.
 */
class SdkConsole {
	readonly #holds = new Set<symbol>();
	#originals?: Readonly<Record<(typeof METHODS)[number], (...args: unknown[]) => void>>;
	#notices: readonly string[] = [];

	/** SDK notices diverted from the console (newest last, at most 20). */
	notices(): readonly string[] {
		return this.#notices;
	}

	/** Diverts the SDK's notices until the returned release is called (a second call does nothing). */
	hold(): () => void {
		const hold = Symbol("hold");
		this.#holds.add(hold);
		if (!this.#originals) this.#divert();
		return () => {
			this.#holds.delete(hold);
			if (this.#holds.size === 0) this.#restore();
		};
	}

	#divert(): void {
		const originals = { debug: console.debug, warn: console.warn, log: console.log, info: console.info, error: console.error };
		this.#originals = originals;
		for (const method of METHODS) {
			console[method] = (...args: unknown[]) => {
				if (typeof args[0] === "string" && SDK_CONSOLE.test(args[0])) {
					this.#notices = [...this.#notices.slice(-19), sanitize(args[0]).slice(0, 300)];
					return;
				}
				originals[method].apply(console, args);
			};
		}
	}

	#restore(): void {
		const originals = this.#originals;
		this.#originals = undefined;
		if (originals) for (const method of METHODS) console[method] = originals[method];
	}
}

/** The one guard of the process's console (a runtime holds it from creation to disposal). */
export const sdkConsole = new SdkConsole();

/**
 * Loads the SDK once. A failed import becomes `SdkUnavailable` (its first line only: Node's message
 * names the missing package and the importer).
 */
export const loadSdk = once(
	(): Promise<Sdk> =>
		import("./sdk.lazy.ts").catch((error: unknown) => {
			throw new SdkUnavailable(shortText(sanitize(errorText(error).split("\n")[0] ?? ""), 300));
		}),
);
