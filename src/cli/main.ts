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
import { escapeName, sanitize } from "../output/text.ts";
import { COMMAND_NAMES, parseArgs, UsageError, wantsJson } from "./args.ts";
import { openShellRun } from "./context.ts";
import { EDIT_COMMANDS } from "./edit.ts";
import { HELP } from "./help.ts";
import { type CliIo, EXIT, version } from "./io.ts";
import { jsonError } from "./json.ts";
import { suggestion } from "./names.ts";
import { SERVER_COMMANDS } from "./servers.ts";

export { HELP } from "./help.ts";
export { agentDirOf, type CliIo, EXIT, SHELL_WORDS } from "./io.ts";
export { sweep } from "./sweep.ts";

/**
 * Writes an error: JSON on stdout with `--json`, else text on stderr; returns the exit code. A usage
 * error's help (after a blank line in its message) comes first: the error is the last thing shown, so
 * it stays on a short terminal's screen.
 */
function failure(io: CliIo, json: boolean, message: string, code: string, exit: number): number {
	const [error = message, ...help] = code === "usage" ? message.split("\n\n") : [message];
	if (json) io.out(jsonError(error.replace(/^pi-mcp: /, ""), code));
	else io.err(help.length > 0 ? `${help.join("\n\n")}\n\n${error}\n` : `${error}\n`);
	return exit;
}

/** The exit code and error code of something a command threw. */
function classify(error: unknown, signal: AbortSignal): Readonly<{ message: string; code: string; exit: number }> {
	if (error instanceof UsageError) return { message: error.message, code: "usage", exit: EXIT.usage };
	if (error instanceof EditError) return { message: `pi-mcp: ${error.message}`, code: error.code, exit: EXIT.usage };
	if (signal.aborted) return { message: "pi-mcp: interrupted", code: "interrupted", exit: EXIT.interrupted };
	// A variable to set is the configuration's to fix, not a sign-in.
	if (error instanceof AuthRequired && !("url" in error) && error.hint?.kind === "reconnect")
		return { message: `pi-mcp: ${sanitize(error.message)}`, code: "configuration", exit: EXIT.usage };
	// A link from here would die with this process: point at `pi-mcp login`, which waits for it.
	if (error instanceof AuthRequired) {
		const text =
			"url" in error ? `MCP server "${error.server}" needs sign-in: run pi-mcp login ${error.server}` : sanitize(error.message);
		return { message: `pi-mcp: ${text}`, code: "sign-in", exit: EXIT.signIn };
	}
	return { message: `pi-mcp: ${sanitize((error as Error).message)}`, code: "failed", exit: EXIT.failed };
}

/** An unknown command: the error and the close commands, no help to scroll them away. */
function unknownCommand(io: CliIo, json: boolean, command: string): number {
	const message = `pi-mcp: unknown command "${escapeName(command)}"${suggestion(command, [...COMMAND_NAMES, "help"], false)}`;
	if (json) return failure(io, json, message, "usage", EXIT.usage);
	io.err(`${message}\nRun pi-mcp --help for the commands.\n`);
	return EXIT.usage;
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
		const named = parsed.command;
		if (named !== undefined && named !== "help" && !COMMAND_NAMES.includes(named)) return unknownCommand(io, json, named);
		const help = (parsed.command && HELP[parsed.command]) || "Run pi-mcp --help for the commands and options.";
		return failure(io, json, `pi-mcp: ${parsed.message}\n\n${help}`, "usage", EXIT.usage);
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
		return unknownCommand(io, json, command);
	}
	if (flags.help) {
		io.out(`${HELP[command]}\n`);
		return EXIT.ok;
	}
	const edit =
		command === "import"
			? async (runIo: CliIo) => (await import("./import.ts")).runImport(runIo, flags, args, signal)
			: command === "secret"
				? async (runIo: CliIo) => (await import("./secret.ts")).runSecret(runIo, flags, args, signal)
				: EDIT_COMMANDS[command];
	if (edit) {
		try {
			return await edit({ ...io, mark }, flags, args, rest, signal);
		} catch (error) {
			const { message, code, exit } = classify(error, signal);
			return failure(io, json, message, code, exit);
		}
	}
	const run = SERVER_COMMANDS[command];
	if (!run) return unknownCommand(io, json, command);
	const cli = await openShellRun(io, flags, signal, mark);
	try {
		return await run(cli, args);
	} catch (error) {
		const { message, code, exit } = classify(error, signal);
		return failure(io, json, message, code, exit);
	} finally {
		await cli.close();
	}
}
