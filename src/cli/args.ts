/**
 * The command line: `pi-mcp [options] <command> [options] <arguments> [options]`. Options go anywhere
 * up to `--` (`tools notes --json`), as in `claude mcp` and `codex mcp`; `--` ends them: what follows
 * is arguments as written (`search -- --approve` searches for that word), and for `add` the server's
 * command and its arguments. A script passing a value that may start with `-` (a query) puts `--`
 * before it; a tool's JSON arguments never start with `-`.
 */

import { escapeName } from "../output/text.ts";

export type Scope = "user" | "project";

export type Flags = Readonly<{
	json: boolean;
	approve: boolean;
	help: boolean;
	version: boolean;
	force: boolean;
	/** `doctor`: each server's whole instructions. */
	verbose?: boolean;
	/** `get`: also connect the server and show its instructions. */
	connect?: boolean;
	/** `trust`: approve without asking; forget the server's pins. */
	yes?: boolean;
	reset?: boolean;
	/** Seconds; bounds connecting and each request for this run. */
	timeout?: number;
	out?: string;
	scope?: Scope;
	env: readonly string[];
	header: readonly string[];
	url?: string;
	auth?: string;
	bearerEnv?: string;
	clientId?: string;
	issuer?: string;
	oauthScope?: string;
	description?: string;
	/** `import`: take literal secrets into the keyring (`pi-mcp secret move`). */
	moveSecrets?: boolean;
}>;

export type Parsed = Readonly<{ command?: string; args: readonly string[]; flags: Flags; rest?: readonly string[] }>;

/**
 * A usage error: exit 2. `message` is what the terminal shows, last; `help` (the command's) comes above it;
 * `bare` is the message for `--json`, without the leading "pi-mcp: " that `said` puts before it.
 */
export class UsageError extends Error {
	readonly bare: string;

	constructor(
		message: string,
		readonly command?: string,
		readonly help?: string,
		bare?: string,
	) {
		super(message);
		this.bare = bare ?? message;
	}

	/** "pi-mcp: <bare>" on the terminal, `bare` in JSON. */
	static said(bare: string, command?: string): UsageError {
		return new UsageError(`pi-mcp: ${bare}`, command, undefined, bare);
	}
}

type Spec = Readonly<{ key: keyof Flags; value?: "string" | "list" | "seconds" | "scope"; short?: string }>;

const OPTIONS: Readonly<Record<string, Spec>> = {
	json: { key: "json" },
	approve: { key: "approve" },
	help: { key: "help", short: "h" },
	version: { key: "version", short: "v" },
	force: { key: "force" },
	verbose: { key: "verbose" },
	connect: { key: "connect" },
	yes: { key: "yes", short: "y" },
	reset: { key: "reset" },
	timeout: { key: "timeout", value: "seconds" },
	out: { key: "out", value: "string" },
	scope: { key: "scope", value: "scope" },
	env: { key: "env", value: "list", short: "e" },
	header: { key: "header", value: "list", short: "H" },
	url: { key: "url", value: "string" },
	auth: { key: "auth", value: "string" },
	"bearer-env": { key: "bearerEnv", value: "string" },
	"client-id": { key: "clientId", value: "string" },
	issuer: { key: "issuer", value: "string" },
	"oauth-scope": { key: "oauthScope", value: "string" },
	description: { key: "description", value: "string" },
	"move-secrets": { key: "moveSecrets" },
};

/** Which options each command takes (every command takes json, help; approve where it reads servers). */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
	list: ["approve"],
	tools: ["approve", "timeout"],
	search: ["approve", "timeout"],
	describe: ["approve", "timeout"],
	call: ["approve", "timeout", "out"],
	prompt: ["approve", "timeout", "out"],
	read: ["approve", "timeout", "out"],
	login: ["approve", "timeout"],
	logout: ["approve"],
	doctor: ["approve", "timeout", "verbose"],
	trust: ["approve", "timeout", "yes", "reset"],
	add: ["scope", "force", "env", "header", "url", "auth", "bearer-env", "client-id", "issuer", "oauth-scope", "description"],
	"add-json": ["scope", "force"],
	remove: ["scope"],
	get: ["approve", "connect", "timeout"],
	enable: ["scope", "approve", "timeout", "force"],
	disable: ["scope", "approve", "timeout", "force"],
	import: ["scope", "force", "move-secrets"],
	secret: ["approve", "scope"],
};

export const COMMAND_NAMES: readonly string[] = Object.keys(ALLOWED);

const short = new Map(Object.entries(OPTIONS).flatMap(([name, spec]) => (spec.short ? [[spec.short, name] as const] : [])));

type Values = Record<string, unknown>;

function setValue(values: Values, name: string, spec: Spec, raw: string | undefined): void {
	if (spec.value === undefined) {
		if (raw !== undefined) throw new UsageError(`option --${name} takes no value`);
		values[spec.key] = true;
		return;
	}
	if (raw === undefined) throw new UsageError(`option --${name} needs a value`);
	if (spec.value === "list") values[spec.key] = [...((values[spec.key] as string[] | undefined) ?? []), raw];
	else if (spec.value === "seconds") {
		const seconds = Number(raw);
		if (!(seconds > 0 && seconds <= 3600))
			throw new UsageError(`option --${name} takes seconds between 0 and 3600, not "${raw}"`);
		values[spec.key] = seconds;
	} else if (spec.value === "scope") {
		if (raw !== "user" && raw !== "project") throw new UsageError(`option --${name} takes "user" or "project", not "${raw}"`);
		values[spec.key] = raw;
	} else values[spec.key] = raw;
}

const GLOBAL: readonly string[] = ["json", "help", "version"];

const isOption = (word: string) => word.startsWith("-") && word !== "-" && word !== "--";

/** Reads one option at `argv[index]`: its name, and how many words it used. */
function readOption(
	argv: readonly string[],
	index: number,
	values: Values,
	command: string | undefined,
	afterArguments: boolean,
): Readonly<{ name: string; words: number }> {
	const word = argv[index] ?? "";
	const long = /^--([^=]+)(?:=(.*))?$/s.exec(word);
	const name = long ? long[1] : short.get(word.slice(1));
	const spec = name === undefined ? undefined : OPTIONS[name];
	// `--name=value` is shown without its value: a mistyped `--token=…` is a secret.
	const shown = escapeName(long?.[2] !== undefined ? `--${long[1]}=…` : word);
	if (!name || !spec) {
		const hint = afterArguments ? " (an argument that starts with - goes after --)" : "";
		throw new UsageError(`unknown option '${shown}'${hint}`, command);
	}
	const inline = long?.[2];
	if (spec.value === undefined || inline !== undefined) {
		setValue(values, name, spec, inline);
		return { name, words: 1 };
	}
	setValue(values, name, spec, argv[index + 1]);
	return { name, words: 2 };
}

/** Splits argv into the command, its arguments, the options, and (for `add`) what follows `--`. */
export function parseArgs(argv: readonly string[]): Parsed {
	const values: Values = {};
	const args: string[] = [];
	const seen: string[] = [];
	let command: string | undefined;
	let ended = false;
	let index = 0;
	while (index < argv.length) {
		const word = argv[index] ?? "";
		if (word === "--" && !ended) {
			if (command === "add") return finish(values, seen, command, args, argv.slice(index + 1));
			ended = true;
			index += 1;
			continue;
		}
		if (!ended && isOption(word)) {
			const read = readOption(argv, index, values, command, args.length > 0);
			seen.push(read.name);
			index += read.words;
			continue;
		}
		if (command === undefined) command = word;
		else if (command === "add" && args.length === 1 && !ended) {
			// `add name npx -y pkg`: the server's command without `--`, whose options would be read as ours.
			throw new UsageError(
				`add: give one server name, then -- before the server's command: pi-mcp add ${escapeName(args[0] ?? "")} -- ${escapeName(word)} …`,
				"add",
			);
		} else args.push(word);
		index += 1;
	}
	return finish(values, seen, command, args, undefined);
}

/** Options that do not apply to the command are refused once the command is known (they may come before it). */
function checkApplies(seen: readonly string[], command: string | undefined): void {
	const allowed = command === undefined ? ["approve", "timeout"] : (ALLOWED[command] ?? []);
	const name = seen.find((each) => !GLOBAL.includes(each) && !allowed.includes(each));
	if (name === undefined || (command !== undefined && !(command in ALLOWED))) return;
	throw new UsageError(`option --${name} does not apply to ${command ? `pi-mcp ${command}` : "every command"}`, command);
}

function finish(
	values: Values,
	seen: readonly string[],
	command: string | undefined,
	args: readonly string[],
	rest: readonly string[] | undefined,
): Parsed {
	checkApplies(seen, command);
	const flags: Flags = {
		json: values.json === true,
		approve: values.approve === true,
		help: values.help === true,
		version: values.version === true,
		force: values.force === true,
		verbose: values.verbose === true,
		connect: values.connect === true,
		env: (values.env as string[] | undefined) ?? [],
		header: (values.header as string[] | undefined) ?? [],
		...(Object.fromEntries(
			Object.entries(values).filter(
				([key]) => !["json", "approve", "help", "version", "force", "verbose", "connect", "env", "header"].includes(key),
			),
		) as Partial<Flags>),
	};
	return { command, args, flags, rest };
}

/** Whether `--json` was asked for before parsing failed (so the parse error itself is JSON). */
export function wantsJson(argv: readonly string[]): boolean {
	const end = argv.indexOf("--");
	return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}
