/**
 * Pi registration: the `/mcp` command, the `mcp` tool and the session lifecycle. The factory only
 * registers (no I/O: no files, processes, sockets or timers); `session_start` reads configuration;
 * servers connect lazily on first use; `session_shutdown` tears everything down.
 */
import { join } from "node:path";
import {
	CONFIG_DIR_NAME,
	type ExtensionAPI,
	type ExtensionCommandContext,
	type ExtensionContext,
	getAgentDir,
	type MessageUpdateEvent,
	type ToolDefinition,
} from "@earendil-works/pi-coding-agent";
import { once } from "./async.ts";
import type { SecretStore } from "./auth/keyring.ts";
import { type ExtensionServer, loadConfig } from "./config.ts";
import type { Auth, Runtime, Session } from "./contracts.ts";
import type { ManagerOptions } from "./manager/manager.ts";
import { escapeName } from "./output/text.ts";
import type { OverflowStore } from "./output.ts";
import { type McpDetails, renderCall, renderResult } from "./render.ts";
import type { ConfigSnapshot } from "./schema.ts";
import { DESCRIPTION, PROMPT_SNIPPET, parameters, SUBCOMMANDS } from "./tool/definition.ts";
import type { createEarlyStart, EarlyModules } from "./tool/early.ts";

export const VERSION = "0.1.0";

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

/** What a session owns besides the shared parts (`Session` in `contracts.ts`): its credentials. */
type Owned = Readonly<{ auth: Auth; disposeAuth: () => Promise<void> }>;

/** The modules behind the tool and the command, loaded on first use: starting Pi loads only the
 * registration, the configuration and the renderer (bench figure 1 counts every module). */
type Modules = Readonly<{
	actions: typeof import("./tool/actions.ts");
	runtime: typeof import("./runtime.ts");
	errors: typeof import("./errors.ts");
	sdk: typeof import("./sdk.ts");
	output: typeof import("./output.ts");
	listing: typeof import("./tool/listing.ts");
}>;

const loadModules = once(
	(): Promise<Modules> =>
		Promise.all([
			import("./tool/actions.ts"),
			import("./runtime.ts"),
			import("./errors.ts"),
			import("./sdk.ts"),
			import("./output.ts"),
			import("./tool/listing.ts"),
		]).then(([actions, runtime, errors, sdk, output, listing]) => ({ actions, runtime, errors, sdk, output, listing })),
);

/** A session from `session_start` to shutdown: its configuration (replaced when Pi's MCP servers
 * change) and credentials; the runtime and the overflow store are created on first use. Replaced
 * whole, and re-read after every `await` (a new session may have started meanwhile). */
type Open = Readonly<{ config: ConfigSnapshot; owned: Owned; runtime?: Runtime; overflow?: OverflowStore }>;

/**
 * The auth modules (and `node:http` for the loopback receiver, the keyring binding) load only when a
 * server needs credentials: a session without OAuth or bearer servers never pays for them.
 */
export function lazyAuth(make: () => Promise<{ auth: Auth; dispose: () => Promise<void> }>): Owned {
	const holder: { made?: { auth: Auth; dispose: () => Promise<void> }; promise?: Promise<Auth> } = {};
	// Not `once()`: shutdown must know whether the auth modules were ever asked for.
	const get = (): Promise<Auth> => {
		holder.promise ??= make().then((made) => {
			holder.made = made;
			return made.auth;
		});
		return holder.promise;
	};
	const auth: Auth = {
		// The setup's signal goes on: the auth modules stop their requests and keyring waits with it.
		prepare: async (config, signal) => (await get()).prepare(config, signal),
		stepUp: async (config, error) => (await get()).stepUp(config, error),
		login: async (config) => (await get()).login(config),
		complete: async (config, url) => (await get()).complete(config, url),
		logout: async (config) => (await get()).logout(config),
		credentialState: async (config) => (await get()).credentialState(config),
		secrets: () => holder.made?.auth.secrets() ?? [],
		dispose: () => holder.made?.auth.dispose(),
	};
	return {
		auth,
		disposeAuth: async () => {
			await holder.promise?.catch(() => undefined);
			holder.made?.auth.dispose();
			await holder.made?.dispose();
		},
	};
}

/** What installMcp's handlers share: Pi, the options, and the one mutable cell holding the current
 * session (its records are replaced whole; re-read after every `await`). */
type Host = Readonly<{
	pi: ExtensionAPI;
	options: InstallMcpOptions;
	holder: {
		session?: Open;
		loading?: Promise<void>;
		ctx?: ExtensionContext;
	};
}>;

const envOf = (host: Host) => host.options.env ?? process.env;

async function readConfig(
	host: Host,
	ctx: ExtensionContext,
	extensionServers: readonly ExtensionServer[],
): Promise<ConfigSnapshot> {
	return loadConfig({
		agentDir: host.options.agentDir ?? getAgentDir(),
		cwd: ctx.cwd,
		trusted: typeof ctx.isProjectTrusted === "function" ? ctx.isProjectTrusted() : false,
		env: envOf(host),
		extensionServers,
		configDirName: CONFIG_DIR_NAME,
	});
}

async function endSession(host: Host): Promise<void> {
	const open = host.holder.session;
	host.holder.session = undefined;
	await open?.runtime?.dispose();
	await Promise.all([open?.overflow?.dispose(), open?.owned.disposeAuth()]);
}

/** The current session with its runtime (created here on first use, from the current configuration). */
async function live(host: Host): Promise<Readonly<{ session: Session & Owned; mods: Modules }>> {
	const mods = await loadModules();
	const current = host.holder.session;
	if (!current) throw new Error("MCP is not available: the session has not started");
	const runtime =
		current.runtime ??
		mods.runtime.createRuntime({
			servers: current.config.servers,
			env: envOf(host),
			clientInfo: { name: "pi-mcp", version: VERSION },
			auth: current.owned.auth,
		});
	const overflow = current.overflow ?? mods.output.createOverflowStore({ baseDir: host.options.overflowDir });
	if (runtime !== current.runtime || overflow !== current.overflow) host.holder.session = { ...current, runtime, overflow };
	return { session: { config: current.config, runtime, overflow, ...current.owned }, mods };
}

/** A sign-in finished: tell the user, and the agent with a message that lets it continue. */
function signedIn(host: Host, server: string, message: string, ok: boolean): void {
	const ctx = host.holder.ctx;
	if (ctx?.hasUI) ctx.ui.notify(message, ok ? "info" : "error");
	try {
		host.pi.sendMessage(
			{ customType: "pi-mcp", content: message, display: true, details: { server, ok } },
			{ triggerTurn: true, deliverAs: "followUp" },
		);
	} catch {
		// The session may be gone (shutdown while a sign-in completed); the user was notified.
	}
}

function newSession(host: Host, config: ConfigSnapshot): Open {
	const { options } = host;
	const owned = lazyAuth(async () => {
		const [{ createAuth }, { createLoginService }, { keyringStore }] = await Promise.all([
			import("./auth.ts"),
			import("./login/receiver.ts"),
			import("./auth/keyring.ts"),
		]);
		const login = createLoginService({ now: options.now });
		const auth = createAuth({
			env: envOf(host),
			store: options.secrets ?? keyringStore(),
			login,
			now: options.now,
			// Shared by every Pi process using the same keyring records: one refresh at a time per record.
			lockDir: join(options.agentDir ?? getAgentDir(), "mcp-locks"),
			notify: (server, message, ok) => signedIn(host, server, message, ok),
		});
		return { auth, dispose: () => login.dispose() };
	});
	return { config, owned };
}

/** Server names and states for argument completion; without a runtime yet, from the configuration. */
function serverStates(host: Host): readonly Readonly<{ name: string; state: string }>[] {
	const open = host.holder.session;
	if (open?.runtime) return open.runtime.status();
	return (open?.config.servers ?? []).map((entry) => ({
		name: entry.name,
		state: entry.error !== undefined ? "invalid" : entry.enabled ? "idle" : "disabled",
	}));
}

/** `/mcp` argument completion: subcommands, then server names. */
function completions(host: Host, prefix: string) {
	if (/^(prompt|attach) \S+ /.test(prefix)) return import("./manager/prompt.ts").then((m) => m.menu(() => live(host), prefix));
	const [action = "", server, ...rest] = prefix.trimStart().split(/\s+/);
	if (rest.length > 0) return null;
	// Pi's editor submits on Enter only from the command-name menu; in an argument menu Enter just
	// applies the completion. So a complete command (a subcommand, or one with a known server)
	// gets no menu, and Enter runs it at once.
	if (server === undefined) {
		if (SUBCOMMANDS.includes(action)) return null;
		const items = SUBCOMMANDS.filter((item) => item.startsWith(action)).map((item) => ({ value: `${item} `, label: item }));
		return items.length > 0 ? items : null;
	}
	if (!SUBCOMMANDS.includes(action) || action === "status") return null;
	if (serverStates(host).some((status) => status.name === server)) return null;
	const items = serverStates(host)
		.filter((status) => status.name.startsWith(server))
		.map((status) => ({
			value: `${action} ${escapeName(status.name)}`,
			label: escapeName(status.name),
			description: status.state,
		}));
	return items.length > 0 ? items : null;
}

/** The `mcp` tool's `execute`: the action, with a sign-in link as a result the model reads (not a crash). */
function execute(host: Host, early: ReturnType<typeof earlyStart>): ToolDefinition<typeof parameters, McpDetails>["execute"] {
	return async (id, params, signal, onUpdate, ctx) => {
		const written = early.take(id, params.server);
		await host.holder.loading?.catch(() => undefined);
		const { session, mods } = await live(host);
		try {
			return await mods.actions.runAction(session, params, signal, onUpdate, written, ctx);
		} catch (error) {
			if (!(error instanceof mods.errors.AuthRequired)) throw error;
			const text = `authorization_required: ${error.message}`;
			return {
				content: [{ type: "text", text }],
				details: { action: params.action, server: params.server, tool: params.tool, error: "authorization required" },
				isError: true,
			};
		}
	};
}

/** `/mcp`: the manager for a bare `/mcp` in the TUI, else the subcommand (each module loads only now). */
async function command(host: Host, args: string, ctx: ExtensionCommandContext): Promise<void> {
	await host.holder.loading;
	const opened = host.holder.session ? await live(host) : undefined;
	if (args.trim() === "" && ctx.mode === "tui" && opened) {
		const { openManager } = await import("./manager/manager.ts");
		return openManager(ctx, opened.session, { ...managerEdits(host, ctx), conversation: host.pi });
	}
	const { runCommand } = await import("./manager/command.ts");
	await runCommand(args, ctx, opened?.session, host.pi);
}

/** The manager's Enable/Disable: the shell command's edit of mcp.json, then the files applied as a change is. */
function managerEdits(host: Host, ctx: ExtensionContext): ManagerOptions {
	const { options, pi } = host;
	const place = { agentDir: options.agentDir ?? getAgentDir(), cwd: ctx.cwd, env: envOf(host), configDirName: CONFIG_DIR_NAME };
	return {
		setEnabled: async (...args) => (await import("./config/edit.ts")).setEnabled(place, ...args),
		reload: async () => {
			await changeServers(host, typeof pi.getMcpServers === "function" ? pi.getMcpServers() : [], ctx);
			return host.holder.session?.config;
		},
	};
}

/** `session_start`: ends the previous session and reads the configuration (nothing connects). */
async function startSession(host: Host, ctx: ExtensionContext): Promise<void> {
	const { pi, holder } = host;
	holder.ctx = ctx;
	const loading = (async () => {
		await endSession(host);
		const config = await readConfig(host, ctx, typeof pi.getMcpServers === "function" ? pi.getMcpServers() : []);
		holder.session = newSession(host, config);
		const problems = config.servers.filter((server) => server.error).length + config.files.filter((file) => file.error).length;
		if (problems > 0 && ctx.hasUI) {
			ctx.ui.notify(`pi-mcp: ${problems} configuration problem${problems === 1 ? "" : "s"}; see /mcp status`, "warning");
		}
	})();
	holder.loading = loading;
	await loading;
}

/** `mcp_servers_change`: chained on `loading`, so that `/mcp` and the tool see the new servers once applied. */
async function changeServers(host: Host, servers: readonly ExtensionServer[], ctx: ExtensionContext): Promise<void> {
	const { holder } = host;
	const previous = holder.loading;
	const loading = (async () => {
		await previous?.catch(() => undefined);
		const owned = holder.session?.owned;
		if (!owned) return;
		const config = await readConfig(host, ctx, servers);
		// Without a runtime yet, the new configuration is what it will be created from.
		const runtime = holder.session?.owned === owned ? holder.session.runtime : undefined;
		await runtime?.update(config.servers);
		const current = holder.session;
		if (current?.owned === owned) holder.session = { ...current, config };
	})();
	holder.loading = loading;
	await loading;
}

type EarlyStart = ReturnType<typeof createEarlyStart>;

/** Whether a `message_update` is about a call of the `mcp` tool (its start, a delta or its end). */
function mcpCall(event: MessageUpdateEvent): boolean {
	const update = event.assistantMessageEvent;
	if (update.type !== "toolcall_start" && update.type !== "toolcall_delta" && update.type !== "toolcall_end") return false;
	const block = update.type === "toolcall_end" ? update.toolCall : update.partial.content[update.contentIndex];
	return block?.type === "toolCall" && block.name === "mcp";
}

/** The early start (`tool/early.ts`), loaded at the model's first `mcp` call, not with Pi (bench figure 1). What
 * happens while it loads is replayed in order; a call running before then gets no head start. */
function earlyStart(host: Host): Pick<EarlyStart, "update" | "take" | "ended" | "sweep"> {
	const state: { real?: EarlyStart; queue?: ((real: EarlyStart) => void)[] } = {};
	const later = (op: (real: EarlyStart) => void): unknown => (state.real ? op(state.real) : state.queue?.push(op));
	// A failed load is the call's to report.
	const preload = () =>
		void loadModules()
			.then((mods) => mods.sdk.loadSdk())
			.catch(() => undefined);
	const load = () => {
		preload(); // The SDK's load begins with the call, not after the early start's own.
		state.queue = [];
		import("./tool/early.ts").then(
			({ createEarlyStart }) => {
				const real = createEarlyStart({
					pi: host.pi,
					loaded: async () => host.holder.loading?.catch(() => undefined),
					entries: () => host.holder.session?.config.servers ?? [],
					runtime: () => host.holder.session?.runtime,
					live: async (): Promise<Readonly<{ session: Session; mods: EarlyModules }>> => live(host),
					preload,
				});
				for (const op of state.queue ?? []) op(real);
				state.real = real;
				state.queue = undefined;
			},
			() => Object.assign(state, { queue: undefined }), // The call itself reports a damaged installation.
		);
	};
	return {
		update(event) {
			if (!state.real && !state.queue && mcpCall(event)) load();
			later((real) => real.update(event));
		},
		// Before it has loaded, the call runs without early work; the take is replayed so nothing waits for it.
		take: (id, server) => (state.real ? state.real.take(id, server) : void later((real) => real.take(id, server))),
		ended: (id, result) => void later((real) => real.ended(id, result)),
		sweep: () => void later((real) => real.sweep()),
	};
}

export function installMcp(pi: ExtensionAPI, options: InstallMcpOptions = {}): void {
	const host: Host = { pi, options, holder: {} };
	const early = earlyStart(host);
	pi.registerTool<typeof parameters, McpDetails>({
		name: "mcp",
		label: "MCP",
		description: DESCRIPTION,
		promptSnippet: PROMPT_SNIPPET,
		parameters,
		execute: execute(host, early),
		renderCall: (args, theme) => renderCall(args, theme),
		renderResult: (result, options, theme, context) => renderResult(result, options, theme, context.isError),
	});
	pi.registerCommand("mcp", {
		description: "MCP servers: status, tools, reconnect, login, logout, prompt, attach",
		getArgumentCompletions: (prefix) => completions(host, prefix),
		handler: (args, ctx) => command(host, args, ctx),
	});
	pi.on("session_start", (_event, ctx) => startSession(host, ctx));
	pi.on("mcp_servers_change", (event, ctx) => changeServers(host, event.servers, ctx));
	pi.on("message_update", (event) => early.update(event));
	pi.on("tool_execution_end", (event) => early.ended(event.toolCallId, event.result));
	pi.on("turn_end", () => early.sweep());
	pi.on("agent_end", () => early.sweep());
	pi.on("session_shutdown", async () => {
		await host.holder.loading?.catch(() => undefined);
		await endSession(host);
	});
}

export default function (pi: ExtensionAPI): void {
	installMcp(pi);
}
