/**
 * `pi-mcp trust [--yes|--json|--reset] <server>` (#47): the definitions a server shows the model that
 * changed since the user approved them, as a word diff; approved on a terminal's yes or with `--yes`.
 * `--json` prints them and approves nothing. `--reset` forgets the server's pins (an unreadable pins
 * file is moved aside). Exit 0 when nothing is pending, 1 when changes stay pending, 2 on usage errors.
 */
import { join } from "node:path";
import { createInterface } from "node:readline";
import { serverIdentity } from "../config/identity.ts";
import type { PendingChange } from "../contracts.ts";
import { escapeName } from "../output/text.ts";
import { diffText, wordDiff } from "../pins/diff.ts";
import { resetPins } from "../runtime/pins-io.ts";
import { UsageError } from "./args.ts";
import { EXIT, type ShellRun } from "./context.ts";
import { jsonLine } from "./json.ts";

const PINS_FILE = "mcp-pins.json";

function ask(cli: ShellRun, question: string): Promise<boolean> {
	const lines = createInterface({ input: cli.io.stdin, terminal: false });
	cli.io.err(question);
	return new Promise((resolve) => {
		const done = (answer: string | undefined) => {
			lines.close();
			resolve(/^y(es)?$/i.test(answer?.trim() ?? ""));
		};
		lines.once("line", done);
		lines.once("close", () => done(undefined));
		cli.signal.addEventListener("abort", () => done(undefined), { once: true });
	});
}

const changeText = (change: PendingChange): string =>
	[`${change.title}:`, diffText(wordDiff(change.before, change.after)), ""].join("\n");

export async function trust(cli: ShellRun, args: readonly string[]): Promise<number> {
	const { flags } = cli;
	const [name, ...extra] = args;
	if (name === undefined || extra.length > 0) throw new UsageError("trust: give one server name", "trust");
	if ([flags.yes, flags.json, flags.reset].filter(Boolean).length > 1)
		throw new UsageError("trust: --yes, --json and --reset exclude each other", "trust");
	const entry = cli.config.servers.find((each) => each.name === name);
	if (!entry) throw new UsageError(`trust: no MCP server "${escapeName(name)}" is configured`, "trust");
	if (!entry.config) throw new UsageError(`trust: ${entry.error ?? `server "${name}" has no usable configuration`}`, "trust");
	const path = join(cli.agentDir, PINS_FILE);
	if (flags.reset) {
		const done = await resetPins(path, serverIdentity(entry.config).key);
		const said = {
			forgot: `forgot the pins of ${name}: its next connection pins what it shows afresh`,
			none: `${name} has no pins yet: its next connection pins what it shows`,
			moved: `${path} could not be read: moved aside; every server pins afresh at its next connection`,
		}[done];
		cli.io.out(flags.json ? jsonLine({ server: name, reset: done }) : `${said}\n`);
		return EXIT.ok;
	}
	if (entry.config.pin === false) {
		cli.io.out(
			flags.json ? jsonLine({ server: name, state: "not pinned", pending: [] }) : `${name} is not pinned ("pin": false)\n`,
		);
		return EXIT.ok;
	}
	const review = await cli.runtime.changes(name, cli.signal);
	if (flags.json) {
		cli.io.out(jsonLine({ server: name, state: review.state, error: review.error, pending: review.pending }));
		return review.pending.length > 0 ? EXIT.failed : EXIT.ok;
	}
	if (review.error) cli.io.err(`pi-mcp: ${review.error}\n`);
	if (review.pending.length === 0) {
		cli.io.out(`${name}: nothing changed since you approved it\n`);
		return EXIT.ok;
	}
	cli.io.out(
		`${name}: ${review.pending.length} definition${review.pending.length === 1 ? "" : "s"} withheld until you approve:\n\n`,
	);
	for (const change of review.pending) cli.io.out(`${changeText(change)}\n`);
	const terminal = (cli.io.stdin as { isTTY?: boolean }).isTTY === true;
	const yes = flags.yes || (terminal && !review.error && (await ask(cli, `Approve all ${review.pending.length}? [y/N] `)));
	if (!yes) {
		cli.io.err(`pi-mcp: nothing approved; run pi-mcp trust --yes ${name} to approve\n`);
		return EXIT.failed;
	}
	const approved = await cli.runtime.approve(name, undefined, cli.signal);
	cli.io.out(`approved ${approved} definition${approved === 1 ? "" : "s"} of ${name}\n`);
	return EXIT.ok;
}
