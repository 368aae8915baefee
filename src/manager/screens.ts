/**
 * The `/mcp` manager's screens below the server list: a server's tools (searchable, Tab hides or shows
 * one) and one tool's schema, and one server: its state and facts, and its actions, named for what they
 * do (Connect for an idle server, Reconnect for one that connected or failed; Enable or Disable, which the
 * manager applies with the shell command's own edit), sign in and out, the stderr tail and the last
 * error. Advice in messages points at these items rather than at the `/mcp` subcommands.
 */
import { Input, matchesKey, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import { escapeName, oneLine, sanitize, stripProse } from "../output/text.ts";
import type { ServerConfig } from "../schema.ts";
import { hiddenRows } from "./hidden-rows.ts";
import type { RowList } from "./list.ts";
import {
	type Choice,
	choiceRows,
	facts,
	forManager,
	list,
	type Screen,
	show,
	stateColor,
	stateOf,
	statusOf,
	textScreen,
	type Ui,
} from "./parts.ts";
import { secretChoices, secretScreen } from "./secret-input.ts";
import { Slot } from "./view.ts";

/** The tools screen's list as last loaded; a load answers only if no later one was asked. */
class Loaded {
	#asked = 0;
	#select: RowList | undefined;
	#note = "connecting…";
	#hidden: ReadonlySet<string> = new Set();

	/** A new load: its number. */
	ask(): number {
		this.#asked += 1;
		return this.#asked;
	}

	latest(asked: number): boolean {
		return asked === this.#asked;
	}

	get select(): RowList | undefined {
		return this.#select;
	}

	get note(): string {
		return this.#note;
	}

	/** Names of the rows the filters hide (Enter on one shows no schema). */
	get hidden(): ReadonlySet<string> {
		return this.#hidden;
	}

	show(select: RowList | undefined, hidden: ReadonlySet<string>, note: string): void {
		this.#select = select;
		this.#hidden = hidden;
		this.#note = note;
	}
}

/** A server's tools: type to search (the `mcp` tool's own search), pick one to see its schema. */
export function toolsScreen(ui: Ui, name: string): Screen {
	const search = new Input({ prompt: "search: ", placeholder: "type to filter" });
	search.focused = true;
	const state = new Loaded();
	const load = (query: string) => {
		const asked = state.ask();
		ui.matchingTools(name, query || undefined).then(
			(tools) => {
				if (!state.latest(asked)) return;
				const choices = tools.map((tool) => ({
					value: tool.name,
					label: escapeName(tool.name),
					description: oneLine(tool.description, 200),
				}));
				const hidden = hiddenRows((color, text) => ui.theme.fg(color, text), statusOf(ui, name), query);
				const hiddenNames = new Set(hidden.map((row) => row.value));
				const rows = [...choiceRows(ui, choices), ...hidden];
				// The same list keeps its selection on the same tool (after a Tab, the tool just hidden or shown).
				const select =
					state.select ?? list(ui, rows, (row) => state.hidden.has(row.value) || ui.push(schemaScreen(ui, name, row.value)));
				if (state.select) select.setRows(rows);
				state.show(select, hiddenNames, tools.length === 0 ? (query ? "no tool matches" : "no tools") : "");
				ui.tui.requestRender();
			},
			(error: Error) => {
				if (!state.latest(asked)) return;
				state.show(undefined, state.hidden, sanitize(error.message));
				ui.tui.requestRender();
			},
		);
	};
	load("");
	return {
		header: () => [
			ui.theme.fg("accent", ui.theme.bold(`${escapeName(name)}: tools`)),
			...(ui.view.message ? [ui.theme.fg("warning", ui.view.message)] : []),
		],
		hint: "type to search · ↑↓ PgUp PgDn navigate · enter schema · tab hide/show · esc back",
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
			const picked = state.select?.selected()?.value;
			if (matchesKey(data, "tab") && picked !== undefined) {
				return ui.setToolHidden(name, picked, !state.hidden.has(picked), () => load(search.getValue().trim()));
			}
			const before = search.getValue();
			search.handleInput(data);
			if (search.getValue() !== before) load(search.getValue().trim());
		},
	};
}

export function schemaScreen(ui: Ui, server: string, name: string): Screen {
	const text = new Slot("loading…");
	ui.session.runtime.tool(server, name).then(
		(tool) => {
			const schema = (value: unknown) => stripProse(JSON.stringify(value, null, 2));
			const parts = [
				tool.description ? stripProse(tool.description) : undefined,
				`input schema:\n${schema(tool.inputSchema)}`,
				tool.outputSchema ? `output schema:\n${schema(tool.outputSchema)}` : undefined,
			];
			text.set(parts.filter((part) => part !== undefined).join("\n\n"));
			ui.tui.requestRender();
		},
		(error: Error) => {
			text.set(sanitize(error.message));
			ui.tui.requestRender();
		},
	);
	return textScreen(ui, `${escapeName(server)}/${escapeName(name)}`, () => text.get());
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
		...secretChoices(ui, name),
		{ value: "stderr", label: "Stderr tail", description: "the server's last stderr lines" },
		{ value: "error", label: "Last error", description: "the full last error" },
		...(status?.instructions
			? [{ value: "instructions", label: "Instructions", description: "what the server tells the model" }]
			: []),
		...own,
	];
}

function login(ui: Ui, name: string, config: ServerConfig): void {
	const link = new Slot("creating a sign-in link…");
	ui.session.auth.login(config).then(
		(required) => {
			link.set(forManager(required.message));
			ui.refreshCredentials();
		},
		(error: Error) => {
			link.set(forManager(sanitize(error.message)));
			ui.tui.requestRender();
		},
	);
	const credential = () => ui.view.credentials.get(name) ?? "";
	ui.push(textScreen(ui, `${escapeName(name)}: sign in`, () => `${link.get()}\n\nCredentials: ${credential()}`));
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
		...(status.instructions ? [theme.fg("muted", `instructions: ${oneLine(status.instructions, 300)}`)] : []),
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
		instructions: () =>
			ui.push(textScreen(ui, `${escapeName(name)}: instructions`, () => statusOf(ui, name)?.instructions ?? "(none sent)")),
	};
	const select = list(ui, choiceRows(ui, actions(ui, name)), (row) =>
		row.value.startsWith("secret:") ? ui.push(secretScreen(ui, name, row.value.slice(7))) : handlers[row.value]?.(),
	);
	return {
		header: () => header(ui, name),
		hint: "↑↓ navigate · enter choose · esc back",
		body: (width, rows) => select.render(width, rows),
		input: (data) => select.handleInput(data),
		changed: () => select.setRows(choiceRows(ui, actions(ui, name))),
	};
}
