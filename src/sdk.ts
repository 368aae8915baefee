/**
 * The one door to the MCP SDK at runtime: `loadSdk()` imports `sdk.lazy.ts` once, for the runtime
 * and the auth modules alike, and on that first load contains the SDK's console chatter (it logs
 * with `console.*`, which would draw over Pi's TUI).
 */
import { once } from "./async.ts";
import { errorText, SdkUnavailable } from "./errors.ts";
import { sanitize, shortText } from "./output/text.ts";
import type { Sdk } from "./sdk.lazy.ts";

/** SDK notices diverted from the console (newest last, at most 20). */
export const sdkNotices: string[] = [];
const SDK_CONSOLE = /^(\[mcp-sdk\]|Client\.list\w*\(\) called)/;

/**
 * Loads the SDK once; the first load also contains its console output. A failed import becomes
 * `SdkUnavailable` (its first line only: Node's message names the missing package and the importer).
 */
export const loadSdk = once(
	(): Promise<Sdk> =>
		import("./sdk.lazy.ts").then(
			(sdk) => {
				containSdkConsole();
				return sdk;
			},
			(error: unknown) => {
				throw new SdkUnavailable(shortText(sanitize(errorText(error).split("\n")[0] ?? ""), 300));
			},
		),
);

function containSdkConsole(): void {
	const methods = ["debug", "warn", "log", "info", "error"] as const;
	for (const method of methods) {
		const original = console[method];
		if ((original as { piMcpContained?: boolean }).piMcpContained) continue;
		const wrapped = (...args: unknown[]) => {
			if (typeof args[0] === "string" && SDK_CONSOLE.test(args[0])) {
				sdkNotices.push(sanitize(args[0]).slice(0, 300));
				if (sdkNotices.length > 20) sdkNotices.shift();
				return;
			}
			original.apply(console, args);
		};
		Object.assign(wrapped, { piMcpContained: true });
		console[method] = wrapped;
	}
}
