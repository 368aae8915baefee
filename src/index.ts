/**
 * Pi registration: the `/mcp` command, the `mcp` tool and the session lifecycle. The factory only
 * registers (no I/O: no files, processes, sockets or timers); `session_start` reads configuration;
 * servers connect lazily on first use; `session_shutdown` tears everything down.
 */
import { CONFIG_DIR_NAME, type ExtensionAPI, type ExtensionContext, getAgentDir } from "@earendil-works/pi-coding-agent";
import {
	DESCRIPTION,
	type Params,
	parameters,
	type Result,
	runAction,
	type Session,
	statusLine,
	toolLine,
	userStatus,
} from "./actions.ts";
import { type ConfigSnapshot, type ExtensionServer, loadConfig } from "./config.ts";
import { createOverflowStore, sanitize } from "./output.ts";
import { type McpArgs, renderCall, renderResult } from "./render.ts";
import { createRuntime } from "./runtime.ts";

export const VERSION = "0.1.0";

export type InstallMcpOptions = Readonly<{
	/** Defaults to Pi's agent directory (`PI_CODING_AGENT_DIR`, else `~/.pi/agent`). */
	agentDir?: string;
	/** Defaults to `process.env`; config interpolation and bearer tokens read only this. */
	env?: Readonly<Record<string, string | undefined>>;
	/** Where the per-session overflow directory is created; defaults to the OS temp directory. */
	overflowDir?: string;
}>;

export function installMcp(pi: ExtensionAPI, options: InstallMcpOptions = {}): void {
	const holder: { session?: Session; loading?: Promise<void> } = {};
	const env = () => options.env ?? process.env;

	async function readConfig(ctx: ExtensionContext, extensionServers: readonly ExtensionServer[]): Promise<ConfigSnapshot> {
		return loadConfig({
			agentDir: options.agentDir ?? getAgentDir(),
			cwd: ctx.cwd,
			trusted: typeof ctx.isProjectTrusted === "function" ? ctx.isProjectTrusted() : false,
			env: env(),
			extensionServers,
			configDirName: CONFIG_DIR_NAME,
		});
	}

	function registeredServers(): readonly ExtensionServer[] {
		return typeof pi.getMcpServers === "function" ? pi.getMcpServers() : [];
	}

	async function endSession(): Promise<void> {
		const session = holder.session;
		holder.session = undefined;
		await session?.runtime.dispose();
		await session?.overflow.dispose();
	}

	function requireSession(): Session {
		if (!holder.session) throw new Error("MCP is not available: the session has not started");
		return holder.session;
	}

	/** Command output: a notification where there is a UI (TUI, RPC); plain text on stderr in print and
	 * JSON modes, where Pi keeps stdout for the agent's own output (it redirects extensions' stdout there too). */
	function report(ctx: ExtensionContext, text: string, level: "info" | "warning" | "error" = "info"): void {
		if (ctx.hasUI) ctx.ui.notify(text, level);
		else process.stderr.write(`${text}\n`);
	}

	pi.registerTool({
		name: "mcp",
		label: "MCP",
		description: DESCRIPTION,
		promptSnippet: "mcp: tools of MCP servers (status, tools, describe, call)",
		parameters,
		async execute(_id, params, signal, onUpdate) {
			await holder.loading?.catch(() => undefined);
			return runAction(requireSession(), params as Params, signal, onUpdate);
		},
		renderCall: (args, theme) => renderCall(args as McpArgs, theme),
		renderResult: (result, options, theme, context) => renderResult(result as Result, options, theme, context.isError),
	});

	const SUBCOMMANDS = ["status", "tools", "reconnect"];
	const USAGE = "Usage: /mcp [status] | /mcp tools <server> | /mcp reconnect <server>";

	pi.registerCommand("mcp", {
		description: "MCP servers: status, tools <server>, reconnect <server>",
		getArgumentCompletions: (prefix) => {
			const [action = "", server, ...rest] = prefix.trimStart().split(/\s+/);
			if (rest.length > 0) return null;
			if (server === undefined) {
				const items = SUBCOMMANDS.filter((item) => item.startsWith(action)).map((item) => ({ value: `${item} `, label: item }));
				return items.length > 0 ? items : null;
			}
			if (action !== "tools" && action !== "reconnect") return null;
			const items = (holder.session?.runtime.status() ?? [])
				.filter((status) => status.name.startsWith(server))
				.map((status) => ({ value: `${action} ${status.name}`, label: status.name, description: status.state }));
			return items.length > 0 ? items : null;
		},
		handler: async (args, ctx) => {
			const [action = "status", name, ...extra] = args.trim().split(/\s+/).filter(Boolean);
			await holder.loading;
			const session = holder.session;
			if (action === "status" && name === undefined) return report(ctx, userStatus(session));
			if (!SUBCOMMANDS.includes(action) || extra.length > 0 || name === undefined || action === "status") {
				return report(ctx, USAGE, "warning");
			}
			if (!session) return report(ctx, "pi-mcp: no session yet.", "warning");
			try {
				if (action === "tools") {
					const tools = await session.runtime.tools(name, ctx.signal);
					const body = tools.length > 0 ? tools.map((tool) => `  ${toolLine(tool)}`).join("\n") : "  (no tools)";
					return report(ctx, sanitize(`${name}: ${tools.length} tool${tools.length === 1 ? "" : "s"}\n${body}`, []));
				}
				await session.runtime.reset(name);
				const status = await session.runtime.connect(name, ctx.signal);
				return report(
					ctx,
					status.state === "ready" ? `Reconnected: ${statusLine(status)}` : `${name}: ${status.error ?? status.state}`,
					status.state === "ready" ? "info" : "error",
				);
			} catch (error) {
				return report(ctx, (error as Error).message, "error");
			}
		},
	});

	pi.on("session_start", async (_event, ctx) => {
		const loading = (async () => {
			await endSession();
			const config = await readConfig(ctx, registeredServers());
			holder.session = {
				config,
				runtime: createRuntime({ servers: config.servers, env: env(), clientInfo: { name: "pi-mcp", version: VERSION } }),
				overflow: createOverflowStore({ baseDir: options.overflowDir }),
			};
			const problems = config.servers.filter((server) => server.error).length + config.files.filter((file) => file.error).length;
			if (problems > 0 && ctx.hasUI) {
				ctx.ui.notify(`pi-mcp: ${problems} configuration problem${problems === 1 ? "" : "s"}; see /mcp status`, "warning");
			}
		})();
		holder.loading = loading;
		await loading;
	});

	pi.on("mcp_servers_change", async (event, ctx) => {
		// Chained on `loading` so that `/mcp` and the tool see the new servers once the change is applied.
		const previous = holder.loading;
		const loading = (async () => {
			await previous?.catch(() => undefined);
			const session = holder.session;
			if (!session) return;
			const config = await readConfig(ctx, event.servers);
			await session.runtime.update(config.servers);
			if (holder.session === session) holder.session = { ...session, config };
		})();
		holder.loading = loading;
		await loading;
	});

	pi.on("session_shutdown", async () => {
		await holder.loading?.catch(() => undefined);
		await endSession();
	});
}

export default function (pi: ExtensionAPI): void {
	installMcp(pi);
}
