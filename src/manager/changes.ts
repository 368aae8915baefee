/**
 * A server's definitions withheld until the user approves them (#47), in the manager: the rows its
 * screen lists (one per pending change, then "Approve all N"), one change's word diff (old → new,
 * hidden characters escaped, removed and added words coloured and also marked `[-…-]` `{+…+}` for
 * terminals without colour, wrapped to the width and scrolled), and approving one or all. Only what the
 * user was shown is approved: a definition that changed again since stays withheld. Escape leaves every
 * change pending. `/mcp trust <server>` opens the manager at this same list.
 */
import type { PendingChange } from "../contracts.ts";
import { escapeName, sanitize } from "../output/text.ts";
import { pendingWhat, type Segment, wordDiff } from "../pins/diff.ts";
import { type Choice, choiceRows, list, managerText, type Screen, show, statusOf, textScreen, type Ui } from "./parts.ts";

export type Pending = Readonly<{
	/** One choice per pending change (value `change:<key>`), then "Approve all N"; none while nothing is pending. */
	choices: () => Choice[];
	/** A line for the server's header: checking, nothing changed, or why the changes cannot be read. */
	note: () => string | undefined;
	/** Takes a picked row of ours (a diff, or approving all); false for any other row. */
	pick: (value: string) => boolean;
	/** Loads the changes again when the count the runtime withholds moved (a list_changed, an approval). */
	changed: () => void;
}>;

const plural = (n: number) => `${n} definition${n === 1 ? "" : "s"}`;

/** Why a change is withheld: its title after what it is ("changed since approved", "new", …). */
const why = (change: PendingChange) => change.title.slice(pendingWhat(change).length + 2);

/** The diff as text: removed and added words coloured and marked, line by line so that wrapping keeps the colour. */
function painted(ui: Ui, segments: readonly Segment[]): string {
	const mark = (segment: Segment) => {
		const [open, close, color] =
			segment.op === "del" ? (["[-", "-]", "toolDiffRemoved"] as const) : (["{+", "+}", "toolDiffAdded"] as const);
		return `${open}${segment.text}${close}`
			.split("\n")
			.map((line) => ui.theme.fg(color, line))
			.join("\n");
	};
	return segments.map((segment) => (segment.op === "same" ? segment.text : mark(segment))).join("");
}

/** The line (of the text before wrapping) just above the first change: where the diff opens. */
function firstChangeLine(segments: readonly Segment[]): number {
	const first = segments.findIndex((segment) => segment.op !== "same");
	const before = segments.slice(0, Math.max(0, first)).map((segment) => segment.text);
	return Math.max(0, before.join("").split("\n").length - 2);
}

function diffScreen(ui: Ui, name: string, change: PendingChange, approve: (shown: readonly PendingChange[]) => void): Screen {
	const { theme } = ui;
	const segments = wordDiff(change.before, change.after);
	const text = painted(ui, segments);
	const legend = `${theme.fg("toolDiffRemoved", "[-removed-]")} ${theme.fg("toolDiffAdded", "{+added+}")}`;
	return textScreen(ui, `${escapeName(name)}: ${pendingWhat(change)}`, () => text, {
		lines: () => [
			theme.fg("muted", `${why(change)} · old → new: `) + legend,
			...(ui.view.message ? [theme.fg("warning", ui.view.message)] : []),
		],
		hint: "↑↓ PgUp PgDn scroll · a approve · esc back (stays withheld)",
		key: (data) => {
			if (data !== "a" && data !== "A") return false;
			ui.back();
			approve([change]);
			return true;
		},
		start: firstChangeLine(segments),
	});
}

function confirmAll(ui: Ui, name: string, shown: readonly PendingChange[], approve: (shown: readonly PendingChange[]) => void) {
	const { theme } = ui;
	const choices = [
		{ value: "no", label: "No, leave them withheld" },
		{ value: "yes", label: `Yes, approve ${plural(shown.length)}`, description: "the model sees them from now on" },
	];
	const select = list(ui, choiceRows(ui, choices), (row) => {
		ui.back();
		if (row.value === "yes") approve(shown);
	});
	return {
		header: () => [
			theme.fg("warning", theme.bold(`Approve every change of "${escapeName(name)}" without reading its diff?`)),
			theme.fg("muted", shown.map(pendingWhat).join(", ")),
		],
		hint: "↑↓ navigate · enter choose · esc cancel",
		body: (width: number, rows: number) => select.render(width, rows),
		input: (data: string) => select.handleInput(data),
	} satisfies Screen;
}

/** Approves what the user was shown, each only if it is still what they saw; what to say. */
async function approveShown(ui: Ui, name: string, shown: readonly PendingChange[]): Promise<string> {
	const now = await ui.session.runtime.changes(name);
	const same = shown.filter((seen) =>
		now.pending.some((each) => each.key === seen.key && each.before === seen.before && each.after === seen.after),
	);
	const moved = shown.length - same.length;
	const again = moved > 0 ? `${plural(moved)} changed again since shown: still withheld, review again.` : "";
	if (same.length === 0) return `Nothing approved: ${again}`;
	const count = await ui.session.runtime.approve(
		name,
		same.map((each) => each.key),
	);
	const what = count === 1 && same[0] ? pendingWhat(same[0]) : plural(count);
	return `Approved ${what}: the model sees ${count === 1 ? "it" : "them"} now.${again ? ` ${again}` : ""}`;
}

/**
 * The pending changes of `name` for its screen, loaded (which connects) at once when `check`, else only
 * once the runtime withholds some; `refresh` redraws the screen's rows after a load (`appeared`: the first
 * changes listed, where the selection should go).
 */
export function pendingChanges(ui: Ui, name: string, check: boolean, refresh: (appeared: boolean) => void): Pending {
	// What the last load found, the withheld count it was made for, and whether a load is running.
	let changes: readonly PendingChange[] = [];
	let loadedFor = 0;
	let loading = false;
	let note: string | undefined;
	const withheld = () => statusOf(ui, name)?.pins?.pending ?? 0;
	const load = () => {
		loading = true;
		const none = changes.length === 0;
		if (changes.length === 0) note = "checking for changes…";
		ui.session.runtime
			.changes(name)
			.then(
				(review) => {
					changes = review.pending;
					note = review.error ?? (check && changes.length === 0 ? "Nothing changed since you approved it." : undefined);
				},
				(error: Error) => {
					note = sanitize(managerText(error));
				},
			)
			.finally(() => {
				loading = false;
				loadedFor = withheld();
				refresh(none && changes.length > 0);
			});
	};
	const approve = (shown: readonly PendingChange[]) => {
		show(ui, shown.length === 1 ? "Approving…" : `Approving ${plural(shown.length)}…`);
		approveShown(ui, name, shown)
			.catch((error: Error) => sanitize(managerText(error)))
			.then((message) => show(ui, message));
	};
	if (check || withheld() > 0) load();
	return {
		choices: () =>
			changes.length === 0
				? []
				: [
						...changes.map((change) => ({
							value: `change:${change.key}`,
							label: `⚑ ${pendingWhat(change)}`,
							description: `${why(change)} · enter: diff`,
						})),
						{ value: "approve-all", label: `Approve all ${changes.length}`, description: "without each diff (asks first)" },
					],
		note: () => note,
		pick: (value) => {
			if (value === "approve-all") {
				ui.push(confirmAll(ui, name, changes, approve));
				return true;
			}
			const change = value.startsWith("change:") ? changes.find((each) => `change:${each.key}` === value) : undefined;
			if (change) ui.push(diffScreen(ui, name, change, approve));
			return change !== undefined;
		},
		changed: () => {
			const count = withheld();
			if (loading || count === loadedFor) return;
			if (count > 0) return load();
			// Nothing withheld any more (all approved, or the server reset): nothing to list.
			changes = [];
			loadedFor = 0;
		},
	};
}
