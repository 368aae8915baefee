/**
 * The `/mcp` manager in Pi's interactive TUI, built from pi-tui components: servers with their state
 * first and in colour (those with withheld changes, then failed ones first), protocol, tool count and
 * source; per server its withheld changes (a diff each, approve one or all), its tools
 * (searchable, schema on pick), connect or reconnect, enable or disable, login (the link), logout
 * (asks first), stderr tail and last error. Escape goes back, and closes from the server list. States
 * update while it is open. Every screen fits the terminal: its body gets the rows Pi leaves, a cut row
 * ends in "…", and the manager takes PgUp/PgDn (and Pi's other viewport keys) from the transcript as
 * Pi's own lists do. Loaded only when opened.
 */
import { DynamicBorder, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import { truncateToWidth } from "@earendil-works/pi-tui";
import { matchingTools } from "../catalog/listing.ts";
import { credentialStates } from "../catalog/status.ts";
import { oauthConfig } from "../config.ts";
import type { ServerStatus, Session } from "../contracts.ts";
import { escapeName, oneLine, sanitize } from "../output/text.ts";
import type { ConfigSnapshot } from "../schema.ts";
import { attachResource, type Conversation, runPrompt } from "./conversation.ts";
import type { Row } from "./list.ts";
import { cell, facts, list, type Screen, show, stateColor, stateOf, statusError, type Ui } from "./parts.ts";
import { promptsScreen, resourcesScreen, type UserActs } from "./prompts-resources.ts";
import { serverScreen } from "./screens.ts";
import { View } from "./view.ts";

/** How often the open manager re-reads the in-memory states, and the keyring for credential states. */
const TICK_MS = 250;
const CREDENTIALS_EVERY = 8;
/**
 * Terminal rows Pi keeps beside the manager: at least one transcript row, the spacer above the editor
 * and a footer of up to three rows; one spare. The manager never draws fewer than `MIN_ROWS`.
 */
const PI_ROWS = 6;
const MIN_ROWS = 12;
/** Border, blank, blank, hint, border around a screen's header and body. */
const FRAME_ROWS = 5;

/** One edit of an mcp.json entry, as `config/edit.ts` reports it. */
export type Edited = Readonly<{ path: string; action: string; warnings: readonly string[] }>;

/** What the manager gets from the extension to enable and disable servers; without it, it cannot. */
export type ManagerOptions = Readonly<{
	/** Enables or disables an entry in the file that defines it (the shell command's own edit). */
	setEnabled?: (name: string, enabled: boolean, scope: "user" | "project", snapshot: ConfigSnapshot) => Promise<Edited>;
	/** Hides a tool from the model or shows it again (`excludeTools`) in the file that defines the entry. */
	setToolHidden?: (
		name: string,
		tool: string,
		hidden: boolean,
		scope: "user" | "project",
		snapshot: ConfigSnapshot,
	) => Promise<Edited>;
	/** Re-reads the configuration and applies it to the session's runtime; the new configuration. */
	reload?: () => Promise<ConfigSnapshot | undefined>;
	/** Where a picked prompt or resource goes (Pi's senders); without it there are no Prompts and Resources screens. */
	conversation?: Conversation;
	/** Opens at this server's screen, its withheld changes checked at once (`/mcp trust <server>`); Escape there closes. */
	review?: string;
}>;

/** Failed and invalid servers first, then those that need sign-in, then the rest in file order. */
function rank(state: string): number {
	if (state === "failed" || state === "invalid") return 0;
	return state === "needs sign-in" ? 1 : 2;
}

/** What tells a server apart after its facts: a failure's first line, an invalid entry's problem, its description. */
function detailOf(status: ServerStatus, state: string, oneSource: boolean): string | undefined {
	if (state === "invalid") return status.problem ?? status.error;
	const error = status.error && rank(state) === 0 ? statusError(status)?.split("\n")[0] : undefined;
	if (error) return error;
	if (status.description) return oneLine(status.description, 200);
	// Where it is configured, only when the servers come from more than one place (the header names one).
	if (oneSource) return undefined;
	return status.source.kind === "extension" ? `extension ${status.source.path}` : status.source.path;
}

/** The one file every server comes from, if they all come from one. */
function oneSource(statuses: readonly ServerStatus[]): string | undefined {
	const paths = new Set(statuses.map((status) => `${status.source.kind}:${status.source.path}`));
	const first = statuses[0];
	return paths.size === 1 && first && first.source.kind !== "extension" ? first.source.path : undefined;
}

function serverRows(ui: Ui): Row[] {
	const { theme } = ui;
	const statuses = ui.session.runtime.status();
	const single = oneSource(statuses) !== undefined;
	const shown = statuses.map((status) => ({
		status,
		state: stateOf(status, ui.view.credentials.get(status.name)),
		name: escapeName(status.name),
	}));
	const stateWidth = Math.max(...shown.map(({ state }) => state.length));
	const nameWidest = Math.max(...shown.map(({ name }) => name.length));
	const rows = shown.map(({ status, state, name }) => {
		const rest = theme.fg("muted", [facts(status), detailOf(status, state, single)].filter(Boolean).join(" — "));
		const row: Row = {
			value: status.name,
			text: (width, selected) => {
				const column = cell(name, Math.min(nameWidest, Math.max(16, Math.floor((width - stateWidth) / 3))));
				return `${theme.fg(stateColor(state), cell(state, stateWidth))}  ${selected ? theme.fg("accent", column) : column}  ${rest}`;
			},
		};
		// Withheld definitions first (#47): `facts` marks them.
		return { row, rank: (status.pins?.pending ?? 0) > 0 ? -1 : rank(state) };
	});
	return rows.sort((a, b) => a.rank - b.rank).map(({ row }) => row);
}

function serversScreen(ui: Ui): Screen {
	const { theme } = ui;
	const open = (row: Row) => ui.push(serverScreen(ui, row.value));
	const select = list(ui, serverRows(ui), open);
	return {
		header: () => [
			theme.fg("accent", theme.bold("MCP servers (pi-mcp)")),
			...(select.selected() ? [] : [theme.fg("muted", "No servers configured: add them to mcp.json (see /mcp status).")]),
		],
		hint: "↑↓ PgUp PgDn navigate · enter open · esc close",
		// The one file every server comes from is named once, under the list.
		body: (width, rows) => {
			const source = oneSource(ui.session.runtime.status());
			if (!source) return select.render(width, rows);
			return [...select.render(width, Math.max(1, rows - 2)), "", theme.fg("muted", `  all in ${source}`)];
		},
		input: (data) => select.handleInput(data),
		changed: () => select.setRows(serverRows(ui)),
	};
}

/** Enables or disables `name` with the shell command's edit, then applies the files to the session. */
async function applyEnabled(ui: Ui, options: ManagerOptions, name: string, enabled: boolean): Promise<string> {
	const entry = ui.view.config.servers.find((server) => server.name === name);
	if (!options.setEnabled || !entry || entry.source.kind === "extension") {
		return `"${escapeName(name)}" cannot be changed here: it is not defined in an mcp.json file.`;
	}
	const change = await options.setEnabled(name, enabled, entry.source.kind, ui.view.config);
	const what = `"${escapeName(name)}" in ${change.path}`;
	const said =
		change.action === "unchanged"
			? `Already ${enabled ? "enabled" : "disabled"}: ${what}.`
			: `${enabled ? "Enabled" : "Disabled"} ${what}.`;
	const warnings = change.warnings.map((warning) => ` ${warning}`).join("");
	const config = await options.reload?.();
	if (!config) return `${said}${warnings} It takes effect at the next session or /reload.`;
	ui.view.setConfig(config);
	return `${said}${warnings}`;
}

/** Hides or shows one tool with the shell command's edit, then applies the files to the session. */
async function applyToolHidden(ui: Ui, options: ManagerOptions, name: string, tool: string, hidden: boolean): Promise<string> {
	const entry = ui.view.config.servers.find((server) => server.name === name);
	if (!options.setToolHidden || !entry || entry.source.kind === "extension") {
		return `"${escapeName(name)}" cannot be changed here: it is not defined in an mcp.json file.`;
	}
	const change = await options.setToolHidden(name, tool, hidden, entry.source.kind, ui.view.config);
	const said = `${change.action === "unchanged" ? "Already " : ""}${hidden ? "hidden" : "shown"}: "${escapeName(tool)}" (excludeTools in ${change.path}).`;
	const config = await options.reload?.();
	if (config) ui.view.setConfig(config);
	return `${said.charAt(0).toUpperCase()}${said.slice(1)}${change.warnings.map((warning) => ` ${warning}`).join("")}`;
}

/** Picking a prompt (its arguments filled in) closes the manager and sends it; a resource is attached. */
function userActs(ctx: ExtensionContext, session: Session, conversation: Conversation, close: () => void): UserActs {
	return {
		prompt: (server, name, values) => {
			close();
			runPrompt(conversation, ctx, session, server, name, values).catch((error: Error) =>
				ctx.ui.notify(sanitize(error.message), "error"),
			);
		},
		attach: (server, uri) => attachResource(conversation, ctx, session, server, uri),
	};
}

/** Lines of the current screen: the frame, the header, and the body in the rows left. */
function frame(ui: Ui, screen: Screen, border: DynamicBorder, width: number): string[] {
	const total = Math.max(MIN_ROWS, ui.tui.terminal.rows - PI_ROWS);
	const header = screen.header(width - 1).map((line) => ` ${line}`);
	const body = screen.body(width, Math.max(1, total - header.length - FRAME_ROWS));
	const lines = [...header, "", ...body, "", ui.theme.fg("dim", ` ${screen.hint}`)];
	return [...border.render(width), ...lines.map((line) => truncateToWidth(line, width, "…")), ...border.render(width)];
}

/** Opens the manager; resolves when it is closed. */
export async function openManager(ctx: ExtensionContext, session: Session, options: ManagerOptions = {}): Promise<void> {
	await ctx.ui.custom<void>((tui, theme, kb, done) => {
		const border = new DynamicBorder((text: string) => theme.fg("accent", text));
		const view = new View<Screen>(session.config);
		// The open manager's clock: its ticks, and the states it last drew.
		let ticks = 0;
		let drawn = "";
		const close = () => {
			clearInterval(timer);
			done(undefined);
		};
		const redraw = () => {
			for (const screen of view.stack) screen.changed?.();
			tui.requestRender();
		};
		const acts = options.conversation && userActs(ctx, session, options.conversation, close);
		const ui: Ui = {
			userScreens: acts && {
				prompts: (server) => promptsScreen(ui, server, acts),
				resources: (server) => resourcesScreen(ui, server, acts),
			},
			tui,
			theme,
			kb,
			session,
			matchingTools: (server, query) => matchingTools(session, server, query),
			view,
			// A one-line message belongs to the screen it was said on.
			push: (screen) => {
				view.say(undefined);
				view.push(screen);
				tui.requestRender();
			},
			back: () => {
				view.say(undefined);
				if (view.pop() === 0) return close();
				tui.requestRender();
			},
			oauth: (name) => {
				const config = oauthConfig(view.config, name);
				return typeof config === "string" ? undefined : config;
			},
			refreshCredentials: () => {
				credentialStates(view.config, session.auth).then((next) => {
					if ([...next].some(([name, state]) => view.credentials.get(name)?.text !== state.text)) {
						view.setCredentials(next);
						redraw();
					}
				});
			},
			setEnabled: (name, enabled) => {
				show(ui, `${enabled ? "Enabling" : "Disabling"} ${escapeName(name)}…`);
				applyEnabled(ui, options, name, enabled)
					.catch((error: Error) => sanitize(error.message))
					.then((message) => {
						show(ui, message, true);
						redraw();
					});
			},
			setToolHidden: (name, tool, hidden, loaded) => {
				show(ui, `${hidden ? "Hiding" : "Showing"} ${escapeName(tool)}…`);
				applyToolHidden(ui, options, name, tool, hidden)
					.catch((error: Error) => sanitize(error.message))
					.then((message) => {
						show(ui, message, true);
						loaded();
					});
			},
		};
		ui.push(options.review === undefined ? serversScreen(ui) : serverScreen(ui, options.review, true));
		ui.refreshCredentials();
		// Live states: the runtime's records are in memory, so a tick costs a comparison; credential
		// states come from the keyring, read less often.
		const timer = setInterval(() => {
			ticks += 1;
			if (ticks % CREDENTIALS_EVERY === 0) ui.refreshCredentials();
			const states = JSON.stringify(session.runtime.status());
			if (states === drawn) return;
			drawn = states;
			redraw();
		}, TICK_MS);
		timer.unref();
		const current = () => view.stack[view.stack.length - 1];
		return {
			// Pi's own lists do the same: PgUp/PgDn and the other viewport keys come here, not to the transcript.
			capturesViewportInput: true,
			render: (width: number) => {
				const screen = current();
				return screen ? frame(ui, screen, border, width) : [];
			},
			invalidate: () => undefined,
			handleInput: (data: string) => {
				current()?.input(data);
				tui.requestRender();
			},
		};
	});
}
