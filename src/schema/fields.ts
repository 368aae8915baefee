/**
 * One field at a time: each check reads one field of an entry and returns its value, or fails with a
 * message naming the field (`parseEntry` in `schema.ts` turns the failure into an invalid entry). Shape
 * only: variables, paths and URLs are `config.ts`'s.
 */

import type { ConfirmSetting } from "./confirm.ts";
import { unknownKeys } from "./keys.ts";
import type { ToolFilter } from "./tool-filter.ts";

export type ProtocolMode = "auto" | "legacy" | "2026-07-28";

export const PROTOCOL_MODES: readonly ProtocolMode[] = ["auto", "legacy", "2026-07-28"];

export type Fields = Record<string, unknown>;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One hour: the longest per-request timeout a file may set. */
const MAX_TIMEOUT_MS = 3_600_000;

/** A plain object (not null, not an array). */
export function isObject(value: unknown): value is Fields {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The one parse of JSON text that may not be JSON (a file, a stored record, a lock): the value, or undefined
 * (`JSON.parse` never gives undefined). Beside `isObject`, in a module registration loads anyway.
 */
export function parseJson(text: string): unknown {
	try {
		return JSON.parse(text) as unknown;
	} catch {
		return undefined;
	}
}

/** A field of the wrong shape; `parseEntry` catches only this one. */
export class ShapeError extends Error {}

export function fail(message: string): never {
	throw new ShapeError(message);
}

export function checkKeys(raw: Fields, allowed: readonly string[], prefix = ""): void {
	const message = unknownKeys(raw, allowed, prefix);
	if (message !== undefined) fail(message);
}

export function optionalString(raw: Fields, key: string, label = key): string | undefined {
	const value = raw[key];
	if (value === undefined) return undefined;
	if (typeof value !== "string" || value.length === 0) fail(`field "${label}" must be a non-empty string`);
	return value;
}

export function stringArray(raw: Fields, key: string): readonly string[] {
	const value = raw[key];
	if (value === undefined) return [];
	if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) {
		fail(`field "${key}" must be an array of strings`);
	}
	return value;
}

export function stringMap(raw: Fields, key: string): Readonly<Record<string, string>> {
	const value = raw[key];
	if (value === undefined) return {};
	if (!isObject(value)) fail(`field "${key}" must be an object of strings`);
	const bad = Object.entries(value).find(([, item]) => typeof item !== "string");
	if (bad) fail(`field "${key}.${bad[0]}" must be a string`);
	return value as Record<string, string>;
}

/** A field naming an environment variable: a name, never the value itself. */
export function envName(raw: Fields, key: string, label = key): string | undefined {
	const value = optionalString(raw, key, label);
	if (value !== undefined && !ENV_NAME.test(value)) {
		fail(`field "${label}" must name an environment variable (letters, digits, _), not hold a value`);
	}
	return value;
}

/** A flag that is on unless set to false: `earlyStart`, `pin`. */
export function onUnlessFalse(raw: Fields, key: "earlyStart" | "pin"): boolean {
	if (raw[key] !== undefined && typeof raw[key] !== "boolean") fail(`field "${key}" must be true or false`);
	return raw[key] !== false;
}

/** `enabled` or Pi's `disabled`, which must agree when both are set. */
export function enabledFlag(raw: Fields): boolean {
	const { enabled, disabled } = raw;
	if (enabled !== undefined && typeof enabled !== "boolean") fail('field "enabled" must be true or false');
	if (disabled !== undefined && typeof disabled !== "boolean") fail('field "disabled" must be true or false');
	if (enabled !== undefined && disabled !== undefined && enabled === disabled) {
		fail('fields "enabled" and "disabled" contradict each other');
	}
	return enabled ?? (disabled === undefined ? true : !disabled);
}

/** `timeout` (seconds, as Pi writes it) or `requestTimeoutMs`, in milliseconds. */
export function requestTimeout(raw: Fields): number | undefined {
	const { timeout, requestTimeoutMs } = raw;
	if (timeout !== undefined && requestTimeoutMs !== undefined) {
		fail('set either "timeout" (seconds) or "requestTimeoutMs", not both');
	}
	if (timeout !== undefined) {
		if (typeof timeout !== "number" || !(timeout >= 0.001) || timeout * 1000 > MAX_TIMEOUT_MS) {
			fail('field "timeout" must be a number of seconds between 0.001 and 3600');
		}
		return Math.round(timeout * 1000);
	}
	if (requestTimeoutMs !== undefined) {
		if (typeof requestTimeoutMs !== "number" || !Number.isInteger(requestTimeoutMs) || requestTimeoutMs <= 0) {
			fail('field "requestTimeoutMs" must be a positive integer');
		}
		if (requestTimeoutMs > MAX_TIMEOUT_MS) fail('field "requestTimeoutMs" must be at most 3600000 (one hour)');
		return requestTimeoutMs;
	}
	return undefined;
}

/** Tool-name globs (`*`, `?`): `includeTools`, `excludeTools`, a `confirm` list. */
const isPatternList = (value: unknown): value is readonly string[] =>
	Array.isArray(value) && value.every((item) => typeof item === "string" && item !== "");

/** `includeTools` / `excludeTools` (`tool-filter.ts`), present only when given. */
export function toolFilter(raw: Fields): ToolFilter {
	const given = (["includeTools", "excludeTools"] as const).filter((key) => raw[key] !== undefined);
	const bad = given.find((key) => !isPatternList(raw[key]));
	if (bad) fail(`field "${bad}" must be an array of non-empty strings (tool names; * and ? match any characters)`);
	return Object.fromEntries(given.map((key) => [key, raw[key]]));
}

export function protocolMode(raw: Fields): ProtocolMode {
	const value = raw.protocolVersion;
	if (value === undefined) return "auto";
	if (typeof value !== "string" || !PROTOCOL_MODES.includes(value as ProtocolMode)) {
		fail(`field "protocolVersion" must be one of ${PROTOCOL_MODES.map((mode) => `"${mode}"`).join(", ")}`);
	}
	return value as ProtocolMode;
}

/** `confirm` (`confirm.ts` says what each value asks for; only its type is imported, so start-up stays small). */
export function confirmSetting(raw: Fields): ConfirmSetting {
	const value = raw.confirm ?? "none";
	if (value === "none" || value === "writes" || value === "destructive" || value === "all") return value;
	if (isPatternList(value)) return value;
	return fail(
		'field "confirm" must be "none", "writes", "destructive", "all" or a list of tool name patterns (non-empty strings)',
	);
}
