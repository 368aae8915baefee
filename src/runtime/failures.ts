/**
 * What went wrong, said once: a setup that failed, a connection that closed by itself, a request
 * that failed. Each message names the server, says what to do, and passes the sanitiser; SDK
 * errors are recognised by the SDK's own idiom (`instanceof SdkError` and its codes), with the
 * loaded SDK passed in by the caller (this file never loads it).
 */
import { AuthRequired, CallFailed, errorText, SetupFailed, type Words } from "../errors.ts";
import { cutLine, escapeName, isTelling } from "../output/text.ts";
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

/**
 * The stderr lines a message shows: up to three telling lines from before the last `count` (where a
 * crash says what happened, above its stack), `…`, then the last `count` lines.
 */
export function tellingLines(text: string, count = 8): string {
	const lines = text.split("\n");
	const last = lines.slice(-count);
	const telling = lines.slice(0, -count).filter(isTelling).slice(0, 3).map(cutLine);
	return telling.length === 0 ? last.join("\n") : [...telling, "…", ...last].join("\n");
}

function stderrOf(tail: string | undefined): string {
	return tail ? `\nstderr (last lines):\n${tellingLines(tail)}` : "";
}

/** How a stdio server's process ended during setup (exit code or signal). */
export type Exit = Readonly<{ code: number | null; signal: NodeJS.Signals | null }>;

/** A setup error of a server whose process had ended by itself: `setupError` names the exit. */
export class ExitedDuringSetup extends Error {
	override readonly name = "ExitedDuringSetup";
	readonly exit: Exit;
	constructor(cause: unknown, exit: Exit) {
		super(errorText(cause), { cause });
		this.exit = exit;
	}
}

/**
 * A command that could not run: the spawn error itself (ENOENT, EACCES), or, through `setsid` and `env`,
 * its exit code 127 or 126 with the line one of them writes (`env: 'x': No such file or directory`).
 */
function spawnFailure(
	config: ServerConfig,
	cause: unknown,
	exit: Exit | undefined,
	tail: string | undefined,
): string | undefined {
	const command = `command "${config.command}"`;
	const code = (cause as NodeJS.ErrnoException | undefined)?.code;
	const execLine =
		exit?.code === 126 || exit?.code === 127
			? /(?:failed to execute |^(?:\S*\/)?env: ).*?: (.+)$/m.exec(tail ?? "")?.[1]
			: undefined;
	if (code === "ENOENT" || /no such file/i.test(execLine ?? "")) return `${command} was not found (check "command" and PATH)`;
	if (code === "EACCES" || /permission denied/i.test(execLine ?? "")) {
		return `${command} could not be run: permission denied (is it an executable file?)`;
	}
	return execLine === undefined ? undefined : `${command} could not be run: ${execLine}`;
}

/** Codes of a failed connection, with what they mean. */
const NETWORK: Readonly<Record<string, string>> = {
	ECONNREFUSED: "connection refused at",
	ENOTFOUND: "host not found (DNS) for",
	EAI_AGAIN: "host not found (DNS) for",
	ECONNRESET: "connection reset by",
	ETIMEDOUT: "connection timed out to",
	EHOSTUNREACH: "host unreachable for",
	ENETUNREACH: "network unreachable for",
};

/** `error` and its causes, outermost first, at most `max` (a cause that is not an Error ends the chain). */
const causes = (error: unknown, max: number): readonly Error[] =>
	error instanceof Error && max > 0 ? [error, ...causes(error.cause, max - 1)] : [];

/** An HTTP server that could not be reached: fetch's "fetch failed" says neither where nor why. */
function networkFailure(url: string, error: unknown): string | undefined {
	const chain = causes(error, 6);
	const code = chain.map((e) => (e as NodeJS.ErrnoException).code).find((c) => c !== undefined && c in NETWORK);
	if (code !== undefined) return `${NETWORK[code]} ${url}`;
	const tls = chain.find((e) => /CERT|TLS|SSL/.test(String((e as NodeJS.ErrnoException).code)));
	if (tls) return `the TLS certificate of ${url} was not accepted (${errorText(tls)})`;
	if (chain.some((e) => errorText(e) === "fetch failed")) return `could not connect to ${url} (${errorText(chain.at(-1))})`;
	return undefined;
}

function exited(exit: Exit): string {
	return exit.code !== null
		? `the server exited with code ${exit.code} before the MCP handshake`
		: `the server was killed by ${exit.signal} before the MCP handshake`;
}

/** Why a setup failed, first thing: the cause when it is known, else the SDK's words. */
function reasonOf(sdk: Sdk, config: ServerConfig, error: unknown, end: SetupEnd, tail: string | undefined): string {
	if (end.ended) return "setup was cancelled because the session ended";
	if (end.aborted && !end.timedOut) return "setup was cancelled by a reconnect";
	if (end.timedOut) return `setup did not finish within ${duration(config.requestTimeoutMs)}`;
	const exit = error instanceof ExitedDuringSetup ? error.exit : undefined;
	const cause = error instanceof ExitedDuringSetup ? error.cause : error;
	const raw = errorText(cause);
	const sdkCode = cause instanceof sdk.SdkError ? cause.code : undefined;
	const failure = config.transport === "stdio" ? spawnFailure(config, cause, exit, tail) : networkFailure(config.url, cause);
	if (failure) return failure;
	if (sdkCode === sdk.SdkErrorCode.EraNegotiationFailed && config.protocolVersion === "2026-07-28") {
		return `the server does not offer protocol 2026-07-28, which "protocolVersion" pins; set "protocolVersion" to "auto" or "legacy" to use it (${raw})`;
	}
	if (sdkCode === sdk.SdkErrorCode.ConnectionClosed || /connection closed/i.test(raw)) {
		return exit ? exited(exit) : `the server closed the connection during setup (${raw})`;
	}
	return raw;
}

/** A failed setup as one message saying what happened and what to do; `AuthRequired` passes as is. */
export function setupError(
	sdk: Sdk,
	config: ServerConfig,
	error: unknown,
	end: SetupEnd,
	tail: string | undefined,
	clean: (text: string) => string,
	words: Words,
): Error {
	const name = config.name;
	if (error instanceof AuthRequired) return error;
	const reason = reasonOf(sdk, config, error, end, tail);
	const stderr = config.transport === "stdio" ? stderrOf(tail) : "";
	const say = (w: Words) =>
		clean(`MCP server "${name}" failed to start: ${reason}.${stderr}\nFix the cause, then run ${w.reconnect(name)}.`);
	return new SetupFailed(name, say(words), { kind: "reconnect", server: name }, say);
}

/** The connection closed by itself: what to tell the next caller. */
export function closedError(name: string, tail: string, clean: (text: string) => string, words: Words, exit?: Exit): SetupFailed {
	const how = !exit
		? ""
		: exit.signal
			? `: it was killed by ${exit.signal}`
			: exit.code !== null
				? `: it exited with code ${exit.code}`
				: "";
	const say = (w: Words) =>
		clean(`MCP server "${name}" closed the connection${how}.${stderrOf(tail)}\nRun ${w.reconnect(name)} to start it again.`);
	return new SetupFailed(name, say(words), { kind: "reconnect", server: name }, say);
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
export function requestError(sdk: Sdk, error: unknown, at: RequestFailure, clean: (text: string) => string, words: Words): Error {
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
		const say = (w: Words) => clean(`${what} failed: the connection closed (${errorText(error)}). Run ${w.reconnect(name)}.`);
		return new CallFailed(name, say(words), "closed", { kind: "reconnect", server: name }, say);
	}
	const missingCapability = error instanceof ProtocolError && error.code === ProtocolErrorCode.MissingRequiredClientCapability;
	if (code === Code.CapabilityNotSupported || code === Code.UnsupportedResultType || missingCapability) {
		const text = `${what} asked for interactive input (elicitation, sampling or roots), which pi-mcp does not support: ${errorText(error)}`;
		return new CallFailed(name, clean(text), "refused");
	}
	return new CallFailed(name, clean(`${what} failed: ${errorText(error)}`), "error");
}

/** A server name the table does not hold, naming those it does. */
export function unknownServer(name: string, known: readonly string[]): CallFailed {
	const names = known.length > 0 ? known.map(escapeName).join(", ") : "none (add servers to mcp.json)";
	return new CallFailed(name, `unknown MCP server "${escapeName(name)}"; configured: ${names}`, "refused");
}

/** A tool the server does not list, naming (up to twelve of) those it does; to pass the sanitiser. */
export function noSuchTool(name: string, tool: string, listed: readonly string[]): string {
	const names = listed.map(escapeName);
	const list = names.length > 12 ? `${names.slice(0, 12).join(", ")}, …` : names.join(", ");
	return `MCP server "${name}" has no tool "${escapeName(tool)}"; available: ${list || "none"}`;
}

export const cancelledRequest = (name: string): CallFailed =>
	new CallFailed(name, `the request to MCP server "${name}" was cancelled`, "cancelled");
