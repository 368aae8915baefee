/**
 * The command line: `pi-mcp [options] <command> [options] <arguments>`. Options come before a
 * command's arguments: once an argument is read, what follows is an argument, so a value a script
 * passes (a tool's JSON arguments, a query) can never become an option such as `--approve`. The
 * commands that edit files take their options anywhere up to `--` (`add <name> --url <url>`). `--`
 * ends the options of every command: what follows is arguments as written (`search -- --approve`
 * searches for that word), and for `add` the server's command and its arguments.
 */

export type Scope = "user" | "project";

export type Flags = Readonly<{
	json: boolean;
	approve: boolean;
	help: boolean;
	version: boolean;
	force: boolean;
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
}>;

export type Parsed = Readonly<{ command?: string; args: readonly string[]; flags: Flags; rest?: readonly string[] }>;

/** A usage error: exit 2, with the command's help. */
export class UsageError extends Error {
	constructor(
		message: string,
		readonly command?: string,
	) {
		super(message);
	}
}

type Spec = Readonly<{ key: keyof Flags; value?: "string" | "list" | "seconds" | "scope"; short?: string }>;

const OPTIONS: Readonly<Record<string, Spec>> = {
	json: { key: "json" },
	approve: { key: "approve" },
	help: { key: "help", short: "h" },
	version: { key: "version", short: "v" },
	force: { key: "force" },
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
	doctor: ["approve", "timeout"],
	trust: ["approve", "timeout", "yes", "reset"],
	add: ["scope", "force", "env", "header", "url", "auth", "bearer-env", "client-id", "issuer", "oauth-scope", "description"],
	"add-json": ["scope", "force"],
	remove: ["scope"],
	get: ["approve"],
	enable: ["scope"],
	disable: ["scope"],
	import: ["scope", "force"],
};

/** Commands whose options may follow their (name) arguments, up to `--`. */
const INTERLEAVED = new Set(["add", "add-json", "remove", "get", "enable", "disable", "import"]);

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

/** Reads one option at `argv[index]`; returns how many words it used. */
function readOption(argv: readonly string[], index: number, values: Values, command: string | undefined): number {
	const word = argv[index] ?? "";
	const long = /^--([^=]+)(?:=(.*))?$/s.exec(word);
	const name = long ? long[1] : short.get(word.slice(1));
	const spec = name === undefined ? undefined : OPTIONS[name];
	// `--name=value` is shown without its value: a mistyped `--token=…` is a secret.
	const shown = long?.[2] !== undefined ? `--${long[1]}=…` : word;
	if (!name || !spec) throw new UsageError(`unknown option '${shown}'`, command);
	const global = ["json", "help", "version"].includes(name);
	const allowed = command === undefined ? ["approve", "timeout"] : (ALLOWED[command] ?? []);
	if (!global && !allowed.includes(name)) {
		throw new UsageError(`option --${name} does not apply to ${command ? `pi-mcp ${command}` : "every command"}`, command);
	}
	const inline = long?.[2];
	if (spec.value === undefined || inline !== undefined) {
		setValue(values, name, spec, inline);
		return 1;
	}
	setValue(values, name, spec, argv[index + 1]);
	return 2;
}

/**
 * An option word after a command's first argument is refused rather than read as text (a query
 * word, a tool name): options go first. `call`'s JSON arguments (third word on) are never checked:
 * whatever they hold is data.
 */
function misplaced(command: string, position: number, word: string): void {
	if (command === "call" && position >= 2) return;
	const name = /^--?([^=]+)/.exec(word)?.[1];
	if (name === undefined || !(name in OPTIONS || short.has(name))) return;
	throw new UsageError(`options go before the arguments: pi-mcp ${command} ${word} …`, command);
}

const isOption = (word: string) => word.startsWith("-") && word !== "-" && word !== "--";

/** Where the parse is in argv: the word it reads, the command once named, and whether `--` ended the options. */
class Position {
	readonly #argv: readonly string[];
	#index = 0;
	#command: string | undefined;
	#ended = false;

	constructor(argv: readonly string[]) {
		this.#argv = argv;
	}

	get index(): number {
		return this.#index;
	}

	get word(): string | undefined {
		return this.#argv[this.#index];
	}

	get command(): string | undefined {
		return this.#command;
	}

	get ended(): boolean {
		return this.#ended;
	}

	/** Moves past `words` words. */
	skip(words: number): void {
		this.#index += words;
	}

	named(command: string): void {
		this.#command = command;
	}

	end(): void {
		this.#ended = true;
	}
}

/** Splits argv into the command, its arguments, the options, and (for `add`) what follows `--`. */
export function parseArgs(argv: readonly string[]): Parsed {
	const values: Values = {};
	const args: string[] = [];
	const at = new Position(argv);
	while (at.index < argv.length) {
		const word = at.word ?? "";
		const command = at.command;
		if (word === "--" && command === "add") return finish(values, command, args, argv.slice(at.index + 1));
		if (word === "--" && !at.ended) {
			at.end();
			at.skip(1);
			continue;
		}
		const optionsOpen = !at.ended && (command === undefined || INTERLEAVED.has(command) || args.length === 0);
		if (optionsOpen && isOption(word)) {
			at.skip(readOption(argv, at.index, values, command));
			continue;
		}
		if (command === undefined) at.named(word);
		else {
			if (!at.ended) misplaced(command, args.length, word);
			args.push(word);
		}
		at.skip(1);
	}
	return finish(values, at.command, args, undefined);
}

function finish(
	values: Values,
	command: string | undefined,
	args: readonly string[],
	rest: readonly string[] | undefined,
): Parsed {
	const flags: Flags = {
		json: values.json === true,
		approve: values.approve === true,
		help: values.help === true,
		version: values.version === true,
		force: values.force === true,
		env: (values.env as string[] | undefined) ?? [],
		header: (values.header as string[] | undefined) ?? [],
		...(Object.fromEntries(
			Object.entries(values).filter(([key]) => !["json", "approve", "help", "version", "force", "env", "header"].includes(key)),
		) as Partial<Flags>),
	};
	return { command, args, flags, rest };
}

/** Whether `--json` was asked for before parsing failed (so the parse error itself is JSON). */
export function wantsJson(argv: readonly string[]): boolean {
	const end = argv.indexOf("--");
	return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}
