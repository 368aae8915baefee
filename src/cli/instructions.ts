/**
 * A server's instructions for `pi-mcp get`: it connects the server (as `pi-mcp tools` would, under the
 * same trust: the project file only with --approve) and stops it again. Undefined when the server is
 * not enabled and usable here, sends none, or does not connect (the entry and its state say why).
 */
import type { Flags } from "./args.ts";
import { type CliIo, openShellRun } from "./context.ts";

export async function instructionsFor(io: CliIo, flags: Flags, name: string): Promise<string | undefined> {
	const stop = new AbortController();
	const cli = await openShellRun(io, flags, stop.signal);
	try {
		const entry = cli.config.servers.find((each) => each.name === name);
		if (!entry?.enabled || !entry.config) return undefined;
		io.err(`pi-mcp get: connecting to ${name} for its instructions…\n`);
		return (await cli.runtime.connect(name, stop.signal)).instructions;
	} catch {
		return undefined;
	} finally {
		await cli.close();
	}
}
