/**
 * The manager's Prompts and Resources screens for one server: its prompts (arguments and description; pick
 * one to send it, the manager closes and asks for required arguments) and its resources and templates
 * (pick a resource to attach it as context for the model's next turn). The server connects when a screen
 * opens, not before.
 */
import { wrapTextWithAnsi } from "@earendil-works/pi-tui";
import { listPrompts, listResources } from "../catalog/prompts.ts";
import { escapeName, oneLine, sanitize } from "../output/text.ts";
import type { RowList } from "./list.ts";
import { type Choice, choiceRows, list, type Screen, show, type Ui } from "./parts.ts";
import { Slot } from "./view.ts";

/** What picking does: run a prompt (the manager closes first), attach a resource (a line saying so). */
export type UserActs = Readonly<{
	prompt: (server: string, name: string) => void;
	attach: (server: string, uri: string) => Promise<string>;
}>;

/** A screen of choices loaded from the server, with a note while loading, when empty, or on failure. */
function loadedScreen(
	ui: Ui,
	title: string,
	hint: string,
	load: () => Promise<readonly Choice[]>,
	pick: (value: string) => void,
): Screen {
	const loaded = new Slot<Readonly<{ select?: RowList; note: string }>>({ note: "connecting…" });
	load().then(
		(choices) => {
			const select = list(ui, choiceRows(ui, choices), (row) => pick(row.value));
			loaded.set({ select, note: choices.length === 0 ? "none" : "" });
			ui.tui.requestRender();
		},
		(error: Error) => {
			loaded.set({ note: sanitize(error.message) });
			ui.tui.requestRender();
		},
	);
	return {
		header: () => [
			ui.theme.fg("accent", ui.theme.bold(title)),
			...(ui.view.message ? [ui.theme.fg("warning", ui.view.message)] : []),
		],
		hint,
		body: (width, rows) => {
			const state = loaded.get();
			const note = state.note ? wrapTextWithAnsi(ui.theme.fg("muted", state.note), width).slice(0, 3) : [];
			return [...note, ...(state.select?.render(width, Math.max(1, rows - note.length)) ?? [])];
		},
		input: (data) => {
			const state = loaded.get();
			if (!state.select && ui.kb.matches(data, "tui.select.cancel")) return ui.back();
			state.select?.handleInput(data);
		},
	};
}

export function promptsScreen(ui: Ui, server: string, acts: UserActs): Screen {
	const load = async () =>
		(await listPrompts(ui.session, server)).map((prompt) => {
			const args = (prompt.arguments ?? []).map((arg) => `${escapeName(arg.name)}${arg.required ? "" : "?"}`).join(", ");
			return { value: prompt.name, label: escapeName(prompt.name), description: `(${args}) ${oneLine(prompt.description, 150)}` };
		});
	const hint = "↑↓ navigate · enter send it as your message · esc back";
	return loadedScreen(ui, `${escapeName(server)}: prompts`, hint, load, (name) => acts.prompt(server, name));
}

export function resourcesScreen(ui: Ui, server: string, acts: UserActs): Screen {
	const templates = new Set<string>();
	const load = async () => {
		const listed = await listResources(ui.session, server);
		for (const template of listed.templates) templates.add(template.uriTemplate);
		return [
			...listed.resources.map((resource) => ({
				value: resource.uri,
				label: escapeName(resource.uri),
				description: oneLine(resource.description ?? resource.name, 150),
			})),
			...listed.templates.map((template) => ({
				value: template.uriTemplate,
				label: escapeName(template.uriTemplate),
				description: `template: /mcp attach ${escapeName(server)} <uri> · ${oneLine(template.description ?? template.name, 100)}`,
			})),
		];
	};
	const pick = (uri: string) => {
		if (templates.has(uri))
			return show(ui, `A template: fill it in with /mcp attach ${escapeName(server)} <uri> (Tab completes).`);
		show(ui, `Attaching ${escapeName(uri)}…`);
		acts.attach(server, uri).then(
			(message) => show(ui, message),
			(error: Error) => show(ui, sanitize(error.message)),
		);
	};
	const hint = "↑↓ navigate · enter attach for the model's next turn · esc back";
	return loadedScreen(ui, `${escapeName(server)}: resources`, hint, load, pick);
}
