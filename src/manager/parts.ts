/**
 * What every manager screen is made of: the screen and UI records, lists of choices, the scrollable
 * text screen, and a server's state as the manager shows it (its colour, its facts, one-line results).
 */
import type { Theme } from "@earendil-works/pi-coding-agent";
import { type KeybindingsManager, type TUI, truncateToWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import type { Tool } from "@modelcontextprotocol/client";
import type { CommandSession, ServerStatus } from "../contracts.ts";
import type { ServerConfig } from "../schema.ts";
import { type Row, type RowList, rowList } from "./list.ts";
import { type View, Window } from "./view.ts";

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
	/** The screens, credential states, configuration as last read and the one-line message. */
	view: View<Screen>;
	push: (screen: Screen) => void;
	back: () => void;
	/** The configuration of a server that signs in with OAuth (`config.ts`'s rule), else undefined. */
	oauth: (name: string) => ServerConfig | undefined;
	/** Re-reads the credential states (from the keyring) and redraws when one changed. */
	refreshCredentials: () => void;
	/** Enables or disables a server in the file that defines it, and applies that to this session. */
	setEnabled: (name: string, enabled: boolean) => void;
	/** Hides a tool from the model or shows it (`excludeTools`), applies that, then calls `done`. */
	setToolHidden: (name: string, tool: string, hidden: boolean, done: () => void) => void;
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
	const scroll = new Window();
	return {
		header: () => [ui.theme.fg("accent", ui.theme.bold(title))],
		hint: "↑↓ PgUp PgDn scroll · esc back",
		body: (width, rows) => {
			const lines = text()
				.split("\n")
				.flatMap((line) => wrapTextWithAnsi(line, Math.max(width - 2, 10)));
			// One row for "(a–b of n)" when the text does not fit.
			const page = lines.length <= rows ? rows : Math.max(1, rows - 1);
			scroll.fit(lines.length, page);
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
			scroll.scroll(step);
		},
	};
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
		status.pins?.pending ? `⚑ ${status.pins.pending} changed: /mcp trust ${status.name}` : undefined,
		status.pins?.state === "not pinned" ? "not pinned" : undefined,
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
	ui.view.say(message);
	if (credentials) ui.refreshCredentials();
	// A message may follow a change of state: the rows follow it now, not at the next tick (Connect beside "failed").
	for (const screen of ui.view.stack) screen.changed?.();
	ui.tui.requestRender();
}
