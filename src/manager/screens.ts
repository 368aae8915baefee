/**
 * The parts of the `/mcp` manager's screens that stand alone: the screen and UI records, the select
 * list, the scrollable text screen, and a server's tools (searchable) and one tool's schema. The
 * search comes in through `Ui` (the manager passes the `tools` action's own).
 */
import type { Theme } from "@earendil-works/pi-coding-agent";
import {
	type Component,
	Input,
	type KeybindingsManager,
	type SelectItem,
	SelectList,
	type TUI,
	wrapTextWithAnsi,
} from "@earendil-works/pi-tui";
import type { Tool } from "@modelcontextprotocol/client";
import type { CommandSession } from "../contracts.ts";
import { escapeName, oneLine, sanitize, stripProse } from "../output/text.ts";

const TEXT_ROWS = 18;

export type Screen = Readonly<{
	header: () => readonly string[];
	body: () => Component;
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
	view: { stack: readonly Screen[]; credentials: ReadonlyMap<string, string>; message?: string };
	push: (screen: Screen) => void;
	back: () => void;
}>;
export function list(ui: Ui, items: SelectItem[], onSelect: (item: SelectItem) => void, selected = 0): SelectList {
	const { theme } = ui;
	const select = new SelectList(items, Math.min(Math.max(items.length, 1), 10), {
		selectedPrefix: (text) => theme.fg("accent", text),
		selectedText: (text) => theme.fg("accent", text),
		description: (text) => theme.fg("muted", text),
		scrollInfo: (text) => theme.fg("dim", text),
		noMatch: (text) => theme.fg("warning", text),
	});
	select.setSelectedIndex(Math.min(selected, Math.max(items.length - 1, 0)));
	select.onSelect = onSelect;
	select.onCancel = () => ui.back();
	return select;
}

/** A scrollable text: up/down/page keys scroll, Escape goes back. */
export function textScreen(ui: Ui, title: string, text: () => string): Screen {
	const scroll = { top: 0, rows: 0 };
	return {
		header: () => [ui.theme.fg("accent", ui.theme.bold(title))],
		hint: "↑↓ PgUp PgDn scroll · esc back",
		body: () => ({
			invalidate: () => undefined,
			render: (width) => {
				const lines = text()
					.split("\n")
					.flatMap((line) => wrapTextWithAnsi(line, Math.max(width - 2, 10)));
				scroll.rows = lines.length;
				scroll.top = Math.max(0, Math.min(scroll.top, lines.length - TEXT_ROWS));
				const shown = lines.slice(scroll.top, scroll.top + TEXT_ROWS).map((line) => ` ${line}`);
				const more =
					lines.length > TEXT_ROWS
						? [ui.theme.fg("dim", ` (${scroll.top + 1}–${scroll.top + shown.length} of ${lines.length})`)]
						: [];
				return [...shown, ...more];
			},
		}),
		input: (data) => {
			const { kb } = ui;
			if (kb.matches(data, "tui.select.cancel")) return ui.back();
			const step = kb.matches(data, "tui.select.up")
				? -1
				: kb.matches(data, "tui.select.down")
					? 1
					: kb.matches(data, "tui.select.pageUp")
						? -TEXT_ROWS
						: kb.matches(data, "tui.select.pageDown")
							? TEXT_ROWS
							: 0;
			scroll.top = Math.max(0, Math.min(scroll.top + step, scroll.rows - TEXT_ROWS));
		},
	};
}
/** A server's tools: type to search (the `mcp` tool's own search), pick one to see its schema. */
export function toolsScreen(ui: Ui, name: string): Screen {
	const search = new Input({ prompt: "search: ", placeholder: "type to filter" });
	search.focused = true;
	const state: { select?: SelectList; note: string; asked: number } = { note: "connecting…", asked: 0 };
	const load = (query: string) => {
		const asked = state.asked + 1;
		state.asked = asked;
		ui.matchingTools(name, query || undefined).then(
			(tools) => {
				if (asked !== state.asked) return;
				const items = tools.map((tool) => ({
					value: tool.name,
					label: escapeName(tool.name),
					description: oneLine(tool.description, 100),
				}));
				state.select = list(ui, items, (item) => ui.push(schemaScreen(ui, name, item.value)));
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
		hint: "type to search · ↑↓ navigate · enter schema · esc back",
		body: () => ({
			invalidate: () => state.select?.invalidate(),
			render: (width) => [
				...search.render(width),
				...(state.note ? wrapTextWithAnsi(ui.theme.fg("muted", state.note), width) : []),
				...(state.select?.render(width) ?? []),
			],
		}),
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
