/**
 * One server in the `/mcp` manager: its state and facts, and its actions, named for what they do
 * (Connect for an idle server, Reconnect for one that connected or failed; Enable or Disable, which
 * edit the file that defines it with the shell command's own edit and apply it to this session), sign
 * in and out, the stderr tail and the last error. Advice in messages points at these items rather
 * than at the `/mcp` subcommands.
 */
import { oauthConfig } from "../config.ts";
import type { ServerStatus } from "../contracts.ts";
import { escapeName, oneLine, sanitize } from "../output/text.ts";
import type { ServerConfig } from "../schema.ts";
import { type Choice, choiceRows, list, type Screen, textScreen, toolsScreen, type Ui } from "./screens.ts";

export function statusOf(ui: Ui, name: string): ServerStatus | undefined {
	return ui.session.runtime.status().find((status) => status.name === name);
}

/** The state to show: an idle or failed OAuth server without a usable sign-in needs sign-in. */
export function stateOf(status: ServerStatus, credential: string | undefined): string {
	const signIn = credential !== undefined && /^(not signed in|sign-in expired)/.test(credential);
	return signIn && (status.state === "idle" || status.state === "failed") ? "needs sign-in" : status.state;
}

/** The facts after the state: transport, protocol, tool count. */
export function facts(status: ServerStatus): string {
	return [
		status.transport,
		status.protocolVersion ? `protocol ${status.protocolVersion}` : undefined,
		status.toolCount !== undefined ? `${status.toolCount} tool${status.toolCount === 1 ? "" : "s"}` : undefined,
	]
		.filter(Boolean)
		.join(" · ");
}

export function stateColor(state: string): "success" | "error" | "warning" | "muted" | "dim" {
	if (state === "ready") return "success";
	if (state === "failed" || state === "invalid") return "error";
	if (state === "connecting" || state === "needs sign-in") return "warning";
	return state === "disabled" ? "dim" : "muted";
}

/** The runtime's and sign-in's advice ("run /mcp reconnect x") pointed at the manager's items. */
export function forManager(text: string): string {
	const capital = (word: string, like: string) => (like === "R" ? word[0]?.toUpperCase() + word.slice(1) : word);
	return text
		.replace(/\b([Rr])un \/mcp reconnect \S+?(?=[.,;]?(\s|$))/g, (_all, r: string) => capital("press Enter on Reconnect", r))
		.replace(/\b([Rr])un \/mcp login \S+?(?=[.,;]?(\s|$))/g, (_all, r: string) => capital("press Enter on Log in", r));
}

function oauthOf(ui: Ui, name: string): ServerConfig | undefined {
	const config = oauthConfig(ui.view.config, name);
	return typeof config === "string" ? undefined : config;
}

/** A one-line result under the server's header; credential states are re-read when `credentials`. */
export function show(ui: Ui, message: string, credentials = false): void {
	ui.view.message = message;
	if (credentials) ui.refreshCredentials();
	ui.tui.requestRender();
}

function confirmLogout(ui: Ui, config: ServerConfig): Screen {
	const choices = [
		{ value: "no", label: "No, keep the sign-in" },
		{ value: "yes", label: "Yes, sign out", description: "deletes the stored record from the OS keyring" },
	];
	const select = list(ui, choiceRows(ui, choices), (row) => {
		ui.back();
		if (row.value !== "yes") return;
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
		body: (width, rows) => select.render(width, rows),
		input: (data) => select.handleInput(data),
	};
}

/** The actions for the server's current state. */
function actions(ui: Ui, name: string): Choice[] {
	const status = statusOf(ui, name);
	const state = status?.state;
	const usable = state !== "disabled" && state !== "invalid" && state !== undefined;
	const connect: Choice[] = !usable
		? []
		: state === "idle"
			? [{ value: "connect", label: "Connect", description: "start it and list its tools now" }]
			: [{ value: "connect", label: "Reconnect", description: "close and connect again (clears a failure)" }];
	// An invalid entry is fixed in its file; a server an extension registered is that extension's.
	const editable = status !== undefined && state !== "invalid" && status.source.kind !== "extension";
	const toggle: Choice[] = !editable
		? []
		: state === "disabled"
			? [{ value: "enable", label: "Enable", description: `set "enabled": true in ${status.source.path}` }]
			: [{ value: "disable", label: "Disable", description: `set "enabled": false in ${status.source.path}` }];
	const signIn: Choice[] = oauthOf(ui, name)
		? [
				{ value: "login", label: "Log in", description: "a sign-in link; the state updates here when done" },
				{ value: "logout", label: "Log out", description: "delete the stored sign-in (asks first)" },
			]
		: [];
	const tools: Choice[] = usable
		? [{ value: "tools", label: "Tools", description: "list, search, pick one to see its schema" }]
		: [];
	return [
		...tools,
		...connect,
		...toggle,
		...signIn,
		{ value: "stderr", label: "Stderr tail", description: "the server's last stderr lines" },
		{ value: "error", label: "Last error", description: "the full last error" },
	];
}

function login(ui: Ui, name: string, config: ServerConfig): void {
	const link = { text: "creating a sign-in link…" };
	ui.session.auth.login(config).then(
		(required) => {
			link.text = forManager(required.message);
			ui.refreshCredentials();
		},
		(error: Error) => {
			link.text = forManager(sanitize(error.message));
			ui.tui.requestRender();
		},
	);
	const credential = () => ui.view.credentials.get(name) ?? "";
	ui.push(textScreen(ui, `${escapeName(name)}: sign in`, () => `${link.text}\n\nCredentials: ${credential()}`));
}

function connect(ui: Ui, name: string): void {
	const again = statusOf(ui, name)?.state !== "idle";
	const [doing, done] = again ? ["Reconnecting", "Reconnected"] : ["Connecting", "Connected"];
	show(ui, `${doing} ${escapeName(name)}…`);
	ui.session.runtime
		.reset(name)
		.then(() => ui.session.runtime.connect(name))
		.then(
			(after) =>
				show(
					ui,
					after.state === "ready"
						? `${done}: ${after.state} · ${facts(after)}`
						: `${again ? "Reconnect" : "Connect"} failed (${after.state}); see Last error`,
				),
			(error: Error) => show(ui, forManager(sanitize(error.message))),
		);
}

function header(ui: Ui, name: string): readonly string[] {
	const { theme } = ui;
	const status = statusOf(ui, name);
	if (!status) return [theme.fg("error", `${escapeName(name)}: no longer configured`)];
	const credential = ui.view.credentials.get(name);
	const state = stateOf(status, credential);
	const source = status.source.kind === "extension" ? `extension ${status.source.path}` : status.source.path;
	const line = [state, facts(status)].filter(Boolean).join(" · ");
	return [
		`${theme.fg("accent", theme.bold(escapeName(name)))}  ${theme.fg(stateColor(state), line)}`,
		...(status.description ? [theme.fg("muted", oneLine(status.description, 200))] : []),
		theme.fg("muted", `source: ${source}`),
		...(credential ? [theme.fg("muted", `credentials: ${credential}`)] : []),
		...(status.error ? [theme.fg("error", `error: ${forManager(status.error).split("\n")[0]}`)] : []),
		...(ui.view.message ? [theme.fg("warning", ui.view.message)] : []),
	];
}

export function serverScreen(ui: Ui, name: string): Screen {
	const handlers: Readonly<Record<string, () => void>> = {
		tools: () => ui.push(toolsScreen(ui, name)),
		connect: () => connect(ui, name),
		enable: () => ui.setEnabled(name, true),
		disable: () => ui.setEnabled(name, false),
		login: () => {
			const config = oauthOf(ui, name);
			if (config) login(ui, name, config);
		},
		logout: () => {
			const config = oauthOf(ui, name);
			if (config) ui.push(confirmLogout(ui, config));
		},
		stderr: () =>
			ui.push(textScreen(ui, `${escapeName(name)}: stderr`, () => statusOf(ui, name)?.stderrTail || "(nothing on stderr)")),
		error: () =>
			ui.push(textScreen(ui, `${escapeName(name)}: last error`, () => forManager(statusOf(ui, name)?.error ?? "(no error)"))),
	};
	const select = list(ui, choiceRows(ui, actions(ui, name)), (row) => handlers[row.value]?.());
	return {
		header: () => header(ui, name),
		hint: "↑↓ navigate · enter choose · esc back",
		body: (width, rows) => select.render(width, rows),
		input: (data) => select.handleInput(data),
		changed: () => select.setRows(choiceRows(ui, actions(ui, name))),
	};
}
