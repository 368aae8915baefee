/**
 * What went wrong, said once: a setup that failed, a connection that closed by itself, a request
 * that failed. Each message names the server, says what to do, and passes the sanitiser; SDK
 * errors are recognised by the SDK's own idiom (`instanceof SdkError` and its codes), with the
 * loaded SDK passed in by the caller (this file never loads it).
 */
import { AuthRequired, CallFailed, errorText, SetupFailed } from "../errors.ts";
import type { ServerConfig } from "../schema.ts";
import type { Sdk } from "../sdk.lazy.ts";

/** Why a setup ended, for `setupError`. */
export type SetupEnd = Readonly<{ ended: boolean; aborted: boolean; timedOut: boolean }>;

/** A timeout as people say it: "500 ms", "2 s", "1.5 s" (rounding 60 ms to "0 s" would mislead). */
export function duration(ms: number): string {
	if (ms < 1000) return `${Math.round(ms)} ms`;
	return `${Number((ms / 1000).toFixed(1))} s`;
}

/** The last `count` lines of `text`. */
export function lastLines(text: string, count: number): string {
	return text.split("\n").slice(-count).join("\n");
}

function stderrOf(tail: string | undefined): string {
	return tail ? `\nstderr (last lines):\n${lastLines(tail, 8)}` : "";
}

/** A failed setup as one message saying what happened and what to do; `AuthRequired` passes as is. */
export function setupError(
	sdk: Sdk,
	config: ServerConfig,
	error: unknown,
	end: SetupEnd,
	tail: string | undefined,
	clean: (text: string) => string,
): Error {
	const name = config.name;
	if (error instanceof AuthRequired) return error;
	const { SdkError, SdkErrorCode } = sdk;
	const raw = errorText(error);
	const sdkCode = error instanceof SdkError ? error.code : undefined;
	const reason = end.ended
		? "setup was cancelled because the session ended"
		: end.aborted && !end.timedOut
			? "setup was cancelled by a reconnect"
			: end.timedOut
				? `setup did not finish within ${duration(config.requestTimeoutMs)}`
				: (error as NodeJS.ErrnoException).code === "ENOENT"
					? `command "${config.command}" was not found (check "command" and PATH)`
					: sdkCode === SdkErrorCode.EraNegotiationFailed && config.protocolVersion === "2026-07-28"
						? `the server does not offer protocol 2026-07-28, which "protocolVersion" pins; set "protocolVersion" to "auto" or "legacy" to use it (${raw})`
						: sdkCode === SdkErrorCode.ConnectionClosed || /connection closed/i.test(raw)
							? `the server closed the connection during setup (${raw})`
							: raw;
	const stderr = config.transport === "stdio" ? stderrOf(tail) : "";
	return new SetupFailed(
		name,
		clean(`MCP server "${name}" failed to start: ${reason}.${stderr}\nFix the cause, then run /mcp reconnect ${name}.`),
	);
}

/** The connection closed by itself: what to tell the next caller. */
export function closedError(name: string, tail: string, clean: (text: string) => string): SetupFailed {
	return new SetupFailed(
		name,
		clean(`MCP server "${name}" closed the connection.${stderrOf(tail)}\nRun /mcp reconnect ${name} to start it again.`),
	);
}

/** Where a failed request stood: `what` names it ("tool … on MCP server …"). */
export type RequestFailure = Readonly<{
	name: string;
	what: string;
	timeoutMs: number;
	cancelled: boolean;
	ended: boolean;
}>;

/** A failed request as `CallFailed` with its reason; our own errors pass as they are. */
export function requestError(sdk: Sdk, error: unknown, at: RequestFailure, clean: (text: string) => string): Error {
	if (error instanceof CallFailed || error instanceof SetupFailed || error instanceof AuthRequired) return error;
	const { name, what } = at;
	if (at.cancelled) return new CallFailed(name, `${what} was cancelled`, "cancelled");
	if (at.ended) return new CallFailed(name, `${what} was stopped because the session ended`, "shutdown");
	const { SdkError, SdkErrorCode: Code, ProtocolError, ProtocolErrorCode } = sdk;
	const code = error instanceof SdkError ? error.code : undefined;
	if (code === Code.RequestTimeout) {
		return new CallFailed(name, `${what} timed out after ${duration(at.timeoutMs)} without progress`, "timeout");
	}
	if (code === Code.ConnectionClosed || code === Code.NotConnected) {
		const text = `${what} failed: the connection closed (${errorText(error)}). Run /mcp reconnect ${name}.`;
		return new CallFailed(name, clean(text), "closed");
	}
	const missingCapability = error instanceof ProtocolError && error.code === ProtocolErrorCode.MissingRequiredClientCapability;
	if (code === Code.CapabilityNotSupported || code === Code.UnsupportedResultType || missingCapability) {
		const text = `${what} asked for interactive input (elicitation, sampling or roots), which pi-mcp does not support: ${errorText(error)}`;
		return new CallFailed(name, clean(text), "refused");
	}
	return new CallFailed(name, clean(`${what} failed: ${errorText(error)}`), "error");
}
