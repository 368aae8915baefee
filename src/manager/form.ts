/**
 * A form in the manager: a prompt's arguments or a resource template's variables, each filled in by
 * typing, with the server's completions for the field being typed (Tab takes one), optional fields
 * marked; the last row sends or attaches once every required field has a value.
 */
import { matchesKey } from "@earendil-works/pi-tui";
import { escapeName, oneLine, stripProse } from "../output/text.ts";
import { cell, type Screen, show, type Ui } from "./parts.ts";

export type Field = Readonly<{ name: string; required: boolean; description?: string }>;

export type FormOptions = Readonly<{
	title: string;
	/** The last row's word: what submitting does ("Send", "Attach"). */
	action: string;
	fields: readonly Field[];
	/** The server's completions for `field` typed so far as `value`, the other values given as context. */
	complete: (field: string, value: string, values: Readonly<Record<string, string>>) => Promise<readonly string[]>;
	submit: (values: Readonly<Record<string, string>>) => void;
}>;

/** Most completions shown under the form. */
const SHOWN = 5;

export function formScreen(ui: Ui, form: FormOptions): Screen {
	const { fields, theme } = { fields: form.fields, theme: ui.theme };
	// The form's own state: the values typed, the selected row (the fields, then the action) and the completions.
	const values: Record<string, string> = {};
	let at = 0;
	let asked = 0;
	let offered: readonly string[] = [];
	let taken = -1;
	const field = () => fields[at];
	// Typing keeps the completions that still fit what is typed until the server's new answer replaces them,
	// so a Tab pressed right after a key takes one (clearing them dropped that Tab); moving to another field clears.
	const offer = (typing = false) => {
		asked += 1;
		const mine = asked;
		const current = field();
		const typed = current ? (values[current.name] ?? "") : "";
		offered = typing ? offered.filter((value) => value.startsWith(typed) && value !== typed) : [];
		taken = -1;
		if (!current) return;
		form.complete(current.name, typed, values).then(
			(found) => {
				if (mine !== asked) return;
				offered = found.filter((value) => value !== typed).slice(0, 50);
				ui.tui.requestRender();
			},
			() => undefined,
		);
	};
	const type = (change: (value: string) => string) => {
		const current = field();
		if (!current) return;
		values[current.name] = change(values[current.name] ?? "");
		offer(true);
	};
	const submit = () => {
		const missing = fields.filter((each) => each.required && !values[each.name]);
		if (missing.length > 0) {
			return show(ui, `Fill in ${missing.map((each) => escapeName(each.name)).join(", ")} first (required).`);
		}
		form.submit(Object.fromEntries(Object.entries(values).filter(([, value]) => value !== "")));
	};
	offer();
	const column = Math.min(24, Math.max(0, ...fields.map((each) => escapeName(each.name).length + (each.required ? 1 : 0))) + 2);
	return {
		header: () => [
			theme.fg("accent", theme.bold(form.title)),
			...(ui.view.message ? [theme.fg("warning", ui.view.message)] : []),
		],
		hint: "type a value · tab complete · ↑↓ move · enter next/submit · esc back",
		body: (width) => {
			const rows = fields.map((each, index) => {
				const selected = index === at;
				const name = `${escapeName(each.name)}${each.required ? "*" : ""}`;
				const value = values[each.name] ?? "";
				const shown = value
					? escapeName(value)
					: theme.fg("dim", each.required ? "(required)" : `(optional) ${oneLine(each.description, 80)}`);
				const cursor = selected ? theme.fg("accent", "▏") : "";
				return `${selected ? theme.fg("accent", "→ ") : "  "}${cell(selected ? theme.fg("accent", name) : name, column)}${value ? shown : ""}${cursor}${value ? "" : shown}`;
			});
			const action = at === fields.length ? theme.fg("accent", `→ [ ${form.action} ]`) : `  [ ${form.action} ]`;
			const current = field();
			const about = current?.description ? [theme.fg("muted", `  ${oneLine(stripProse(current.description), width)}`)] : [];
			const more = offered.length > SHOWN ? ` (+${offered.length - SHOWN})` : "";
			const list = offered
				.slice(0, SHOWN)
				.map((value, index) => (index === taken ? theme.fg("accent", escapeName(value)) : escapeName(value)));
			const completions = current && offered.length > 0 ? [theme.fg("muted", `  tab: ${list.join(" · ")}${more}`)] : [];
			return [...rows, action, "", ...about, ...completions];
		},
		input: (data) => {
			const { kb } = ui;
			if (kb.matches(data, "tui.select.cancel")) return ui.back();
			if (kb.matches(data, "tui.select.up")) {
				at = Math.max(0, at - 1);
				return offer();
			}
			if (kb.matches(data, "tui.select.down")) {
				at = Math.min(fields.length, at + 1);
				return offer();
			}
			if (kb.matches(data, "tui.select.confirm")) {
				if (at === fields.length) return submit();
				at += 1;
				return offer();
			}
			const current = field();
			if (!current) return;
			if (matchesKey(data, "tab")) {
				if (offered.length === 0) return;
				taken = (taken + 1) % Math.min(offered.length, SHOWN);
				values[current.name] = offered[taken] ?? "";
				return;
			}
			if (matchesKey(data, "backspace")) return type((value) => value.slice(0, -1));
			// Printable text only (a key or a paste); other keys are not ours.
			if (!/[\p{Cc}]/u.test(data)) type((value) => value + data);
		},
	};
}
