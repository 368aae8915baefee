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
import { pendingChanges } from "./changes.ts";
import type { Row, RowList } from "./list.ts";
import {
	type Choice,
	choiceRows,
	facts,
	list,
	managerText,
	type Screen,
	show,
	stateColor,
	stateOf,
	statusError,
	statusOf,
	textScreen,
	type Ui,
} from "./parts.ts";
import { secretChoices, secretScreen } from "./secret-input.ts";
import { toolRows } from "./tool-rows.ts";

/** A server's tools: type to search (the `mcp` tool's own search), pick one to see its schema. */
export function toolsScreen(ui: Ui, name: string): Screen {
	const search = new Input({ prompt: "search: ", placeholder: "type to filter" });
	search.focused = true;
	// What the last load answered; a load answers only if no later one was asked.
	let asked = 0;
	let select: RowList | undefined;
	let note = "connecting…";
	let hidden: ReadonlySet<string> = new Set();
	const load = (query: string) => {
		asked += 1;
		const mine = asked;
		ui.matchingTools(name, query || undefined).then(
			(tools) => {
				if (mine !== asked) return;
				const fg = (color: "accent" | "dim" | "muted" | "warning", text: string) => ui.theme.fg(color, text);
				const made = toolRows(fg, tools, ui.session.runtime.listed(name), statusOf(ui, name), query);
				hidden = made.hidden;
				// The same list keeps its selection on the same tool (after a Tab, the tool just hidden or shown).
				if (select) select.setRows(made.rows);
				else
					select = list(ui, made.rows, (row) => hidden.has(row.value) || ui.push(schemaScreen(ui, name, row.value)), {
						wrap: false,
					});
				note = made.rows.length === 0 ? (query ? "no tool matches" : "no tools") : "";
				ui.tui.requestRender();
			},
			(error: Error) => {
				if (mine !== asked) return;
				select = undefined;
				note = sanitize(managerText(error));
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
		hint: "type to search · ↑↓ PgUp PgDn move · enter schema · tab hide/show · esc back",
		body: (width, rows) => {
			const noted = note ? wrapTextWithAnsi(ui.theme.fg("muted", note), width).slice(0, 3) : [];
			return [...search.render(width), ...noted, ...(select?.render(width, Math.max(1, rows - 1 - noted.length)) ?? [])];
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
			if (navigation.some((key) => kb.matches(data, key))) return select?.handleInput(data);
			const picked = select?.selected()?.value;
			if (matchesKey(data, "tab") && picked !== undefined) {
				return ui.setToolHidden(name, picked, !hidden.has(picked), () => load(search.getValue().trim()));
			}
			const before = search.getValue();
			search.handleInput(data);
			if (search.getValue() !== before) load(search.getValue().trim());
		},
	};
}

export function schemaScreen(ui: Ui, server: string, name: string): Screen {
	let text = "loading…";
	ui.session.runtime.tool(server, name).then(
		(tool) => {
			const schema = (value: unknown) => stripProse(JSON.stringify(value, null, 2));
			const parts = [
				tool.description ? stripProse(tool.description) : undefined,
				`input schema:\n${schema(tool.inputSchema)}`,
				tool.outputSchema ? `output schema:\n${schema(tool.outputSchema)}` : undefined,
			];
			text = parts.filter((part) => part !== undefined).join("\n\n");
			ui.tui.requestRender();
		},
		(error: Error) => {
			text = sanitize(managerText(error));
			ui.tui.requestRender();
		},
	);
	return textScreen(ui, `${escapeName(server)}/${escapeName(name)}`, () => text);
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
	let link = "creating a sign-in link…";
	ui.session.auth.login(config).then(
		(required) => {
			link = managerText(required);
			ui.refreshCredentials();
		},
		(error: Error) => {
			link = sanitize(managerText(error));
			ui.tui.requestRender();
		},
	);
	const credential = () => ui.view.credentials.get(name)?.text ?? "";
	const text = () => `${link}\n\nCredentials: ${credential()}`;
	ui.push(textScreen(ui, `${escapeName(name)}: sign in`, text));
}

function connect(ui: Ui, name: string): void {
	const again = statusOf(ui, name)?.state !== "idle";
	const [act, doing, done] = again ? ["Reconnect", "Reconnecting", "Reconnected"] : ["Connect", "Connecting", "Connected"];
	show(ui, `${doing} ${escapeName(name)}…`);
	ui.session.runtime
		.reset(name)
		.then(() => ui.session.runtime.connect(name))
		.then(
			// A failure is in the header's error lines: the message only says how it ended.
			(after) => show(ui, after.state === "ready" ? `${done}: ${after.state} · ${facts(after)}` : `${act} failed.`),
			(error: Error) => show(ui, sanitize(managerText(error))),
		);
}

/** Most rows a failure takes in the header; Last error shows it all. */
const ERROR_ROWS = 6;

function header(ui: Ui, name: string, width: number, note: string | undefined): readonly string[] {
	const { theme } = ui;
	const status = statusOf(ui, name);
	if (!status) return [theme.fg("error", `${escapeName(name)}: no longer configured`)];
	const credential = ui.view.credentials.get(name);
	const state = stateOf(status, credential);
	const source = status.source.kind === "extension" ? `extension ${status.source.path}` : status.source.path;
	const line = [state, facts(status)].filter(Boolean).join(" · ");
	// The whole failure, wrapped: its cause (the stderr lines among it) tells what to fix.
	const error = statusError(status);
	const wrapped = error ? `error: ${error}`.split("\n").flatMap((each) => wrapTextWithAnsi(each, Math.max(20, width - 2))) : [];
	const errorLines =
		wrapped.length > ERROR_ROWS ? [...wrapped.slice(0, ERROR_ROWS - 1), "… (Last error shows all of it)"] : wrapped;
	return [
		`${theme.fg("accent", theme.bold(escapeName(name)))}  ${theme.fg(stateColor(state), line)}`,
		...(status.description ? [theme.fg("muted", oneLine(status.description, 200))] : []),
		theme.fg("muted", `source: ${source}`),
		...(credential ? [theme.fg("muted", `credentials: ${credential.text}`)] : []),
		...errorLines.map((each) => theme.fg("error", each)),
		...(status.instructions ? [theme.fg("muted", `instructions: ${oneLine(status.instructions, 300)}`)] : []),
		...(note ? [theme.fg("warning", note)] : []),
		...(ui.view.message ? [theme.fg("warning", ui.view.message)] : []),
	];
}

/**
 * One server: its withheld changes first (`changes.ts`; checked at once, connecting, when `check`), then its
 * actions.
 */
export function serverScreen(ui: Ui, name: string, check = false): Screen {
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
			ui.push(
				textScreen(ui, `${escapeName(name)}: last error`, () => {
					const status = statusOf(ui, name);
					return (status && statusError(status)) ?? "(no error)";
				}),
			),
		instructions: () =>
			ui.push(textScreen(ui, `${escapeName(name)}: instructions`, () => statusOf(ui, name)?.instructions ?? "(none sent)")),
	};
	const choices = () => choiceRows(ui, [...pending.choices(), ...actions(ui, name)]);
	const pick = (row: Row) => {
		if (pending.pick(row.value)) return;
		if (row.value.startsWith("secret:")) return ui.push(secretScreen(ui, name, row.value.slice(7)));
		handlers[row.value]?.();
	};
	// The first changes listed take the selection (a new list starts on its first row).
	const pending = pendingChanges(ui, name, check, (appeared) => {
		if (appeared) select = list(ui, choices(), pick);
		else select.setRows(choices());
		ui.tui.requestRender();
	});
	let select: RowList = list(ui, choices(), pick);
	return {
		header: (width) => header(ui, name, width, pending.note()),
		hint: "↑↓ navigate · enter choose · esc back",
		body: (width, rows) => select.render(width, rows),
		input: (data) => select.handleInput(data),
		changed: () => {
			pending.changed();
			select.setRows(choices());
		},
	};
}
