/**
 * The parts of the `/mcp` manager's screens that stand alone: the screen and UI records, the lists
 * of actions, the scrollable text screen, and a server's tools (searchable) and one tool's schema.
 * A screen's body is drawn into the rows the manager gives it (the terminal's height less the frame),
 * so no screen pushes its key hints, its border or Pi's footer off the terminal. The search comes in
 * through `Ui` (the manager passes the `tools` action's own).
 */
import type { Theme } from "@earendil-works/pi-coding-agent";
import { Input, type KeybindingsManager, type TUI, truncateToWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import type { Tool } from "@modelcontextprotocol/client";
import type { CommandSession } from "../contracts.ts";
import { escapeName, oneLine, sanitize, stripProse } from "../output/text.ts";
import type { ConfigSnapshot } from "../schema.ts";
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
	/** Re-reads the credential states (from the keyring) and redraws when one changed. */
	refreshCredentials: () => void;
	/** Enables or disables a server in the file that defines it, and applies that to this session. */
	setEnabled: (name: string, enabled: boolean) => void;
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
