/**
 * A server's instructions for `pi-mcp get --connect`: it connects the server (as `pi-mcp tools` would,
 * under the same trust: the project file only with --approve) and stops it again. `""` when it sends
 * none; undefined when it is not usable here or does not connect (said on stderr).
 */
import { sanitize } from "../output/text.ts";
import type { Flags } from "./args.ts";
import { type CliIo, openCli } from "./context.ts";

export async function instructionsFor(io: CliIo, flags: Flags, name: string): Promise<string | undefined> {
	const stop = new AbortController();
	const cli = await openCli(io, flags, stop.signal);
	try {
		const entry = cli.config.servers.find((each) => each.name === name);
		if (!entry?.enabled || !entry.config) return undefined;
		io.err(`pi-mcp get: connecting to ${name} for its instructions…\n`);
		const status = await cli.runtime.connect(name, stop.signal);
		if (status.state !== "ready") {
			io.err(`pi-mcp get: ${name} did not connect: ${sanitize(status.error ?? status.state)}\n`);
			return undefined;
		}
		return status.instructions ?? "";
	} catch (error) {
		io.err(`pi-mcp get: ${name} did not connect: ${sanitize((error as Error).message)}\n`);
		return undefined;
	} finally {
		await cli.close();
	}
}
