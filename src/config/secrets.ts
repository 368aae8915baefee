/**
 * Which configured values are secrets (`configuredSecrets`, the entry's `secretValues`): their exact
 * values are replaced wherever server or model text is shown. The values of `${VAR}`s in `env` and
 * `headers` and of variables named as credentials; literal `env` and `headers` values named as
 * credentials or shaped like tokens; URL query values and userinfo, and argument values named as
 * credentials (`--password x`, `--api-key=x`, `GITHUB_TOKEN=x`), which a failing server may echo.
 * Not secrets: the user's own environment (`${HOME}`, `${USER}`, `${PWD}`, `${TMPDIR}`, `${XDG_…}`
 * and the like), whose values are paths and names the user must be able to read. Stored
 * `${secret:…}` values and tokens join at connect time (`auth/`).
 */
import type { VariableUse } from "./values.ts";

/** Parts of a name that make its value a credential (`--author` has none; `--auth-token` has two). */
const SECRET_PARTS = new Set([
	"token",
	"tokens",
	"secret",
	"secrets",
	"password",
	"passwords",
	"passwd",
	"key",
	"keys",
	"apikey",
	"auth",
	"credential",
	"credentials",
]);

/** Values shorter than this are secrets only under a secret name: "1", "true" or "json" stay readable. */
const MIN_UNNAMED = 8;

/** The parts of a name: split on `-`, `_`, `.` and camelCase boundaries, lower-cased. */
export function nameParts(name: string): readonly string[] {
	return name
		.replace(/([a-z0-9])([A-Z])/g, "$1 $2")
		.split(/[\s._-]+/)
		.filter((part) => part !== "")
		.map((part) => part.toLowerCase());
}

/** Cheap first test: a name without any of these never has a secret part. */
const MAYBE_SECRET = /token|secret|passw|key|auth|credential/i;

/** Whether a flag, variable or parameter name says its value is a credential. */
export function isSecretName(name: string): boolean {
	return MAYBE_SECRET.test(name) && nameParts(name).some((part) => SECRET_PARTS.has(part));
}

/**
 * Secrets in a URL: the password (the user name too when it stands alone, as in
 * `https://TOKEN@host`), every query value under a secret name, other query values of 8+
 * characters, and path segments that look like tokens (`isTokenSegment`: a webhook's secret).
 */
export function urlSecrets(text: string): readonly string[] {
	// Only a URL with userinfo, a query or a long path segment holds any; most arguments are neither.
	if (!/^[A-Za-z][\w+.-]*:\/\/(?:[^\s]*[@?]|[^\s/]*\/[^\s]*[^\s/]{16})/.test(text)) return [];
	const url = URL.canParse(text) ? new URL(text) : undefined;
	if (!url) return [];
	const user = [url.password, url.password === "" ? url.username : ""].map(decode);
	const query = [...url.searchParams].flatMap(([name, value]) =>
		isSecretName(name) || value.length >= MIN_UNNAMED ? [value, encodeURIComponent(value)] : [],
	);
	const path = url.pathname.split("/").flatMap((segment) => (isTokenSegment(decode(segment)) ? [segment, decode(segment)] : []));
	return [...new Set([...user, ...query, ...path])].filter((value) => value !== "");
}

/**
 * Whether a URL path segment looks like a token rather than a word or an id: 16+ characters of the
 * kinds tokens are made of, mixing at least two of lower case, upper case and digits, and varied
 * (3.5+ bits of entropy a character): `B01234ABCDEF/xYz9…` yes, `modelcontextprotocol` or
 * `2025-03-26` no. A false positive only hides a segment.
 */
export function isTokenSegment(segment: string): boolean {
	if (segment.length < 16 || !/^[\w.~+=-]+$/.test(segment)) return false;
	const kinds = [/[a-z]/, /[A-Z]/, /[0-9]/].filter((kind) => kind.test(segment)).length;
	if (kinds < 2) return false;
	const counts = new Map<string, number>();
	for (const char of segment) counts.set(char, (counts.get(char) ?? 0) + 1);
	const bits = [...counts.values()].reduce((sum, count) => {
		const p = count / segment.length;
		return sum - p * Math.log2(p);
	}, 0);
	return bits >= 3.5;
}

/** A URL part percent-decoded, or as written when it is not valid percent-encoding. */
export function decode(text: string): string {
	try {
		return decodeURIComponent(text);
	} catch {
		return text;
	}
}

/** A secret found in a command's arguments: which argument holds it, and the flag or key that named it. */
export type ArgumentSecret = Readonly<{ index: number; value: string; name?: string }>;

/**
 * Secrets in a command's arguments: the value after a flag whose name is a credential's
 * (`--password hunter2`, `--token=x`), a `KEY=value` whose key is one (`API_KEY=x`), and what
 * `urlSecrets` finds in any argument or value that is a URL. One cheap test per argument in the
 * usual case: an entry may hold thousands of arguments.
 */
export function secretArguments(args: readonly string[]): readonly ArgumentSecret[] {
	const found: ArgumentSecret[] = [];
	args.forEach((arg, index) => {
		// `--name=value` or `NAME=value` only when what precedes `=` is a name (not a URL's query).
		const equals = arg.indexOf("=");
		const assigned = equals !== -1 && /^-{0,2}[A-Za-z_][\w.-]*$/.test(arg.slice(0, equals));
		const name = (assigned ? arg.slice(0, equals) : arg).replace(/^--?/, "");
		const value = assigned ? arg.slice(equals + 1) : arg;
		if (MAYBE_SECRET.test(name) && isSecretName(name)) {
			const next = args[index + 1];
			if (assigned && value !== "") found.push({ index, value, name });
			else if (!assigned && arg.startsWith("-") && next !== undefined && next !== "")
				found.push({ index: index + 1, value: next, name });
		}
		if (value.includes("://")) for (const secret of urlSecrets(value)) found.push({ index, value: secret });
	});
	return found;
}

/** The values `secretArguments` finds (what the sanitiser redacts). */
export function argumentSecrets(args: readonly string[]): readonly string[] {
	return secretArguments(args).map((secret) => secret.value);
}

/** Variables of the user's own environment: paths, names and settings, never credentials. */
const USER_ENVIRONMENT = new Set([
	"HOME",
	"USER",
	"USERNAME",
	"LOGNAME",
	"PWD",
	"OLDPWD",
	"TMPDIR",
	"TMP",
	"TEMP",
	"SHELL",
	"PATH",
	"LANG",
	"LANGUAGE",
	"TERM",
	"HOSTNAME",
	"EDITOR",
	"VISUAL",
	"PAGER",
	"DISPLAY",
]);

/** Whether a variable is part of the user's environment rather than a credential (`XDG_…`, `LC_…`, `…_DIR` too). */
export function isUserEnvironment(variable: string): boolean {
	return USER_ENVIRONMENT.has(variable) || /^(?:XDG|LC)_|_(?:DIR|PATH)$/.test(variable);
}

/** An auth scheme word a header value may start with; the rest is the credential. */
const SCHEME = /^(?:bearer|basic|token)\s+/i;

/** The parts of an entry the rule reads: the raw `env`/`headers` (as written) and what they resolved to. */
export type SecretSources = Readonly<{
	uses: readonly VariableUse[];
	raw: Readonly<{ env: Readonly<Record<string, string>>; headers: Readonly<Record<string, string>> }>;
	env: Readonly<Record<string, string>>;
	args: readonly string[];
	url?: string;
}>;

/** The configured secrets of one entry: see the file comment. */
export function configuredSecrets(sources: SecretSources): readonly string[] {
	const fromVariables = sources.uses
		.filter(({ variable, value, field }) => {
			if (isUserEnvironment(variable)) return false;
			const named = isSecretName(variable);
			return (named || /^(?:env|headers)\./.test(field)) && (named || value.length >= MIN_UNNAMED);
		})
		.map(({ value }) => value);
	const literals = (["env", "headers"] as const).flatMap((field) =>
		Object.entries(sources.raw[field]).flatMap(([key, value]) => {
			if (value.includes("${")) return [];
			const credential = SCHEME.test(value) ? value.replace(SCHEME, "") : value;
			const secret = isSecretName(key) || /^(?:authorization|cookie)$/i.test(key) || isTokenSegment(credential);
			return secret ? [value, credential] : [];
		}),
	);
	return [
		...new Set([
			...fromVariables,
			...literals,
			...argumentSecrets(sources.args),
			...Object.values(sources.env).flatMap(urlSecrets),
			...(sources.url === undefined ? [] : urlSecrets(sources.url)),
		]),
	];
}
