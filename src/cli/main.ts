/**
 * `pi-mcp`, the shell command (package `bin`, started by `bin/pi-mcp.mjs`): list servers, search,
 * describe and call tools, sign in and out, diagnose a setup, and add, remove, enable, disable and
 * import servers. It reads the same files as the extension (the user file in Pi's agent directory;
 * the project file only with `--approve`) and runs the extension's own modules. This file parses,
 * dispatches and reports errors; `servers.ts` and `edit.ts` hold the commands.
 */
import { randomUUID } from "node:crypto";
import { EditError } from "../config/edit.ts";
import { AuthRequired } from "../errors.ts";
import { sanitize } from "../output/text.ts";
import { COMMAND_NAMES, parseArgs, UsageError, wantsJson } from "./args.ts";
import { type CliIo, EXIT, openCli, version } from "./context.ts";
import { EDIT_COMMANDS } from "./edit.ts";
import { HELP } from "./help.ts";
import { jsonError } from "./json.ts";
import { SERVER_COMMANDS } from "./servers.ts";

export { agentDirOf, type CliIo, EXIT, SHELL_WORDS, sweep } from "./context.ts";
export { HELP } from "./help.ts";

/** Writes an error: JSON on stdout with `--json`, else text on stderr; returns the exit code. */
function failure(io: CliIo, json: boolean, message: string, code: string, exit: number): number {
	if (json) io.out(jsonError(message.replace(/^pi-mcp: /, "").split("\n\n")[0] ?? message, code));
	else io.err(`${message}\n`);
	return exit;
}

/** The exit code and error code of something a command threw. */
function classify(error: unknown, signal: AbortSignal): Readonly<{ message: string; code: string; exit: number }> {
	if (error instanceof UsageError) return { message: error.message, code: "usage", exit: EXIT.usage };
	if (error instanceof EditError) return { message: `pi-mcp: ${error.message}`, code: error.code, exit: EXIT.usage };
	if (signal.aborted) return { message: "pi-mcp: interrupted", code: "interrupted", exit: EXIT.interrupted };
	// A link from here would die with this process: point at `pi-mcp login`, which waits for it.
	if (error instanceof AuthRequired) {
		const text =
			"url" in error ? `MCP server "${error.server}" needs sign-in: run pi-mcp login ${error.server}` : sanitize(error.message);
		return { message: `pi-mcp: ${text}`, code: "sign-in", exit: EXIT.signIn };
	}
	return { message: `pi-mcp: ${sanitize((error as Error).message)}`, code: "failed", exit: EXIT.failed };
}

/** The parsed arguments, or the usage error that refused them. */
function parsedOrError(argv: readonly string[]): ReturnType<typeof parseArgs> | UsageError {
	try {
		return parseArgs(argv);
	} catch (error) {
		return error as UsageError;
	}
}

/**
 * Runs one command; resolves to the exit code. Everything started is stopped before it resolves;
 * `mark` is put on every server process of this run (see `sweep`).
 */
export async function main(
	argv: readonly string[],
	io: CliIo,
	signal: AbortSignal = new AbortController().signal,
	mark: string = randomUUID(),
): Promise<number> {
	const json = wantsJson(argv);
	const parsed = parsedOrError(argv);
	if (parsed instanceof Error) {
		const help = HELP[parsed.command ?? "main"] ?? HELP.main;
		return failure(io, json, `pi-mcp: ${parsed.message}${json ? "" : `\n\n${help}`}`, "usage", EXIT.usage);
	}
	const { command, args, flags, rest } = parsed;
	if (flags.version) {
		io.out(flags.json ? `${JSON.stringify({ version: version() })}\n` : `pi-mcp ${version()}\n`);
		return EXIT.ok;
	}
	if (command === "help") {
		io.out(`${HELP[args[0] ?? "main"] ?? HELP.main}\n`);
		return EXIT.ok;
	}
	if (command === undefined || !COMMAND_NAMES.includes(command)) {
		if (flags.help || command === undefined) {
			io.out(`${HELP.main}\n`);
			return flags.help ? EXIT.ok : EXIT.usage;
		}
		return failure(io, json, `pi-mcp: unknown command "${command}"${json ? "" : `\n\n${HELP.main}`}`, "usage", EXIT.usage);
	}
	if (flags.help) {
		io.out(`${HELP[command]}\n`);
		return EXIT.ok;
	}
	const edit =
		command === "import"
			? async () => (await import("./import.ts")).runImport(io, flags, args, signal)
			: command === "secret"
				? async () => (await import("./secret.ts")).runSecret(io, flags, args, signal)
				: EDIT_COMMANDS[command];
	if (edit) {
		try {
			return await edit(io, flags, args, rest, signal);
		} catch (error) {
			const { message, code, exit } = classify(error, signal);
			return failure(io, json, message, code, exit);
		}
	}
	const run = SERVER_COMMANDS[command];
	if (!run) return failure(io, json, `pi-mcp: unknown command "${command}"`, "usage", EXIT.usage);
	const cli = await openCli(io, flags, signal, mark);
	try {
		return await run(cli, args);
	} catch (error) {
		const { message, code, exit } = classify(error, signal);
		return failure(io, json, message, code, exit);
	} finally {
		await cli.close();
	}
}
