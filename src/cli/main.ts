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
 * A failure to report: `text` for the terminal, `bare` for `--json` (`text` without its "pi-mcp: "), the
 * command's `help` for a usage error, the error code and the exit code.
 */
type Failure = Readonly<{ text: string; bare: string; help?: string; code: string; exit: number }>;

/** A failure worded "pi-mcp: <bare>". */
const said = (bare: string, code: string, exit: number): Failure => ({ text: `pi-mcp: ${bare}`, bare, code, exit });

/**
 * Writes an error: JSON on stdout with `--json`, else text on stderr; returns the exit code. A usage
 * error's help comes first: the error is the last thing shown, so it stays on a short terminal's screen.
 */
function failure(io: CliIo, json: boolean, report: Failure): number {
	if (json) io.out(jsonError(report.bare, report.code));
	else io.err(report.help ? `${report.help}\n\n${report.text}\n` : `${report.text}\n`);
	return report.exit;
}

/** The failure a command's error is. */
function classify(error: unknown, signal: AbortSignal): Failure {
	if (error instanceof UsageError)
		return { text: error.message, bare: error.bare, help: error.help, code: "usage", exit: EXIT.usage };
	if (error instanceof EditError) return said(error.message, error.code, EXIT.usage);
	if (signal.aborted) return said("interrupted", "interrupted", EXIT.interrupted);
	// A variable to set is the configuration's to fix, not a sign-in.
	if (error instanceof AuthRequired && !("url" in error) && error.hint?.kind === "reconnect")
		return said(sanitize(error.message), "configuration", EXIT.usage);
	// A link from here would die with this process: point at `pi-mcp login`, which waits for it.
	if (error instanceof AuthRequired) {
		const text =
			"url" in error ? `MCP server "${error.server}" needs sign-in: run pi-mcp login ${error.server}` : sanitize(error.message);
		return said(text, "sign-in", EXIT.signIn);
	}
	return said(sanitize((error as Error).message), "failed", EXIT.failed);
}

/** An unknown command: the error and the close commands, no help to scroll them away. */
function unknownCommand(io: CliIo, json: boolean, command: string): number {
	const report = said(
		`unknown command "${escapeName(command)}"${suggestion(command, [...COMMAND_NAMES, "help"], false)}`,
		"usage",
		EXIT.usage,
	);
	if (json) return failure(io, json, report);
	io.err(`${report.text}\nRun pi-mcp --help for the commands.\n`);
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
		return failure(io, json, { ...said(parsed.message, "usage", EXIT.usage), help });
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
			return failure(io, json, classify(error, signal));
		}
	}
	const run = SERVER_COMMANDS[command];
	if (!run) return unknownCommand(io, json, command);
	const cli = await openShellRun(io, flags, signal, mark);
	try {
		return await run(cli, args);
	} catch (error) {
		return failure(io, json, classify(error, signal));
	} finally {
		await cli.close();
	}
}
