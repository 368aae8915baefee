/**
 * What every manager screen is made of: the screen and UI records, lists of choices, the scrollable
 * text screen, and a server's state as the manager shows it (its colour, its facts, one-line results).
 */
import type { Theme } from "@earendil-works/pi-coding-agent";
import { type KeybindingsManager, type TUI, truncateToWidth, visibleWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import type { Tool } from "@modelcontextprotocol/client";
import type { CredentialState, ServerStatus, Session } from "../contracts.ts";
import { errorText, type Words, wordedOf } from "../errors.ts";
import type { ServerConfig } from "../schema.ts";
import { type ListEvents, type Row, type RowList, rowList, windowTop } from "./list.ts";
import type { View } from "./view.ts";

export type Screen = Readonly<{
	/** The lines above the body; each is cut to `width` unless the screen wraps it itself. */
	header: (width: number) => readonly string[];
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
	session: Session;
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
	/** A server's Prompts and Resources screens (`prompts-resources.ts`), where the session can take them. */
	userScreens?: Readonly<{ prompts: (server: string) => Screen; resources: (server: string) => Screen }>;
}>;

export type Choice = Readonly<{ value: string; label: string; description?: string }>;

/** `text` cut or padded to exactly `width` columns (a cut ends in "…"). */
export function cell(text: string, width: number): string {
	return truncateToWidth(text, Math.max(0, width), "…", true);
}

/** `text` (plain) cut from the start to at most `width` columns, so that its end shows ("…/note/{id}"). */
function tail(text: string, width: number): string {
	if (visibleWidth(text) <= width) return text;
	const chars = [...text];
	let kept = "";
	for (let at = chars.length - 1; at >= 0 && visibleWidth(`…${chars[at]}${kept}`) <= width; at -= 1) kept = `${chars[at]}${kept}`;
	return `…${kept}`;
}

/**
 * A list of choices: the label in a column (as wide as the longest, up to half the width), the description
 * muted beside it. A label too long for its column keeps its end, where URIs and paths differ.
 */
export function choiceRows(ui: Ui, choices: readonly Choice[]): Row[] {
	const longest = Math.max(...choices.map((choice) => visibleWidth(choice.label)), 0) + 2;
	return choices.map((choice) => ({
		value: choice.value,
		text: (width, selected) => {
			const column = Math.min(longest, Math.max(28, Math.floor(width / 2)));
			const cut = tail(choice.label, column - 2);
			const label = selected ? ui.theme.fg("accent", cut) : cut;
			if (!choice.description || width < column + 10) return label;
			return `${cell(label, column)}${ui.theme.fg("muted", choice.description)}`;
		},
	}));
}

export function list(ui: Ui, rows: readonly Row[], pick: (row: Row) => void, options: Pick<ListEvents, "wrap"> = {}): RowList {
	const style = { marker: (text: string) => ui.theme.fg("accent", text), info: (text: string) => ui.theme.fg("dim", text) };
	return rowList(ui.kb, style, rows, { pick, cancel: () => ui.back(), ...options });
}

/** What a text screen may add to its title and scrolling keys. */
export type TextOptions = Readonly<{
	/** Lines under the title. */
	lines?: () => readonly string[];
	hint?: string;
	/** A key of the screen's own, tried before the scrolling keys; true when it was taken. */
	key?: (data: string) => boolean;
	/** The line of the text (before wrapping) to bring into view on the first draw. */
	start?: number;
}>;

/** A scrollable text: up/down/page keys scroll, Escape goes back. */
export function textScreen(ui: Ui, title: string, text: () => string, options: TextOptions = {}): Screen {
	// The screen's scroll position: its first line, and the page and length last drawn.
	let top = 0;
	let page = 1;
	let length = 0;
	let drawn = false;
	return {
		header: () => [ui.theme.fg("accent", ui.theme.bold(title)), ...(options.lines?.() ?? [])],
		hint: options.hint ?? "↑↓ PgUp PgDn scroll · esc back",
		body: (width, rows) => {
			const wrapped = text()
				.split("\n")
				.map((line) => wrapTextWithAnsi(line, Math.max(width - 2, 10)));
			const lines = wrapped.flat();
			if (!drawn && options.start) top = wrapped.slice(0, options.start).flat().length;
			drawn = true;
			// One row for "(a–b of n)" when the text does not fit.
			page = lines.length <= rows ? rows : Math.max(1, rows - 1);
			length = lines.length;
			top = windowTop(top, length, page, top);
			const shown = lines.slice(top, top + page).map((line) => ` ${line}`);
			const more = lines.length > page ? [ui.theme.fg("dim", ` (${top + 1}–${top + shown.length} of ${lines.length})`)] : [];
			return [...shown, ...more];
		},
		input: (data) => {
			const { kb } = ui;
			if (kb.matches(data, "tui.select.cancel")) return ui.back();
			if (options.key?.(data)) return;
			const steps: readonly (readonly [Parameters<KeybindingsManager["matches"]>[1], number])[] = [
				["tui.select.up", -1],
				["tui.select.down", 1],
				["tui.select.pageUp", -page],
				["tui.select.pageDown", page],
			];
			const step = steps.find(([key]) => kb.matches(data, key))?.[1] ?? 0;
			top = Math.max(0, Math.min(top + step, length - page));
		},
	};
}

export function statusOf(ui: Ui, name: string): ServerStatus | undefined {
	return ui.session.runtime.status().find((status) => status.name === name);
}

/** The state to show: an idle or failed server missing a stored secret or a usable sign-in needs it. */
export function stateOf(status: ServerStatus, credential: CredentialState | undefined): string {
	if (!credential || (status.state !== "idle" && status.state !== "failed")) return status.state;
	const [secret] = credential.missingSecrets;
	if (secret !== undefined) return `needs secret ${secret}`;
	return credential.needsSignIn ? "needs sign-in" : status.state;
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
	if (state === "connecting" || state.startsWith("needs ")) return "warning";
	return state === "disabled" ? "dim" : "muted";
}

/** The next steps messages name, as the manager's items (a server's screen has both). */
export const MANAGER_WORDS: Words = { reconnect: () => "Reconnect", login: () => "Log in" };

/** An error in the manager's words: its message made again with them where it names a next step. */
export function managerText(error: unknown): string {
	return wordedOf(error)?.(MANAGER_WORDS) ?? errorText(error);
}

/** A server's failure in the manager's words. */
export function statusError(status: ServerStatus): string | undefined {
	return status.errorIn?.(MANAGER_WORDS) ?? status.error;
}

/** A one-line result under the server's header; credential states are re-read when `credentials`. */
export function show(ui: Ui, message: string, credentials = false): void {
	ui.view.say(message);
	if (credentials) ui.refreshCredentials();
	// A message may follow a change of state: the rows follow it now, not at the next tick (Connect beside "failed").
	for (const screen of ui.view.stack) screen.changed?.();
	ui.tui.requestRender();
}
