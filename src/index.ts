/**
 * Pi registration: the `/mcp` command, the `mcp` tool and the session lifecycle. The factory only
 * registers (no I/O: no files, processes, sockets or timers); `session_start` reads configuration;
 * servers connect lazily on first use; `session_shutdown` tears everything down.
 */
import { join } from "node:path";
import { CONFIG_DIR_NAME, type ExtensionAPI, type ExtensionContext, getAgentDir } from "@earendil-works/pi-coding-agent";
import type { Result, Session } from "./actions.ts";
import type { Auth } from "./auth.ts";
import { type ConfigSnapshot, type ExtensionServer, loadConfig, type ServerConfig, unknownServer } from "./config.ts";
import { createOverflowStore, escapeName, type OverflowStore } from "./output.ts";
import { type McpArgs, renderCall, renderResult } from "./render.ts";
import type { Runtime } from "./runtime.ts";
import type { SecretStore } from "./store.ts";
import { DESCRIPTION, type Params, PROMPT_SNIPPET, parameters, streamedServer } from "./tool.ts";

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

/** What a session owns besides the shared parts in `actions.ts`. */
type Owned = Readonly<{ auth: Auth; disposeAuth: () => Promise<void> }>;

/** The modules behind the tool and the command, loaded on first use: starting Pi loads only the
 * registration, the configuration and the renderer (bench figure 1 counts every module). */
type Modules = Readonly<{
	actions: typeof import("./actions.ts");
	runtime: typeof import("./runtime.ts");
	errors: typeof import("./errors.ts");
	sdk: typeof import("./sdk.ts");
}>;

const modules: { promise?: Promise<Modules> } = {};

function loadModules(): Promise<Modules> {
	modules.promise ??= Promise.all([
		import("./actions.ts"),
		import("./runtime.ts"),
		import("./errors.ts"),
		import("./sdk.ts"),
	]).then(([actions, runtime, errors, sdk]) => ({ actions, runtime, errors, sdk }));
	return modules.promise;
}

/** A session from `session_start` to shutdown: its configuration (replaced when Pi's MCP servers
 * change) and credentials; the runtime and the overflow store are created on first use. */
type Open = { config: ConfigSnapshot; readonly owned: Owned; runtime?: Runtime; overflow?: OverflowStore };

/**
 * The auth modules (and `node:http` for the loopback receiver, the keyring binding) load only when a
 * server needs credentials: a session without OAuth or bearer servers never pays for them.
 */
function lazyAuth(make: () => Promise<{ auth: Auth; dispose: () => Promise<void> }>): Owned {
	const holder: { made?: { auth: Auth; dispose: () => Promise<void> }; promise?: Promise<Auth> } = {};
	const get = (): Promise<Auth> => {
		holder.promise ??= make().then((made) => {
			holder.made = made;
			return made.auth;
		});
		return holder.promise;
	};
	const auth: Auth = {
		prepare: async (config) => (await get()).prepare(config),
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

export function installMcp(pi: ExtensionAPI, options: InstallMcpOptions = {}): void {
	const holder: { session?: Open; loading?: Promise<void>; ctx?: ExtensionContext; startedFor?: string } = {};
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
		const open = holder.session;
		holder.session = undefined;
		await open?.runtime?.dispose();
		await Promise.all([open?.overflow?.dispose(), open?.owned.disposeAuth()]);
	}

	/** The current session with its runtime (created here on first use, from the current configuration). */
	async function live(): Promise<Readonly<{ session: Session & Owned; mods: Modules }>> {
		const mods = await loadModules();
		const open = holder.session;
		if (!open) throw new Error("MCP is not available: the session has not started");
		open.runtime ??= mods.runtime.createRuntime({
			servers: open.config.servers,
			env: env(),
			clientInfo: { name: "pi-mcp", version: VERSION },
			auth: open.owned.auth,
		});
		open.overflow ??= createOverflowStore({ baseDir: options.overflowDir });
		return { session: { config: open.config, runtime: open.runtime, overflow: open.overflow, ...open.owned }, mods };
	}

	/** Starts a server's shared setup while the model still writes the call that names it (see `message_update`). */
	async function startEarly(name: string, tools: boolean): Promise<void> {
		await holder.loading?.catch(() => undefined);
		const entry = holder.session?.config.servers.find((server) => server.name === name);
		if (!entry?.enabled || !entry.config) return;
		(await live()).session.runtime.start(name, { tools });
	}

	/** A sign-in finished: tell the user, and the agent with a message that lets it continue. */
	function signedIn(server: string, message: string, ok: boolean): void {
		const ctx = holder.ctx;
		if (ctx?.hasUI) ctx.ui.notify(message, ok ? "info" : "error");
		try {
			pi.sendMessage(
				{ customType: "pi-mcp", content: message, display: true, details: { server, ok } },
				{ triggerTurn: true, deliverAs: "followUp" },
			);
		} catch {
			// The session may be gone (shutdown while a sign-in completed); the user was notified.
		}
	}

	function newSession(config: ConfigSnapshot): Open {
		const owned = lazyAuth(async () => {
			const [{ createAuth }, { createLoginService }, { keyringStore }] = await Promise.all([
				import("./auth.ts"),
				import("./login.ts"),
				import("./store.ts"),
			]);
			const login = createLoginService({ now: options.now });
			const auth = createAuth({
				env: env(),
				store: options.secrets ?? keyringStore(),
				login,
				now: options.now,
				// Shared by every Pi process using the same keyring records: one refresh at a time per record.
				lockDir: join(options.agentDir ?? getAgentDir(), "mcp-locks"),
				notify: signedIn,
			});
			return { auth, dispose: () => login.dispose() };
		});
		return { config, owned };
	}

	/** Server names and states for argument completion; without a runtime yet, from the configuration. */
	function serverStates(): readonly Readonly<{ name: string; state: string }>[] {
		const open = holder.session;
		if (open?.runtime) return open.runtime.status();
		return (open?.config.servers ?? []).map((entry) => ({
			name: entry.name,
			state: entry.error !== undefined ? "invalid" : entry.enabled ? "idle" : "disabled",
		}));
	}

	function reportSignIn(ctx: ExtensionContext, name: string, outcome: "completed" | "failed"): void {
		const ok = outcome === "completed";
		report(ctx, ok ? `Signed in to MCP server "${name}".` : `Sign-in to MCP server "${name}" failed.`, ok ? "info" : "error");
	}

	/** The resolved config of a server that uses OAuth, or a message saying why it cannot sign in. */
	function oauthConfig(session: Readonly<{ config: ConfigSnapshot }>, name: string): ServerConfig | string {
		const entry = session.config.servers.find((server) => server.name === name);
		if (!entry) return `unknown MCP server "${name}"`;
		if (!entry.config) return entry.error ?? `server "${name}" has no usable configuration`;
		if (entry.config.auth !== "oauth") return `MCP server "${name}" does not use OAuth sign-in`;
		return entry.config;
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
		promptSnippet: PROMPT_SNIPPET,
		parameters,
		async execute(_id, params, signal, onUpdate) {
			await holder.loading?.catch(() => undefined);
			const { session, mods } = await live();
			try {
				return await mods.actions.runAction(session, params as Params, signal, onUpdate);
			} catch (error) {
				if (!(error instanceof mods.errors.AuthRequired)) throw error;
				// Sign-in needed: one link and what to do, as a result the model reads (not a crash).
				const text = `authorization_required: ${error.message}`;
				return {
					content: [{ type: "text", text }],
					details: { action: params.action, server: params.server, tool: params.tool, error: "authorization required" },
					isError: true,
				};
			}
		},
		renderCall: (args, theme) => renderCall(args as McpArgs, theme),
		renderResult: (result, options, theme, context) => renderResult(result as Result, options, theme, context.isError),
	});

	const SUBCOMMANDS = ["status", "tools", "reconnect", "login", "logout"];
	const USAGE =
		"Usage: /mcp [status] | /mcp tools <server> | /mcp reconnect <server> | /mcp login <server> [redirected-url] | /mcp logout <server>";

	pi.registerCommand("mcp", {
		description: "MCP servers: status, tools, reconnect, login, logout",
		getArgumentCompletions: (prefix) => {
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
			if (serverStates().some((status) => status.name === server)) return null;
			const items = serverStates()
				.filter((status) => status.name.startsWith(server))
				.map((status) => ({
					value: `${action} ${escapeName(status.name)}`,
					label: escapeName(status.name),
					description: status.state,
				}));
			return items.length > 0 ? items : null;
		},
		handler: async (args, ctx) => {
			const [action = "status", name, ...extra] = args.trim().split(/\s+/).filter(Boolean);
			await holder.loading;
			const opened = holder.session ? await live() : undefined;
			const session = opened?.session;
			if (args.trim() === "" && ctx.mode === "tui" && opened) {
				// The interactive manager; its module loads only now (start-up stays lean).
				const { openManager } = await import("./manager.ts");
				return openManager(ctx, opened.session);
			}
			if (action === "status" && name === undefined) {
				return report(
					ctx,
					opened
						? opened.mods.actions.userStatus(
								session,
								await opened.mods.actions.credentialStates(opened.session.config, opened.session.auth),
							)
						: "pi-mcp: no session yet.",
				);
			}
			const allowed = action === "login" ? extra.length <= 1 : extra.length === 0;
			if (!SUBCOMMANDS.includes(action) || !allowed || name === undefined || action === "status") {
				return report(ctx, USAGE, "warning");
			}
			if (!opened || !session) return report(ctx, "pi-mcp: no session yet.", "warning");
			const unknown = unknownServer(session.config, name);
			if (unknown !== undefined) return report(ctx, unknown, "error");
			const { statusLine } = opened.mods.actions;
			try {
				if (action === "tools") {
					const tools = await session.runtime.tools(name, ctx.signal);
					return report(ctx, await opened.mods.actions.userToolList(session, name, tools));
				}
				if (action === "login" || action === "logout") {
					const config = oauthConfig(session, name);
					if (typeof config === "string") return report(ctx, config, "error");
					if (action === "logout") {
						if (
							ctx.mode === "tui" &&
							!(await ctx.ui.confirm("Sign out", `Delete the stored sign-in for MCP server "${name}"?`))
						) {
							return report(ctx, "Sign-out cancelled.");
						}
						const existed = await session.auth.logout(config);
						await session.runtime.reset(name);
						return report(ctx, existed ? `Signed out of MCP server "${name}".` : `MCP server "${name}" had no stored sign-in.`);
					}
					const pasted = extra[0];
					if (pasted !== undefined) {
						const outcome = await session.auth.complete(config, pasted);
						return reportSignIn(ctx, name, outcome);
					}
					const link = await session.auth.login(config);
					report(ctx, link.message);
					if (ctx.mode !== "tui") return;
					// Paste fallback in the TUI: the loopback receiver keeps waiting whatever is answered here.
					const answer = await ctx.ui.input(
						`Signing in to ${name}`,
						"If the browser runs on another machine, paste the address it ended on; Esc to wait for the browser",
					);
					if (!answer?.trim()) return;
					const outcome = await session.auth.complete(config, answer.trim());
					return reportSignIn(ctx, name, outcome);
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
		holder.ctx = ctx;
		const loading = (async () => {
			await endSession();
			const config = await readConfig(ctx, registeredServers());
			holder.session = newSession(config);
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
			const open = holder.session;
			if (!open) return;
			const config = await readConfig(ctx, event.servers);
			// Without a runtime yet, the new configuration is what it will be created from.
			if (open.runtime) await open.runtime.update(config.servers);
			open.config = config;
		})();
		holder.loading = loading;
		await loading;
	});

	// While the model is still writing an `mcp` call, load what the call will need: the modules behind
	// the tool and the MCP SDK (100–150 ms inside Pi), and, once the streamed arguments name an action
	// that connects and an enabled server, that server's shared setup (the call joins it). A real model
	// streams the rest of the call for longer than a local server takes to start. Nothing loads unless
	// the model calls the tool (start-up stays lean), and nothing else connects early.
	pi.on("message_update", (event) => {
		const update = event.assistantMessageEvent;
		if (update.type !== "toolcall_start" && update.type !== "toolcall_delta" && update.type !== "toolcall_end") return;
		const block = update.type === "toolcall_end" ? update.toolCall : update.partial.content[update.contentIndex];
		if (block?.type !== "toolCall" || block.name !== "mcp") return;
		if (!holder.session?.config.servers.some((entry) => entry.enabled && entry.config)) return;
		if (update.type === "toolcall_start") {
			loadModules()
				.then((mods) => mods.sdk.loadSdk())
				.catch(() => undefined); // The call itself reports a failed load.
			return;
		}
		const named = holder.startedFor === block.id ? undefined : streamedServer(block.arguments, update.type === "toolcall_end");
		if (!named) return;
		holder.startedFor = block.id;
		startEarly(named.server, named.action === "call" || named.action === "describe").catch(() => undefined);
	});

	pi.on("session_shutdown", async () => {
		await holder.loading?.catch(() => undefined);
		await endSession();
	});
}

export default function (pi: ExtensionAPI): void {
	installMcp(pi);
}
