/**
 * `pi-mcp secret set|list|remove|move`: the `${secret:NAME}` values of a server, kept in the OS
 * keyring for its identity (`auth/stored.ts`). A value is read from a pipe or typed on a terminal
 * without echo, and never printed. `move` takes the literal secret-looking `env` and `headers`
 * values of an entry (the rule `secretHints` warns with) into the keyring, then rewrites the entry
 * with references through the safe config editor; `import --move-secrets` does the same per entry.
 */
import { editEntry, modified, validate } from "../config/edit.ts";
import { serverIdentity } from "../config/identity.ts";
import { secretLiterals } from "../config/mask.ts";
import { SECRET_NAME, secretNames } from "../config/values.ts";
import { loadConfig } from "../config.ts";
import { escapeName } from "../output/text.ts";
import type { ServerConfig } from "../schema.ts";
import { type Flags, UsageError } from "./args.ts";
import { agentDirOf, type CliIo, EXIT } from "./context.ts";
import { placeOf, RELOAD_NOTE, waitingOf } from "./edit.ts";
import { HELP } from "./help.ts";
import { jsonLine } from "./json.ts";

/** The longest value `secret set` reads (a private key fits; a file by mistake does not). */
const MAX_VALUE_BYTES = 64 * 1024;

const stored = () => import("../auth/stored.ts");
const keyringStore = async () => (await import("../auth/keyring.ts")).keyringStore();

function usage(message: string): UsageError {
	return new UsageError(`pi-mcp secret: ${message}`, "secret", HELP.secret);
}

/** The resolved entry of `server` as Pi would run it here (the project file only with --approve). */
async function configOf(io: CliIo, flags: Flags, server: string | undefined, trusted = flags.approve): Promise<ServerConfig> {
	if (!server) throw usage("name a server");
	const snapshot = await loadConfig({ agentDir: agentDirOf(io.env), cwd: io.cwd, trusted, env: io.env });
	const entry = snapshot.servers.find((each) => each.name === server);
	if (!entry) {
		const hint = flags.approve ? "" : " (the project file is read only with --approve)";
		throw UsageError.said(`unknown MCP server "${escapeName(server)}"${hint}`, "secret");
	}
	if (!entry.config) throw UsageError.said(entry.error ?? `server "${escapeName(server)}" has no usable configuration`);
	return entry.config;
}

function checkName(name: string | undefined): string {
	if (!name) throw usage("name the secret (letters, digits and _)");
	if (!SECRET_NAME.test(name))
		throw usage(`"${escapeName(name)}" is not a secret name: use letters, digits and _ (not starting with a digit)`);
	return name;
}

type Tty = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (on: boolean) => void };

/** A value typed on a terminal, not echoed; Ctrl+C gives up. */
function typed(io: CliIo, stdin: Tty, name: string): Promise<string> {
	io.err(`Value of ${name} (not shown): `);
	stdin.setRawMode?.(true);
	stdin.resume();
	return new Promise((resolve, reject) => {
		const typed = { value: "" };
		const done = (error?: Error) => {
			stdin.setRawMode?.(false);
			stdin.pause();
			stdin.off("data", onData);
			io.err("\n");
			if (error) reject(error);
			else resolve(typed.value);
		};
		const onData = (chunk: Buffer | string) => {
			for (const char of String(chunk)) {
				if (char === "\r" || char === "\n" || char === "\u0004") return done();
				if (char === "\u0003") return done(new UsageError("pi-mcp secret set: cancelled; nothing was stored", "secret"));
				typed.value = char === "\u007f" || char === "\b" ? typed.value.slice(0, -1) : typed.value + char;
			}
		};
		stdin.on("data", onData);
	});
}

/** Everything piped in, without its final line end. */
async function piped(stdin: NodeJS.ReadableStream): Promise<string> {
	const chunks: Buffer[] = [];
	for await (const chunk of stdin) {
		const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
		if (chunks.reduce((sum, each) => sum + each.length, buffer.length) > MAX_VALUE_BYTES)
			throw usage(`the value is longer than ${MAX_VALUE_BYTES / 1024} KiB; nothing was stored`);
		chunks.push(buffer);
	}
	return Buffer.concat(chunks)
		.toString("utf8")
		.replace(/\r?\n$/, "");
}

async function set(io: CliIo, flags: Flags, args: readonly string[]): Promise<number> {
	const config = await configOf(io, flags, args[0]);
	const name = checkName(args[1]);
	if (args.length > 2)
		throw usage("the value is read from stdin or typed, never given as an argument (it would stay in your shell history)");
	const stdin = io.stdin as Tty;
	const value = stdin.isTTY ? await typed(io, stdin, name) : await piped(stdin);
	if (value === "" || value.includes("\u0000")) throw usage("no value was given (or it holds a NUL byte); nothing was stored");
	await (await stored()).storeSecret(await keyringStore(), config, name, value);
	const unused = !secretNames(config).includes(name);
	const note = unused ? ` The entry does not use it yet: write "\${secret:${name}}" in an env or headers value.` : "";
	if (flags.json) io.out(jsonLine({ server: config.name, secret: name, stored: true, identity: serverIdentity(config).label }));
	else
		io.out(`Stored secret ${name} for MCP server "${config.name}" (${serverIdentity(config).label}) in the OS keyring.${note}\n`);
	return EXIT.ok;
}

async function list(io: CliIo, flags: Flags, args: readonly string[]): Promise<number> {
	const config = await configOf(io, flags, args[0]);
	if (args.length > 1) throw usage("list takes one server");
	const { secretStates, setCommand } = await stored();
	const states = await secretStates(await keyringStore(), config);
	if (flags.json) {
		const secrets = states.map((each) => ({ name: each.name, stored: each.state === "stored", state: each.state }));
		io.out(jsonLine({ server: config.name, secrets }));
		return EXIT.ok;
	}
	if (states.length === 0) {
		io.out(`MCP server "${config.name}" references no \${secret:…} in its env or headers.\n`);
		return EXIT.ok;
	}
	const lines = states.map(({ name, state }) => {
		if (state === "stored") return `  ${name}: stored`;
		const other = state === "other" ? "stored for another command only; " : "";
		return `  ${name}: not stored (${other}run ${setCommand(config, name)})`;
	});
	io.out(`Secrets of MCP server "${config.name}" (${serverIdentity(config).label}):\n${lines.join("\n")}\n`);
	return EXIT.ok;
}

async function remove(io: CliIo, flags: Flags, args: readonly string[]): Promise<number> {
	const config = await configOf(io, flags, args[0]);
	const name = checkName(args[1]);
	const removed = await (await stored()).removeSecret(await keyringStore(), config, name);
	if (flags.json) io.out(jsonLine({ server: config.name, secret: name, removed }));
	else
		io.out(
			removed
				? `Removed secret ${name} of MCP server "${config.name}".\n`
				: `No secret ${name} was stored for MCP server "${config.name}".\n`,
		);
	return EXIT.ok;
}

/** One value moved: where it was and what the entry holds now. */
export type Moved = Readonly<{ field: string; secret: string; now: string }>;

/**
 * Takes the entry's literal secret-looking `env` and `headers` values into the keyring, then writes
 * references in their place (alone on the file, checked as Pi loads it). The keyring comes first:
 * when it fails, the file is not touched.
 */
export async function moveSecrets(io: CliIo, flags: Flags, server: string, signal: AbortSignal): Promise<readonly Moved[]> {
	const place = placeOf(io);
	return editEntry(place, server, flags.scope, undefined, waitingOf(io, signal), async (file) => {
		const literals = secretLiterals(file.servers[server]);
		if (literals.length === 0) return { result: [] };
		const config = await configOf(io, flags, server, file.scope === "project");
		if (config.source.kind !== file.scope) {
			throw UsageError.said(`server "${escapeName(server)}" of ${file.path} is not the one Pi runs here; nothing was moved`);
		}
		const { storeSecret } = await stored();
		const store = await keyringStore();
		for (const literal of literals) await storeSecret(store, config, literal.name, literal.value);
		const text = await literals.reduce(
			async (before, literal) =>
				modified(
					{ ...file, text: await before },
					[server, literal.field, literal.key],
					`${literal.scheme}\${secret:${literal.name}}`,
				),
			Promise.resolve(file.text ?? ""),
		);
		await validate(place, file, text, server);
		const moved = literals.map((literal) => ({
			field: `${literal.field}.${literal.key}`,
			secret: literal.name,
			now: `${literal.scheme}\${secret:${literal.name}}`,
		}));
		return { text, result: moved };
	});
}

/** What `move` and `import --move-secrets` print about one entry. */
export function movedText(server: string, moved: readonly Moved[]): string {
	if (moved.length === 0)
		return `MCP server "${escapeName(server)}" has no literal secret in its env or headers; nothing was moved.`;
	const each = moved.map((one) => `  ${escapeName(one.field)} → "${escapeName(one.now)}"`);
	return `Moved ${moved.length} secret${moved.length === 1 ? "" : "s"} of MCP server "${escapeName(server)}" into the OS keyring:\n${each.join("\n")}`;
}

async function move(io: CliIo, flags: Flags, args: readonly string[], signal: AbortSignal): Promise<number> {
	const server = args[0];
	if (!server) throw usage("name a server");
	if (args.length > 1) throw usage("move takes one server");
	const moved = await moveSecrets(io, flags, server, signal);
	if (flags.json) io.out(jsonLine({ server, moved }));
	else io.out(`${movedText(server, moved)}\n${moved.length > 0 ? `${RELOAD_NOTE}\n` : ""}`);
	return EXIT.ok;
}

const SUBCOMMANDS: Readonly<
	Record<string, (io: CliIo, flags: Flags, args: readonly string[], signal: AbortSignal) => Promise<number>>
> = { set, list, remove, move };

export async function runSecret(io: CliIo, flags: Flags, args: readonly string[], signal: AbortSignal): Promise<number> {
	const [sub, ...rest] = args;
	const run = sub === undefined ? undefined : SUBCOMMANDS[sub];
	if (!run)
		throw usage(sub === undefined ? "name a subcommand: set, list, remove or move" : `unknown subcommand "${escapeName(sub)}"`);
	return run(io, flags, rest, signal);
}
