/**
 * Which configured values are secrets besides `env` and `headers`: the ones a failing server may
 * echo back in its URL or its argv. URL query values and userinfo, and argument values named as
 * credentials (`--password x`, `--api-key=x`, `GITHUB_TOKEN=x`). They join the entry's
 * `secretValues`, which the sanitiser redacts wherever server text is shown.
 */

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
 * `https://TOKEN@host`), every query value under a secret name, and other query values of 8+
 * characters.
 */
export function urlSecrets(text: string): readonly string[] {
	// Only a URL with userinfo or a query holds any; most arguments are neither.
	if (!/^[A-Za-z][\w+.-]*:\/\/[^\s]*[@?]/.test(text)) return [];
	const url = URL.canParse(text) ? new URL(text) : undefined;
	if (!url) return [];
	const user = [url.password, url.password === "" ? url.username : ""].map(decode);
	const query = [...url.searchParams].flatMap(([name, value]) =>
		isSecretName(name) || value.length >= MIN_UNNAMED ? [value, encodeURIComponent(value)] : [],
	);
	return [...user, ...query].filter((value) => value !== "");
}

function decode(text: string): string {
	try {
		return decodeURIComponent(text);
	} catch {
		return text;
	}
}

/**
 * Secrets in a command's arguments: the value after a flag whose name is a credential's
 * (`--password hunter2`, `--token=x`), a `KEY=value` whose key is one (`API_KEY=x`), and what
 * `urlSecrets` finds in any argument or value that is a URL. One cheap test per argument in the
 * usual case: an entry may hold thousands of arguments.
 */
export function argumentSecrets(args: readonly string[]): readonly string[] {
	const found: string[] = [];
	args.forEach((arg, index) => {
		// `--name=value` or `NAME=value` only when what precedes `=` is a name (not a URL's query).
		const equals = arg.indexOf("=");
		const assigned = equals !== -1 && /^-{0,2}[A-Za-z_][\w.-]*$/.test(arg.slice(0, equals));
		const name = (assigned ? arg.slice(0, equals) : arg).replace(/^--?/, "");
		const value = assigned ? arg.slice(equals + 1) : arg;
		if (MAYBE_SECRET.test(name) && isSecretName(name)) {
			const next = args[index + 1];
			if (assigned && value !== "") found.push(value);
			else if (!assigned && arg.startsWith("-") && next !== undefined && next !== "") found.push(next);
		}
		if (value.includes("://")) found.push(...urlSecrets(value));
	});
	return found;
}
