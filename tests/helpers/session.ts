/**
 * A `Session` as the actions see it (configuration, runtime, overflow store) over an mcp.json holding
 * `servers`, in a temporary directory of its own. `close` stops the runtime and removes the directory.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import type { Session } from "../../src/contracts.ts";
import { createOverflowStore } from "../../src/output.ts";
import { createRuntime } from "../../src/runtime.ts";

export type OpenSession = Readonly<{ session: Session; dir: string; close: () => Promise<void> }>;

export async function openSession(servers: Readonly<Record<string, unknown>>, prefix = "pi-mcp-session-"): Promise<OpenSession> {
	const dir = await mkdtemp(join(tmpdir(), prefix));
	await writeFile(join(dir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
	const config = await loadConfig({ agentDir: dir, cwd: dir, trusted: false, env: process.env });
	const session: Session = {
		config,
		runtime: createRuntime({ servers: config.servers, env: process.env, clientInfo: { name: "t", version: "0" } }),
		overflow: createOverflowStore({ baseDir: dir }),
	};
	const close = async () => {
		await session.runtime.dispose();
		await session.overflow.dispose();
		await rm(dir, { recursive: true, force: true });
	};
	return { session, dir, close };
}
