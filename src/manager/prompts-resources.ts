/**
 * The manager's Prompts and Resources screens for one server: its prompts (arguments and description; pick
 * one to fill in its arguments in a form, then the manager closes and sends it) and its resources and
 * templates (pick a resource to attach it as context for the model's next turn; a template's variables are
 * filled in a form first). The server connects when a screen opens, not before.
 */

import { wrapTextWithAnsi } from "@earendil-works/pi-tui";
import type { Prompt } from "@modelcontextprotocol/client";
import { listPrompts, listResources, suggestions } from "../catalog/prompts.ts";
import { escapeName, oneLine, sanitize } from "../output/text.ts";
import { loadSdk } from "../sdk.ts";
import { formScreen } from "./form.ts";
import type { RowList } from "./list.ts";
import { type Choice, choiceRows, list, managerText, type Screen, show, type Ui } from "./parts.ts";

/** What picking does: run a prompt with its arguments (the manager closes first), attach a resource (a line saying so). */
export type UserActs = Readonly<{
	prompt: (server: string, name: string, values: Readonly<Record<string, string>>) => void;
	attach: (server: string, uri: string) => Promise<string>;
}>;

/** Longest a completion may wait for its server. */
const COMPLETION_MS = 3000;

/** A screen of choices loaded from the server, with a note while loading, when empty, or on failure. */
function loadedScreen(
	ui: Ui,
	title: string,
	hint: string,
	load: () => Promise<readonly Choice[]>,
	pick: (value: string) => void,
): Screen {
	let loaded: Readonly<{ select?: RowList; note: string }> = { note: "connecting…" };
	load().then(
		(choices) => {
			const select = list(ui, choiceRows(ui, choices), (row) => pick(row.value));
			loaded = { select, note: choices.length === 0 ? "none" : "" };
			ui.tui.requestRender();
		},
		(error: Error) => {
			loaded = { note: sanitize(managerText(error)) };
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
			const state = loaded;
			const note = state.note ? wrapTextWithAnsi(ui.theme.fg("muted", state.note), width).slice(0, 3) : [];
			return [...note, ...(state.select?.render(width, Math.max(1, rows - note.length)) ?? [])];
		},
		input: (data) => {
			const state = loaded;
			if (!state.select && ui.kb.matches(data, "tui.select.cancel")) return ui.back();
			state.select?.handleInput(data);
		},
	};
}

/** A prompt's arguments in a form, every one offered (optional ones marked), with the server's completions. */
function promptForm(ui: Ui, server: string, prompt: Prompt, acts: UserActs): Screen {
	const ref = { type: "ref/prompt" as const, name: prompt.name };
	return formScreen(ui, {
		title: `${escapeName(server)}: prompt ${escapeName(prompt.name)}`,
		action: "Send as your message",
		fields: (prompt.arguments ?? []).map((arg) => ({
			name: arg.name,
			required: arg.required === true,
			description: arg.description,
		})),
		complete: (name, value, values) =>
			suggestions(ui.session, server, ref, { name, value }, values, AbortSignal.timeout(COMPLETION_MS)),
		submit: (values) => acts.prompt(server, prompt.name, values),
	});
}

export function promptsScreen(ui: Ui, server: string, acts: UserActs): Screen {
	const prompts = new Map<string, Prompt>();
	const load = async () =>
		(await listPrompts(ui.session, server)).map((prompt) => {
			prompts.set(prompt.name, prompt);
			const args = (prompt.arguments ?? []).map((arg) => `${escapeName(arg.name)}${arg.required ? "" : "?"}`).join(", ");
			return { value: prompt.name, label: escapeName(prompt.name), description: `(${args}) ${oneLine(prompt.description, 150)}` };
		});
	const pick = (name: string) => {
		const prompt = prompts.get(name);
		if (prompt && (prompt.arguments ?? []).length > 0) return ui.push(promptForm(ui, server, prompt, acts));
		acts.prompt(server, name, {});
	};
	const hint = "↑↓ navigate · enter fill in and send as your message · esc back";
	return loadedScreen(ui, `${escapeName(server)}: prompts`, hint, load, pick);
}

function attach(ui: Ui, server: string, uri: string, acts: UserActs): void {
	show(ui, `Attaching ${escapeName(uri)}…`);
	acts.attach(server, uri).then(
		(message) => show(ui, message),
		(error: Error) => show(ui, sanitize(managerText(error))),
	);
}

/** A template's variables in a form, with the server's completions; the expanded URI is attached. */
async function templateForm(ui: Ui, server: string, template: string, acts: UserActs): Promise<Screen> {
	const { UriTemplate } = await loadSdk();
	const uri = new UriTemplate(template);
	const ref = { type: "ref/resource" as const, uri: template };
	return formScreen(ui, {
		title: `${escapeName(server)}: ${escapeName(template)}`,
		action: "Attach",
		fields: uri.variableNames.map((name) => ({ name, required: true })),
		complete: (name, value, values) =>
			suggestions(ui.session, server, ref, { name, value }, values, AbortSignal.timeout(COMPLETION_MS)),
		submit: (values) => {
			ui.back();
			attach(ui, server, uri.expand(values), acts);
		},
	});
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
				description: `template: fill it in · ${oneLine(template.description ?? template.name, 100)}`,
			})),
		];
	};
	const pick = (uri: string) => {
		if (!templates.has(uri)) return attach(ui, server, uri, acts);
		templateForm(ui, server, uri, acts).then(
			(form) => ui.push(form),
			(error: Error) => show(ui, sanitize(managerText(error))),
		);
	};
	const hint = "↑↓ navigate · enter attach for the model's next turn · esc back";
	return loadedScreen(ui, `${escapeName(server)}: resources`, hint, load, pick);
}
