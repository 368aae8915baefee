/**
 * The two clients the in-process figures compare, on the same fixture server and mode:
 * - ours: `loadConfig` (a real mcp.json in a temp agent dir) + `createRuntime`, as the extension uses them;
 * - raw: `@modelcontextprotocol/client` used directly (`Client` + `StdioClientTransport`).
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { loadConfig } from "../../src/config.ts";
import type { Runtime } from "../../src/contracts.ts";
import { createRuntime } from "../../src/runtime.ts";
import { makeSandbox, type Sandbox, SERVER } from "./pi.ts";

export type Mode = "legacy" | "auto";

export const SERVER_NAME = "fx";

/** A sandbox whose mcp.json holds the fixture server in `mode`; its wire log is `${BENCH_WIRE}`. */
export async function oursSandbox(mode: Mode): Promise<Sandbox> {
	const sandbox = await makeSandbox(`pi-bench-${mode}-`);
	const entry = { command: process.execPath, args: [SERVER], protocolVersion: mode, env: { FIXTURE_LOG: "${BENCH_WIRE}" } };
	await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { [SERVER_NAME]: entry } }));
	return sandbox;
}

/** loadConfig + createRuntime, exactly as `session_start` does (project untrusted, so only the agent dir file). */
export async function oursRuntime(sandbox: Sandbox, wire: string): Promise<Runtime> {
	const env = { ...process.env, BENCH_WIRE: wire };
	const config = await loadConfig({ agentDir: sandbox.agentDir, cwd: sandbox.cwd, trusted: false, env, configDirName: ".pi" });
	return createRuntime({ servers: config.servers, env, clientInfo: { name: "pi-mcp-bench", version: "0" } });
}

/**
 * pi-mcp starts stdio servers through `setsid` (own session and process group). With Linux autogroup
 * scheduling (`/proc/sys/kernel/sched_autogroup_enabled`), a new session also gets its own CPU share, which
 * on a loaded machine makes that server answer faster. The raw SDK's server is started the same way so the
 * comparison measures the clients, not the scheduler.
 */
export const SETSID: string | undefined =
	process.platform === "linux" ? ["/usr/bin/setsid", "/bin/setsid"].find((path) => existsSync(path)) : undefined;

/** A raw SDK client in `mode`, not yet connected; the probe timeout matches what pi-mcp uses. */
export function rawClient(mode: Mode, wire: string): { client: Client; transport: StdioClientTransport } {
	const client = new Client(
		{ name: "raw-sdk-bench", version: "0" },
		{
			capabilities: {},
			versionNegotiation: mode === "legacy" ? { mode: "legacy" } : { mode: "auto", probe: { timeoutMs: 10_000 } },
		},
	);
	const transport = new StdioClientTransport({
		command: SETSID ?? process.execPath,
		args: SETSID ? [process.execPath, SERVER] : [SERVER],
		env: { FIXTURE_LOG: wire },
		stderr: "pipe",
	});
	transport.stderr?.on("data", () => undefined);
	return { client, transport };
}

export function resultText(result: { content?: readonly { type: string; text?: string }[] }): string {
	return (result.content ?? []).map((block) => block.text ?? "").join("");
}

/** Fails loudly when a call did not echo what it was given. */
export function expectEcho(result: { content?: readonly { type: string; text?: string }[] }, text: string): void {
	const got = resultText(result);
	if (!got.endsWith(` ${text}`)) throw new Error(`unexpected echo result: ${got.slice(0, 200)}`);
}
