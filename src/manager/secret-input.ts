/**
 * "Set secret NAME" on a server's screen: one item per `${secret:NAME}` the entry uses, and a masked
 * input whose value goes to the OS keyring for the server's identity (`Auth.setSecret`), never to the
 * screen, a file or the model. Once stored, the server is reset so that its next use connects with it.
 */
import { secretNames } from "../config/values.ts";
import { sanitize } from "../output/text.ts";
import { type Choice, managerText, type Screen, show, type Ui } from "./parts.ts";

/** Items for the secrets the server's entry uses; value `secret:NAME`. */
export function secretChoices(ui: Ui, name: string): Choice[] {
	const config = ui.view.config.servers.find((entry) => entry.name === name)?.config;
	if (!config) return [];
	const missing = ui.view.credentials.get(name)?.missingSecrets ?? [];
	return secretNames(config).map((secret) => ({
		value: `secret:${secret}`,
		label: `Set secret ${secret}`,
		description: missing.includes(secret)
			? "not stored: type it (hidden); it goes to the OS keyring"
			: "replace the stored value (typed hidden, kept in the OS keyring)",
	}));
}

/** What a keypress or a paste adds: bracketed paste markers and control characters never become part of a value. */
function typedText(data: string): string {
	const text = data.replaceAll("\u001b[200~", "").replaceAll("\u001b[201~", "");
	return [...text].filter((char) => char >= " " && char !== "\u007f").join("");
}

/** The masked input for one secret: Enter stores it, Escape leaves without storing anything. */
export function secretScreen(ui: Ui, name: string, secret: string): Screen {
	const typed = { value: "", busy: false };
	const store = () => {
		const config = ui.view.config.servers.find((entry) => entry.name === name)?.config;
		if (!config || typed.value === "" || typed.busy) return;
		typed.busy = true;
		ui.session.auth.setSecret(config, secret, typed.value).then(
			async () => {
				typed.value = "";
				await ui.session.runtime.reset(name);
				ui.back();
				show(ui, `Stored secret ${secret} in the OS keyring; the server uses it at its next connection`, true);
			},
			(error: Error) => {
				typed.busy = false;
				show(ui, sanitize(managerText(error)));
			},
		);
	};
	return {
		header: () => [
			ui.theme.fg("accent", ui.theme.bold(`${name}: set secret ${secret}`)),
			ui.theme.fg("muted", "Typed or pasted, never shown; stored only in the OS keyring, for this server's command."),
			...(ui.view.message ? [ui.theme.fg("warning", ui.view.message)] : []),
		],
		hint: "type or paste · enter store · esc back (nothing stored)",
		body: () => [`value: ${"•".repeat(Math.min(typed.value.length, 64))}${typed.busy ? "  storing…" : ""}`],
		input: (data) => {
			if (ui.kb.matches(data, "tui.select.cancel")) {
				typed.value = "";
				return ui.back();
			}
			if (ui.kb.matches(data, "tui.select.confirm")) return store();
			if (data === "\u007f" || data === "\b") typed.value = typed.value.slice(0, -1);
			else typed.value += typedText(data);
			ui.tui.requestRender();
		},
	};
}
