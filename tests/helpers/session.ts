/**
 * A session built as the extension and `pi-mcp` build theirs (`SessionOwner`), over an mcp.json holding
 * `servers` (or what `servers(dir)` gives, for entries that name files in it), in a temporary directory
 * of its own. `close` stops the session and removes the directory.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import type { Session } from "../../src/contracts.ts";
import { SessionOwner } from "../../src/session.ts";

export type TestSession = Readonly<{ session: Session; built: SessionOwner; dir: string; close: () => Promise<void> }>;

type Servers = Readonly<Record<string, unknown>>;

/** A prefix for the directory's name, or that and the environment the configuration and servers read. */
type Options = string | Readonly<{ prefix?: string; env?: Readonly<Record<string, string | undefined>> }>;

export async function openSession(servers: Servers | ((dir: string) => Servers), options: Options = {}): Promise<TestSession> {
	const { prefix = "pi-mcp-session-", env = process.env } = typeof options === "string" ? { prefix: options } : options;
	const dir = await mkdtemp(join(tmpdir(), prefix));
	const entries = typeof servers === "function" ? servers(dir) : servers;
	await writeFile(join(dir, "mcp.json"), JSON.stringify({ mcpServers: entries }));
	const config = await loadConfig({ agentDir: dir, cwd: dir, trusted: false, env });
	const built = new SessionOwner({ config, env, agentDir: dir, overflowDir: dir });
	const session = await built.open();
	const close = async () => {
		await built.dispose();
		await rm(dir, { recursive: true, force: true });
	};
	return { session, built, dir, close };
}
