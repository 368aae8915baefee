/**
 * `${secret:NAME}`: a value kept in the OS keyring for one server (`auth/stored.ts`), written in an
 * entry's `env` or `headers` values, whole or in part (`"Bearer ${secret:API_KEY}"`). The reference
 * stays in the resolved entry as written; the value is put in its place only when the server
 * connects, and never elsewhere (a command, an argument or a URL would show it in `ps` or a log).
 */
import { ResolveError } from "./values.ts";

const REFERENCE = /\$\{secret:([^}]*)\}/g;

/** A secret's name: like an environment variable's. */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Refuses a reference where none may be (`allowed` false), and a malformed one anywhere. */
export function checkSecretRefs(text: string, field: string, allowed: boolean): void {
	if (!text.includes("${secret:")) return;
	if (!allowed) {
		throw new ResolveError(
			`field "${field}" uses \${secret:…}: stored secrets are given only in "env" and "headers" values (where no command line or log shows them)`,
		);
	}
	for (const [, name] of text.matchAll(REFERENCE)) {
		if (!SECRET_NAME.test(name ?? "")) {
			throw new ResolveError(
				`field "${field}" has \${secret:${(name ?? "").slice(0, 40)}}: a secret's name uses letters, digits and _ (not starting with a digit)`,
			);
		}
	}
}

/** The secret names a resolved entry's `env` and `headers` reference, each once, in order. */
export function secretNames(
	config: Readonly<{ env?: Readonly<Record<string, string>>; headers?: Readonly<Record<string, string>> }>,
): readonly string[] {
	const values = [...Object.values(config.env ?? {}), ...Object.values(config.headers ?? {})];
	const names = values.flatMap((value) =>
		value.includes("${secret:") ? [...value.matchAll(REFERENCE)].map((m) => m[1] ?? "") : [],
	);
	return [...new Set(names)];
}

/** `text` with each reference replaced by its value (every name must be in `values`). */
export function fillSecretRefs(text: string, values: ReadonlyMap<string, string>): string {
	return text.includes("${secret:") ? text.replace(REFERENCE, (match, name: string) => values.get(name) ?? match) : text;
}

/** Whether a value is made only of references (`${VAR}`, `${secret:NAME}`) and an auth scheme word. */
export function isReference(value: string): boolean {
	const literal = value.replace(/\$\{(?:secret:)?[A-Za-z_][A-Za-z0-9_]*\}/g, "").trim();
	return value.includes("${") && (literal === "" || /^(bearer|basic|token)$/i.test(literal));
}
