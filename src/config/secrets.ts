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

/** Whether a flag, variable or parameter name says its value is a credential. */
export function isSecretName(name: string): boolean {
	return nameParts(name).some((part) => SECRET_PARTS.has(part));
}

/**
 * Secrets in a URL: the password (the user name too when it stands alone, as in
 * `https://TOKEN@host`), every query value under a secret name, and other query values of 8+
 * characters.
 */
export function urlSecrets(text: string): readonly string[] {
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

/** `--name value`, `--name=value`, `-n value`'s name without dashes; undefined for a plain value. */
function flagName(arg: string): string | undefined {
	return /^--?[A-Za-z]/.test(arg) ? arg.replace(/^--?/, "").split("=")[0] : undefined;
}

/**
 * Secrets in a command's arguments: the value after a flag whose name is a credential's
 * (`--password hunter2`, `--token=x`), a `KEY=value` whose key is one (`API_KEY=x`), and what
 * `urlSecrets` finds in any argument or value that is a URL.
 */
export function argumentSecrets(args: readonly string[]): readonly string[] {
	return args.flatMap((arg, index) => {
		const flag = flagName(arg);
		const assigned = /^-*([A-Za-z_][\w.-]*)=([\s\S]*)$/.exec(arg);
		const named: string[] = [];
		if (assigned?.[1] !== undefined && assigned[2] && isSecretName(assigned[1])) named.push(assigned[2]);
		else if (flag !== undefined && !arg.includes("=") && isSecretName(flag)) {
			const next = args[index + 1];
			if (next !== undefined && next !== "") named.push(next);
		}
		const value = assigned?.[2] ?? arg;
		return [...named, ...urlSecrets(value)];
	});
}
