/**
 * The `/mcp` manager's screens below the server list: the screen and UI records, lists of choices,
 * the scrollable text screen, a server's tools (searchable) and one tool's schema, and one server:
 * its state and facts, and its actions, named for what they do (Connect for an idle server, Reconnect
 * for one that connected or failed; Enable or Disable, which the manager applies with the shell
 * command's own edit), sign in and out, the stderr tail and the last error. A body is drawn into the
 * rows the manager gives it (the terminal's height less the frame); advice in messages points at
 * these items rather than at the `/mcp` subcommands. The search comes in through `Ui`.
 */
import type { Theme } from "@earendil-works/pi-coding-agent";
import { Input, type KeybindingsManager, type TUI, truncateToWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import type { Tool } from "@modelcontextprotocol/client";
import type { CommandSession, ServerStatus } from "../contracts.ts";
import { escapeName, oneLine, sanitize, stripProse } from "../output/text.ts";
import type { ConfigSnapshot, ServerConfig } from "../schema.ts";
import { type Row, type RowList, rowList } from "./list.ts";

export type Screen = Readonly<{
	header: () => readonly string[];
	/** The body's lines for a width, in at most `rows` lines. */
	body: (width: number, rows: number) => readonly string[];
	hint: string;
	input: (data: string) => void;
	/** Called on every tick with changed states. */
	changed?: () => void;
}>;
export type Ui = Readonly<{
	tui: TUI;
	theme: Theme;
	kb: KeybindingsManager;
	session: CommandSession;
	/** A server's tools matching a query, best first (all of them without one): the `mcp` tool's search. */
	matchingTools: (server: string, query: string | undefined) => Promise<readonly Tool[]>;
	/**
	 * `config` is the session's configuration as last read: an enable or disable replaces it (the
	 * runtime is the same object throughout).
	 */
	view: {
		stack: readonly Screen[];
		credentials: ReadonlyMap<string, string>;
		config: ConfigSnapshot;
		message?: string;
	};
	push: (screen: Screen) => void;
	back: () => void;
	/** The configuration of a server that signs in with OAuth (`config.ts`'s rule), else undefined. */
	oauth: (name: string) => ServerConfig | undefined;
	/** Re-reads the credential states (from the keyring) and redraws when one changed. */
	refreshCredentials: () => void;
	/** Enables or disables a server in the file that defines it, and applies that to this session. */
	setEnabled: (name: string, enabled: boolean) => void;
	/** A server's Prompts and Resources screens (`prompt-screens.ts`), where the session can take them. */
	userScreens?: Readonly<{ prompts: (server: string) => Screen; resources: (server: string) => Screen }>;
}>;

export type Choice = Readonly<{ value: string; label: string; description?: string }>;

/** `text` cut or padded to exactly `width` columns (a cut ends in "…"). */
export function cell(text: string, width: number): string {
	return truncateToWidth(text, Math.max(0, width), "…", true);
}

/** A list of choices: the label in a column, the description muted beside it. */
export function choiceRows(ui: Ui, choices: readonly Choice[]): Row[] {
	const column = Math.min(28, Math.max(...choices.map((choice) => choice.label.length), 0) + 2);
	return choices.map((choice) => ({
		value: choice.value,
		text: (width, selected) => {
			const label = selected ? ui.theme.fg("accent", choice.label) : choice.label;
			if (!choice.description || width < column + 10) return label;
			return `${cell(label, column)}${ui.theme.fg("muted", choice.description)}`;
		},
	}));
}

export function list(ui: Ui, rows: readonly Row[], pick: (row: Row) => void): RowList {
	const style = { marker: (text: string) => ui.theme.fg("accent", text), info: (text: string) => ui.theme.fg("dim", text) };
	return rowList(ui.kb, style, rows, { pick, cancel: () => ui.back() });
}

/** A scrollable text: up/down/page keys scroll, Escape goes back. */
export function textScreen(ui: Ui, title: string, text: () => string): Screen {
	const scroll = { top: 0, lines: 0, page: 1 };
	return {
		header: () => [ui.theme.fg("accent", ui.theme.bold(title))],
		hint: "↑↓ PgUp PgDn scroll · esc back",
		body: (width, rows) => {
			const lines = text()
				.split("\n")
				.flatMap((line) => wrapTextWithAnsi(line, Math.max(width - 2, 10)));
			// One row for "(a–b of n)" when the text does not fit.
			const page = lines.length <= rows ? rows : Math.max(1, rows - 1);
			Object.assign(scroll, { lines: lines.length, page, top: Math.max(0, Math.min(scroll.top, lines.length - page)) });
			const shown = lines.slice(scroll.top, scroll.top + page).map((line) => ` ${line}`);
			const more =
				lines.length > page ? [ui.theme.fg("dim", ` (${scroll.top + 1}–${scroll.top + shown.length} of ${lines.length})`)] : [];
			return [...shown, ...more];
		},
		input: (data) => {
			const { kb } = ui;
			if (kb.matches(data, "tui.select.cancel")) return ui.back();
			const steps: readonly (readonly [Parameters<KeybindingsManager["matches"]>[1], number])[] = [
				["tui.select.up", -1],
				["tui.select.down", 1],
				["tui.select.pageUp", -scroll.page],
				["tui.select.pageDown", scroll.page],
			];
			const step = steps.find(([key]) => kb.matches(data, key))?.[1] ?? 0;
			scroll.top = Math.max(0, Math.min(scroll.top + step, scroll.lines - scroll.page));
		},
	};
}

/** A server's tools: type to search (the `mcp` tool's own search), pick one to see its schema. */
export function toolsScreen(ui: Ui, name: string): Screen {
	const search = new Input({ prompt: "search: ", placeholder: "type to filter" });
	search.focused = true;
	const state: { select?: RowList; note: string; asked: number } = { note: "connecting…", asked: 0 };
	const load = (query: string) => {
		const asked = state.asked + 1;
		state.asked = asked;
		ui.matchingTools(name, query || undefined).then(
			(tools) => {
				if (asked !== state.asked) return;
				const choices = tools.map((tool) => ({
					value: tool.name,
					label: escapeName(tool.name),
					description: oneLine(tool.description, 200),
				}));
				state.select = list(ui, choiceRows(ui, choices), (row) => ui.push(schemaScreen(ui, name, row.value)));
				state.note = tools.length === 0 ? (query ? "no tool matches" : "no tools") : "";
				ui.tui.requestRender();
			},
			(error: Error) => {
				if (asked !== state.asked) return;
				state.select = undefined;
				state.note = sanitize(error.message);
				ui.tui.requestRender();
			},
		);
	};
	load("");
	return {
		header: () => [ui.theme.fg("accent", ui.theme.bold(`${escapeName(name)}: tools`))],
		hint: "type to search · ↑↓ PgUp PgDn navigate · enter schema · esc back",
		body: (width, rows) => {
			const note = state.note ? wrapTextWithAnsi(ui.theme.fg("muted", state.note), width).slice(0, 3) : [];
			return [...search.render(width), ...note, ...(state.select?.render(width, Math.max(1, rows - 1 - note.length)) ?? [])];
		},
		input: (data) => {
			const { kb } = ui;
			if (kb.matches(data, "tui.select.cancel")) return ui.back();
			const navigation = [
				"tui.select.up",
				"tui.select.down",
				"tui.select.pageUp",
				"tui.select.pageDown",
				"tui.select.confirm",
			] as const;
			if (navigation.some((key) => kb.matches(data, key))) return state.select?.handleInput(data);
			const before = search.getValue();
			search.handleInput(data);
			if (search.getValue() !== before) load(search.getValue().trim());
		},
	};
}

export function schemaScreen(ui: Ui, server: string, name: string): Screen {
	const holder = { text: "loading…" };
	ui.session.runtime.tool(server, name).then(
		(tool) => {
			const schema = (value: unknown) => stripProse(JSON.stringify(value, null, 2));
			holder.text = [
				tool.description ? stripProse(tool.description) : undefined,
				`input schema:\n${schema(tool.inputSchema)}`,
				tool.outputSchema ? `output schema:\n${schema(tool.outputSchema)}` : undefined,
			]
				.filter((part) => part !== undefined)
				.join("\n\n");
			ui.tui.requestRender();
		},
		(error: Error) => {
			holder.text = sanitize(error.message);
			ui.tui.requestRender();
		},
	);
	return textScreen(ui, `${escapeName(server)}/${escapeName(name)}`, () => holder.text);
}

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

/** A one-line result under the server's header; credential states are re-read when `credentials`. */
export function show(ui: Ui, message: string, credentials = false): void {
	ui.view.message = message;
	if (credentials) ui.refreshCredentials();
	// A message may follow a change of state: the rows follow it now, not at the next tick (Connect beside "failed").
	for (const screen of ui.view.stack) screen.changed?.();
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
	const signIn: Choice[] = ui.oauth(name)
		? [
				{ value: "login", label: "Log in", description: "a sign-in link; the state updates here when done" },
				{ value: "logout", label: "Log out", description: "delete the stored sign-in (asks first)" },
			]
		: [];
	const tools: Choice[] = usable
		? [{ value: "tools", label: "Tools", description: "list, search, pick one to see its schema" }]
		: [];
	const own: Choice[] =
		usable && ui.userScreens
			? [
					{ value: "prompts", label: "Prompts", description: "pick one to send it as your message" },
					{ value: "resources", label: "Resources", description: "pick one to attach it for the model's next turn" },
				]
			: [];
	return [
		...tools,
		...connect,
		...toggle,
		...signIn,
		{ value: "stderr", label: "Stderr tail", description: "the server's last stderr lines" },
		{ value: "error", label: "Last error", description: "the full last error" },
		...own,
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
						: `${after.error?.split("\n")[0]?.replace(/\.$/, "") ?? `${again ? "Reconnect" : "Connect"} failed (${after.state})`}; see Last error`,
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
		prompts: () => ui.userScreens && ui.push(ui.userScreens.prompts(name)),
		resources: () => ui.userScreens && ui.push(ui.userScreens.resources(name)),
		connect: () => connect(ui, name),
		enable: () => ui.setEnabled(name, true),
		disable: () => ui.setEnabled(name, false),
		login: () => {
			const config = ui.oauth(name);
			if (config) login(ui, name, config);
		},
		logout: () => {
			const config = ui.oauth(name);
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
