/**
 * What edits show of an entry, and what they warn about before writing it. One rule set for every
 * command that prints an entry (add, get, import, remove; text and `--json`): the secrets the
 * runtime's redaction finds (`secrets.ts`: argument values named as credentials, URL userinfo,
 * query values and token-like path segments), every `env` and `headers` value that is not a
 * `${VAR}` reference, and every URL query value.
 */
import { isObject } from "../schema.ts";
import { decode, isTokenSegment, secretArguments, urlSecrets } from "./secrets.ts";
import { isReference } from "./values.ts";

/** A value shown in place of one that may hold a secret. */
export const MASK = "********";

const SECRET_PART =
	/^(token|secret|password|passwd|pass|pwd|key|apikey|auth|authorization|credential|credentials|cookie|session)$/i;

/** A URL with its userinfo, every query value and each token-like path segment masked; as written when none. */
function maskedUrl(text: string): string {
	const url = URL.canParse(text) ? new URL(text) : undefined;
	if (!url) return text;
	const segments = url.pathname.split("/");
	const path = segments.map((segment) => (isTokenSegment(decode(segment)) ? MASK : segment));
	const secret = url.username !== "" || url.search !== "" || path.some((segment, i) => segment !== segments[i]);
	if (!secret) return text;
	for (const key of [...url.searchParams.keys()]) url.searchParams.set(key, MASK);
	if (url.password !== "") url.password = MASK;
	else if (url.username !== "") url.username = MASK;
	url.pathname = path.join("/");
	return url.href;
}

/** Arguments with each secret `secretArguments` finds masked (the flag before it stays readable). */
function maskedArgs(args: readonly unknown[]): readonly unknown[] {
	const strings = args.map((arg) => (typeof arg === "string" ? arg : ""));
	const masked = [...args];
	for (const { index, value } of secretArguments(strings)) {
		const arg = masked[index];
		if (typeof arg !== "string" || isReference(value)) continue;
		masked[index] = arg === value ? MASK : arg.split(value).join(MASK);
	}
	return masked;
}

/** The entry as edits show it: see the file comment. */
export function maskedEntry(entry: unknown): unknown {
	if (!isObject(entry)) return entry;
	const mask = (values: unknown) =>
		isObject(values)
			? Object.fromEntries(
					Object.entries(values).map(([key, value]) => [key, typeof value === "string" && isReference(value) ? value : MASK]),
				)
			: values;
	return {
		...entry,
		...(Array.isArray(entry.args) ? { args: maskedArgs(entry.args) } : {}),
		...(entry.env !== undefined ? { env: mask(entry.env) } : {}),
		...(entry.headers !== undefined ? { headers: mask(entry.headers) } : {}),
		...(typeof entry.url === "string" ? { url: maskedUrl(entry.url) } : {}),
	};
}

/** What an entry runs, on one line and masked: its command and arguments, or its URL. */
export function runsText(entry: unknown): string {
	const masked = maskedEntry(entry);
	if (!isObject(masked)) return "nothing (not an object)";
	if (typeof masked.url === "string") return masked.url;
	const args = Array.isArray(masked.args) ? masked.args.map(String) : [];
	return [String(masked.command ?? "(no command)"), ...args]
		.map((word) => (/[\s"']/.test(word) ? JSON.stringify(word) : word))
		.join(" ");
}

const variableOf = (name: string) => name.toUpperCase().replace(/[^A-Z0-9_]/g, "_") || "SECRET";

/**
 * Warnings for literal values that look like secrets, given before they are written: an `env` or
 * `headers` value under a secret-looking name (or an `Authorization` header), an argument
 * `secretArguments` finds, a URL's userinfo, query or token-like path segment; each not a `${VAR}`
 * reference. A project file is named as such: it is usually shared with the repository.
 */
export function secretHints(entry: unknown, scope?: "user" | "project"): readonly string[] {
	if (!isObject(entry)) return [];
	const where = scope === "project" ? " (in the project file, which anyone with the repository can read)" : "";
	const named = (["env", "headers"] as const).flatMap((field) => {
		const values = entry[field];
		if (!isObject(values)) return [];
		return Object.entries(values).flatMap(([key, value]) => {
			if (typeof value !== "string" || value.length === 0 || isReference(value)) return [];
			if (!key.split(/[-_]/).some((part) => SECRET_PART.test(part))) return [];
			const variable = variableOf(key);
			return [
				`${field}.${key} holds a literal value that looks like a secret${where}: store "\${${variable}}" instead and set ${variable} in the environment Pi runs in`,
			];
		});
	});
	const args = Array.isArray(entry.args) ? entry.args.map((arg) => (typeof arg === "string" ? arg : "")) : [];
	const inArgs = secretArguments(args)
		.filter((secret) => !isReference(secret.value))
		.map((secret) => {
			const variable = variableOf(secret.name ?? "SECRET");
			return `args[${secret.index}] holds a literal value that looks like a secret${where}: write "\${${variable}}" in its place and set ${variable} in the environment Pi runs in`;
		});
	const url = typeof entry.url === "string" ? urlSecrets(entry.url).filter((value) => !isReference(value)) : [];
	const inUrl =
		url.length > 0
			? [
					`url holds a literal value that looks like a secret (a credential, a query value or a token in its path)${where}: write "\${VAR}" in its place and set VAR in the environment Pi runs in`,
				]
			: [];
	return [...named, ...new Set(inArgs), ...inUrl];
}

/** A literal `env` or `headers` value that looks like a secret: what `pi-mcp secret move` takes into the keyring. */
export type SecretLiteral = Readonly<{ field: "env" | "headers"; key: string; name: string; scheme: string; value: string }>;

/**
 * The values `secretHints` warns about in `env` and `headers` (a literal under a secret-looking name),
 * each with a secret name made from its key (unique within the entry) and the auth scheme word it
 * starts with, which stays in the file (`Bearer ${secret:AUTHORIZATION}`).
 */
export function secretLiterals(entry: unknown): readonly SecretLiteral[] {
	if (!isObject(entry)) return [];
	const taken = new Set<string>();
	return (["env", "headers"] as const).flatMap((field) => {
		const values = entry[field];
		if (!isObject(values)) return [];
		return Object.entries(values).flatMap(([key, written]): SecretLiteral[] => {
			if (typeof written !== "string" || written.length === 0 || written.includes("${")) return [];
			if (!key.split(/[-_]/).some((part) => SECRET_PART.test(part))) return [];
			const scheme = /^(?:bearer|basic|token)\s+/i.exec(written)?.[0] ?? "";
			const value = written.slice(scheme.length);
			if (value === "") return [];
			const base = /^[0-9]/.test(variableOf(key)) ? `S_${variableOf(key)}` : variableOf(key);
			const candidate = (n: number) => (n === 1 ? base.slice(0, 60) : `${base.slice(0, 60)}_${n}`);
			const free = (n: number): string => (taken.has(candidate(n)) ? free(n + 1) : candidate(n));
			const name = free(1);
			taken.add(name);
			return [{ field, key, name, scheme, value }];
		});
	});
}
