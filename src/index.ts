/**
 * Pi registration and the session's lifecycle. The factory only registers (no I/O, no timers); `session_start`
 * reads the configuration into a session (`session.ts`) when there is a UI to warn about it, else on first use
 * (`-p`, `--mode json`: nothing at start shows it); the rest loads and connects on first use (figure 1).
 */
import {
	CONFIG_DIR_NAME,
	type ExtensionAPI,
	type ExtensionCommandContext,
	type ExtensionContext,
	getAgentDir,
} from "@earendil-works/pi-coding-agent";
import { once } from "./async.ts";
import type { SecretStore } from "./auth/keyring.ts";
import type { ExtensionServer } from "./config.ts";
import type { Session } from "./contracts.ts";
import type { ManagerOptions } from "./manager/manager.ts";
import { type McpDetails, renderCall, renderResult } from "./render.ts";
import type { ConfigSnapshot } from "./schema.ts";
import { SessionOwner } from "./session.ts";
import { DESCRIPTION, PROMPT_SNIPPET, parameters } from "./tool/definition.ts";
import { withEarlyStart } from "./tool/early/listen.ts";

export { VERSION } from "./session.ts";

export type InstallMcpOptions = Readonly<{
	/** Defaults to Pi's agent directory (`PI_CODING_AGENT_DIR`, else `~/.pi/agent`). */
	agentDir?: string;
	/** Defaults to `process.env`; config interpolation and bearer tokens read only this. */
	env?: Readonly<Record<string, string | undefined>>;
	/** Where the per-session overflow directory is created; defaults to the OS temp directory. */
	overflowDir?: string;
	/** Defaults to the OS keyring (Secret Service on Linux); never a file. */
	secrets?: SecretStore;
	/** Defaults to Date.now. */
	now?: () => number;
}>;

const loadExecute = once(() => import("./tool/execute.ts"));
const loadCompletions = once(() => import("./manager/completions.ts"));

/** The extension's one owner of what changes: the current session, its loading, and Pi's latest context. */
class Host {
	readonly pi: ExtensionAPI;
	readonly options: InstallMcpOptions;
	readonly env: Readonly<Record<string, string | undefined>>;
	readonly agentDir: string;
	#session?: SessionOwner;
	#loading?: Promise<void>;
	#ctx?: ExtensionContext;
	/** A session started without a UI, whose configuration is read on its first use. */
	#deferred?: ExtensionContext;

	constructor(pi: ExtensionAPI, options: InstallMcpOptions) {
		this.pi = pi;
		this.options = options;
		this.env = options.env ?? process.env;
		this.agentDir = options.agentDir ?? getAgentDir();
	}

	get session(): SessionOwner | undefined {
		return this.#session;
	}

	/** Pi's context at the latest session start: where a sign-in's outcome is told. */
	started(ctx: ExtensionContext): void {
		this.#ctx = ctx;
	}

	servers(): readonly ExtensionServer[] {
		return typeof this.pi.getMcpServers === "function" ? this.pi.getMcpServers() : [];
	}

	async readConfig(ctx: ExtensionContext, extensionServers: readonly ExtensionServer[]): Promise<ConfigSnapshot> {
		const trusted = typeof ctx.isProjectTrusted === "function" ? ctx.isProjectTrusted() : false;
		const { agentDir, env } = this;
		const { loadConfig } = await (await loadExecute()).loadConfigModule();
		return loadConfig({ agentDir, cwd: ctx.cwd, trusted, env, extensionServers, configDirName: CONFIG_DIR_NAME });
	}

	/** Reads the configuration for `ctx` into a new session, which becomes current. */
	async load(ctx: ExtensionContext): Promise<void> {
		const config = await this.readConfig(ctx, this.servers());
		const { env, agentDir, options } = this;
		const notify = (server: string, message: string, ok: boolean) => this.signedIn(server, message, ok);
		await this.replace(new SessionOwner({ ...options, config, env, agentDir, notify }));
		const problems = config.servers.filter((server) => server.error).length + config.files.filter((file) => file.error).length;
		if (problems > 0 && ctx.hasUI) {
			ctx.ui.notify(`pi-mcp: ${problems} configuration problem${problems === 1 ? "" : "s"}; see /mcp status`, "warning");
		}
	}

	/** The session started for `ctx` reads its configuration on first use (`ensure`). */
	defer(ctx: ExtensionContext): void {
		this.#deferred = ctx;
	}

	/** Resolves once every session start or change so far is applied, a deferred configuration read included. */
	async ensure(): Promise<void> {
		await this.#loading?.catch(() => undefined);
		const ctx = this.#deferred;
		this.#deferred = undefined;
		// The first caller reads; one that came meanwhile waits for that read (it is the latest link of the chain).
		if (ctx) void this.chain(() => this.load(ctx)).catch(() => undefined);
		await this.#loading?.catch(() => undefined);
	}

	/** The current session's parts, once any session start or change in progress has been applied. */
	async open(): Promise<Session> {
		await this.ensure();
		if (!this.#session) throw new Error("MCP is not available: the session has not started");
		return this.#session.open();
	}

	/** A sign-in finished: tell the user, and the agent with a message that lets it continue. */
	signedIn(server: string, message: string, ok: boolean): void {
		if (this.#ctx?.hasUI) this.#ctx.ui.notify(message, ok ? "info" : "error");
		try {
			this.pi.sendMessage(
				{ customType: "pi-mcp", content: message, display: true, details: { server, ok } },
				{ triggerTurn: true, deliverAs: "followUp" },
			);
		} catch {
			// The session may be gone (shutdown while a sign-in completed); the user was notified.
		}
	}

	/** Ends the current session (stopping what it started) and makes `next` current. */
	async replace(next?: SessionOwner): Promise<void> {
		const previous = this.#session;
		this.#session = undefined;
		this.#deferred = undefined;
		await previous?.dispose();
		this.#session = next;
	}

	/** Runs `step` after every session start or change before it, so that `/mcp` and the tool see it applied. */
	chain(step: () => Promise<void>): Promise<void> {
		const loading = (this.#loading ?? Promise.resolve()).catch(() => undefined).then(step);
		this.#loading = loading;
		return loading;
	}
}

/** `/mcp`: the manager for a bare `/mcp` in the TUI, else the subcommand (each module loads only now). */
async function command(host: Host, args: string, ctx: ExtensionCommandContext): Promise<void> {
	const opened = await host.open().catch(() => undefined); // Waits for a session start in progress.
	if (args.trim() === "" && ctx.mode === "tui" && opened) {
		const { openManager } = await import("./manager/manager.ts");
		return openManager(ctx, opened, { ...managerEdits(host, ctx), conversation: host.pi });
	}
	// `/mcp trust <server>` in the TUI opens the manager at that server's withheld changes.
	const manage =
		ctx.mode === "tui" && opened
			? async (review: string) =>
					(await import("./manager/manager.ts")).openManager(ctx, opened, {
						...managerEdits(host, ctx),
						conversation: host.pi,
						review,
					})
			: undefined;
	const { runCommand } = await import("./manager/command.ts");
	await runCommand(args, ctx, opened, host.pi, manage);
}

/** The manager's Enable/Disable and tool toggle: the shell command's edits of mcp.json, then the files applied as a change is. */
function managerEdits(host: Host, ctx: ExtensionContext): ManagerOptions {
	const place = { agentDir: host.agentDir, cwd: ctx.cwd, env: host.env, configDirName: CONFIG_DIR_NAME };
	const locked = async () => ({ lock: (await import("./store.ts")).acquireLock });
	return {
		setEnabled: async (...args) => (await import("./config/edit.ts")).setEnabled(place, ...args, await locked()),
		setToolHidden: async (...args) => (await import("./config/tool-edit.ts")).setToolHidden(place, ...args, await locked()),
		reload: async () => {
			await changeServers(host, host.servers(), ctx);
			return host.session?.config();
		},
	};
}

/** `session_start`: ends the previous session and reads the configuration, now or on first use (nothing connects). */
function startSession(host: Host, ctx: ExtensionContext): Promise<void> {
	host.started(ctx);
	if (ctx.mode === "tui") void import("./manager/tab.ts").then(({ mcpTab }) => ctx.ui.addAutocompleteProvider(mcpTab));
	return host.chain(async () => {
		await host.replace(undefined);
		if (ctx.hasUI) await host.load(ctx);
		else host.defer(ctx);
	});
}

/** `mcp_servers_change`: the new configuration, applied to the session it was read for. */
function changeServers(host: Host, servers: readonly ExtensionServer[], ctx: ExtensionContext): Promise<void> {
	return host.chain(async () => {
		const session = host.session;
		if (!session) return;
		const config = await host.readConfig(ctx, servers);
		if (host.session === session) await session.update(config);
	});
}

export function installMcp(pi: ExtensionAPI, options: InstallMcpOptions = {}): void {
	const host = new Host(pi, options);
	const calls = withEarlyStart(
		pi,
		{
			entries: () => host.session?.config().servers ?? [],
			runtime: () => host.session?.runtime(),
			preload: () => {
				void loadExecute().then((execute) => execute.preloadTool());
				return host.ensure();
			},
			open: () => host.open(),
		},
		{ name: "mcp", description: DESCRIPTION, parameters },
	);
	pi.registerTool<typeof parameters, McpDetails>({
		name: "mcp",
		label: "MCP",
		description: DESCRIPTION,
		promptSnippet: PROMPT_SNIPPET,
		parameters,
		execute: async (...call) => (await loadExecute()).executeMcp(calls)(...call),
		renderCall: (args, theme) => renderCall(args, theme),
		renderResult: (result, options, theme, context) => renderResult(result, options, theme, context.isError),
	});
	pi.registerCommand("mcp", {
		description: "MCP servers: status, tools, reconnect, login, logout, prompt, attach",
		getArgumentCompletions: async (prefix) =>
			(await loadCompletions()).completions(
				prefix,
				() => host.session?.states() ?? [],
				() => host.open(),
			),
		handler: (args, ctx) => command(host, args, ctx),
	});
	pi.on("session_start", (_event, ctx) => startSession(host, ctx));
	pi.on("mcp_servers_change", (event, ctx) => changeServers(host, event.servers, ctx));
	pi.on("session_shutdown", () => host.chain(() => host.replace(undefined)));
}

export default function (pi: ExtensionAPI): void {
	installMcp(pi);
}
