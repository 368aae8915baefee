/**
 * The `/mcp` manager in Pi's interactive TUI, built from pi-tui components: servers with state,
 * protocol, tool count and source; per server its tools (searchable, schema on pick), reconnect,
 * login (the link), logout (asks first), stderr tail and last error. Escape goes back, and closes
 * from the server list. States update while it is open. Loaded only when opened.
 */
import { DynamicBorder, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import { type SelectItem, truncateToWidth } from "@earendil-works/pi-tui";
import { oauthConfig } from "../config.ts";
import type { CommandSession, ServerStatus } from "../contracts.ts";
import { escapeName, oneLine, sanitize } from "../output/text.ts";
import type { ServerConfig } from "../schema.ts";
import { matchingTools } from "../tool/listing.ts";
import { credentialStates } from "../tool/status.ts";
import { list, type Screen, textScreen, toolsScreen, type Ui } from "./screens.ts";

/** How often the open manager re-reads the in-memory states, and the keyring for credential states. */
const TICK_MS = 250;
const CREDENTIALS_EVERY = 8;

function statusOf(ui: Ui, name: string): ServerStatus | undefined {
	return ui.session.runtime.status().find((status) => status.name === name);
}

/** The state to show: an idle or failed OAuth server without a usable sign-in needs sign-in. */
function stateOf(status: ServerStatus, credential: string | undefined): string {
	const signIn = credential !== undefined && /^(not signed in|sign-in expired)/.test(credential);
	return signIn && (status.state === "idle" || status.state === "failed") ? "needs sign-in" : status.state;
}

function facts(status: ServerStatus, credential?: string): string {
	return [
		stateOf(status, credential),
		status.transport,
		status.protocolVersion ? `protocol ${status.protocolVersion}` : undefined,
		status.toolCount !== undefined ? `${status.toolCount} tool${status.toolCount === 1 ? "" : "s"}` : undefined,
	]
		.filter(Boolean)
		.join(" · ");
}

function stateColor(state: string): "success" | "error" | "warning" | "muted" {
	if (state === "ready") return "success";
	if (state === "failed" || state === "invalid") return "error";
	if (state === "connecting" || state === "needs sign-in") return "warning";
	return "muted";
}

function confirmLogout(ui: Ui, config: ServerConfig): Screen {
	const items = [
		{ value: "no", label: "No, keep the sign-in" },
		{ value: "yes", label: "Yes, sign out", description: "deletes the stored record from the OS keyring" },
	];
	const select = list(ui, items, (item) => {
		ui.back();
		if (item.value !== "yes") return;
		ui.session.auth
			.logout(config)
			.then(async (existed) => {
				await ui.session.runtime.reset(config.name);
				return existed ? `Signed out of "${config.name}".` : `"${config.name}" had no stored sign-in.`;
			})
			.catch((error: Error) => sanitize(error.message))
			.then((message) => show(ui, message, true));
	});
	return {
		header: () => [ui.theme.fg("warning", ui.theme.bold(`Sign out of MCP server "${config.name}"?`))],
		hint: "↑↓ navigate · enter choose · esc cancel",
		body: () => select,
		input: (data) => select.handleInput(data),
	};
}

/** A one-line result under the server's header; credential states are re-read when `credentials`. */
function show(ui: Ui, message: string, credentials = false): void {
	ui.view.message = message;
	if (credentials) refreshCredentials(ui);
	ui.tui.requestRender();
}

function serverScreen(ui: Ui, name: string): Screen {
	const { theme, session } = ui;
	const found = oauthConfig(ui.session.config, name);
	const oauth = typeof found === "string" ? undefined : found;
	const actions: SelectItem[] = [
		{ value: "tools", label: "Tools", description: "list, search, pick one to see its schema" },
		{ value: "reconnect", label: "Reconnect", description: "close and connect again (clears a failure)" },
		...(oauth
			? [
					{ value: "login", label: "Log in", description: "a sign-in link; the state updates here when done" },
					{ value: "logout", label: "Log out", description: "delete the stored sign-in (asks first)" },
				]
			: []),
		{ value: "stderr", label: "Stderr tail", description: "the server's last stderr lines" },
		{ value: "error", label: "Last error", description: "the full last error" },
	];
	const login = (config: ServerConfig): void => {
		const link = { text: "creating a sign-in link…" };
		session.auth.login(config).then(
			(required) => {
				link.text = required.message;
				refreshCredentials(ui);
			},
			(error: Error) => {
				link.text = sanitize(error.message);
				ui.tui.requestRender();
			},
		);
		const credential = () => ui.view.credentials.get(name) ?? "";
		ui.push(textScreen(ui, `${name}: sign in`, () => `${link.text}\n\nCredentials: ${credential()}`));
	};
	const reconnect = (): void => {
		show(ui, `Reconnecting ${name}…`);
		session.runtime
			.reset(name)
			.then(() => session.runtime.connect(name))
			.then(
				(after) =>
					show(
						ui,
						after.state === "ready" ? `Reconnected: ${facts(after)}` : `Reconnect failed (${after.state}); see Last error`,
					),
				(error: Error) => show(ui, sanitize(error.message)),
			);
	};
	const handlers: Readonly<Record<string, () => void>> = {
		tools: () => ui.push(toolsScreen(ui, name)),
		reconnect,
		login: () => oauth && login(oauth),
		logout: () => oauth && ui.push(confirmLogout(ui, oauth)),
		stderr: () =>
			ui.push(textScreen(ui, `${escapeName(name)}: stderr`, () => statusOf(ui, name)?.stderrTail || "(nothing on stderr)")),
		error: () => ui.push(textScreen(ui, `${escapeName(name)}: last error`, () => statusOf(ui, name)?.error ?? "(no error)")),
	};
	const run = (item: SelectItem): void => handlers[item.value]?.();
	const select = list(ui, actions, run);
	return {
		header: () => {
			const status = statusOf(ui, name);
			if (!status) return [theme.fg("error", `${escapeName(name)}: no longer configured`)];
			const credential = ui.view.credentials.get(name);
			const source = status.source.kind === "extension" ? `extension ${status.source.path}` : status.source.path;
			return [
				`${theme.fg("accent", theme.bold(escapeName(name)))}  ${theme.fg(stateColor(stateOf(status, credential)), facts(status, credential))}`,
				...(status.description ? [theme.fg("muted", oneLine(status.description, 200))] : []),
				theme.fg("muted", `source: ${source}`),
				...(credential ? [theme.fg("muted", `credentials: ${credential}`)] : []),
				...(status.error ? [theme.fg("error", `error: ${status.error.split("\n")[0]}`)] : []),
				...(ui.view.message ? [theme.fg("warning", ui.view.message)] : []),
			];
		},
		hint: "↑↓ navigate · enter choose · esc back",
		body: () => select,
		input: (data) => select.handleInput(data),
	};
}

function serversScreen(ui: Ui): Screen {
	const { theme } = ui;
	const items = (): SelectItem[] =>
		ui.session.runtime.status().map((status) => ({
			value: status.name,
			label: escapeName(status.name),
			description: `${facts(status, ui.view.credentials.get(status.name))} — ${status.source.kind === "extension" ? "extension" : status.source.path}`,
		}));
	const open = (item: SelectItem) => {
		ui.view.message = undefined;
		ui.push(serverScreen(ui, item.value));
	};
	const holder = { select: list(ui, items(), open) };
	return {
		header: () => [
			theme.fg("accent", theme.bold("MCP servers (pi-mcp)")),
			...(holder.select.getSelectedItem()
				? []
				: [theme.fg("muted", "No servers configured: add them to mcp.json (see /mcp status).")]),
		],
		hint: "↑↓ navigate · enter open · esc close",
		body: () => holder.select,
		input: (data) => holder.select.handleInput(data),
		changed: () => {
			const selected = holder.select.getSelectedItem()?.value;
			const next = items();
			holder.select = list(
				ui,
				next,
				open,
				Math.max(
					0,
					next.findIndex((item) => item.value === selected),
				),
			);
		},
	};
}

function refreshCredentials(ui: Ui): void {
	credentialStates(ui.session.config, ui.session.auth).then((next) => {
		if ([...next].some(([name, state]) => ui.view.credentials.get(name) !== state)) {
			ui.view.credentials = next;
			for (const screen of ui.view.stack) screen.changed?.();
			ui.tui.requestRender();
		}
	});
}

/** Opens the manager; resolves when it is closed. */
export async function openManager(ctx: ExtensionContext, session: CommandSession): Promise<void> {
	await ctx.ui.custom<void>((tui, theme, kb, done) => {
		const border = new DynamicBorder((text: string) => theme.fg("accent", text));
		const view: Ui["view"] = { stack: [], credentials: new Map() };
		const ticker: { timer?: NodeJS.Timeout; signature: string; ticks: number } = { signature: "", ticks: 0 };
		const close = () => {
			clearInterval(ticker.timer);
			done(undefined);
		};
		const ui: Ui = {
			tui,
			theme,
			kb,
			session,
			matchingTools: (server, query) => matchingTools(session, server, query),
			view,
			push: (screen) => {
				view.stack = [...view.stack, screen];
				tui.requestRender();
			},
			back: () => {
				view.stack = view.stack.slice(0, -1);
				if (view.stack.length === 0) return close();
				tui.requestRender();
			},
		};
		ui.push(serversScreen(ui));
		refreshCredentials(ui);
		// Live states: the runtime's records are in memory, so a tick costs a comparison; credential
		// states come from the keyring, read less often.
		ticker.timer = setInterval(() => {
			ticker.ticks += 1;
			if (ticker.ticks % CREDENTIALS_EVERY === 0) refreshCredentials(ui);
			const signature = JSON.stringify(session.runtime.status());
			if (signature === ticker.signature) return;
			ticker.signature = signature;
			for (const screen of view.stack) screen.changed?.();
			tui.requestRender();
		}, TICK_MS);
		ticker.timer.unref();
		const current = () => view.stack[view.stack.length - 1];
		return {
			render: (width: number) => {
				const screen = current();
				if (!screen) return [];
				const header = screen.header().map((line) => truncateToWidth(` ${line}`, width));
				return [
					...border.render(width),
					...header,
					"",
					...screen.body().render(width),
					"",
					truncateToWidth(theme.fg("dim", ` ${screen.hint}`), width),
					...border.render(width),
				];
			},
			invalidate: () => current()?.body().invalidate(),
			handleInput: (data: string) => {
				current()?.input(data);
				tui.requestRender();
			},
		};
	});
}
