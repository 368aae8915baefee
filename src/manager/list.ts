/**
 * The manager's list: rows it draws itself (so a row can put a coloured state first and end in an
 * ellipsis where the width cuts it), in as many terminal rows as the screen is given, with the
 * selection kept in view; ↑↓ move (wrapping), PgUp/PgDn move a page, Enter picks, Escape goes back.
 */
import { getSelectPageIndex, type KeybindingsManager, truncateToWidth } from "@earendil-works/pi-tui";
import { Window } from "./view.ts";

export type Row = Readonly<{
	value: string;
	/** The row's text for a width, without the selection marker; the list cuts it with "…". */
	text: (width: number, selected: boolean) => string;
}>;

export type RowList = Readonly<{
	render: (width: number, height: number) => readonly string[];
	handleInput: (data: string) => void;
	selected: () => Row | undefined;
	/** New rows; the selection stays on the same value where it is still listed. */
	setRows: (rows: readonly Row[]) => void;
}>;

export type ListStyle = Readonly<{ marker: (text: string) => string; info: (text: string) => string }>;

const MARKER = "→ ";

/** The rows and the selected index; the window keeps the selection in view. */
class Selection {
	#rows: readonly Row[];
	#index = 0;
	readonly window = new Window();

	constructor(rows: readonly Row[]) {
		this.#rows = rows;
	}

	get rows(): readonly Row[] {
		return this.#rows;
	}

	get index(): number {
		return this.#index;
	}

	move(index: number): void {
		this.#index = Math.max(0, Math.min(index, this.#rows.length - 1));
	}

	/** New rows; the selection stays on the same value where it is still listed. */
	replace(rows: readonly Row[]): void {
		const value = this.#rows[this.#index]?.value;
		this.#rows = rows;
		this.move(
			Math.max(
				0,
				rows.findIndex((row) => row.value === value),
			),
		);
	}
}

export function rowList(
	kb: KeybindingsManager,
	style: ListStyle,
	initial: readonly Row[],
	events: Readonly<{ pick: (row: Row) => void; cancel: () => void }>,
): RowList {
	const state = new Selection(initial);
	const { window } = state;
	return {
		render: (width, height) => {
			const { rows } = state;
			if (rows.length === 0) return [];
			// One row for "(n/m)" when the rows do not all fit.
			const page = rows.length <= height ? rows.length : Math.max(1, height - 1);
			window.fit(rows.length, page, state.index);
			window.show(state.index);
			const shown = rows.slice(window.top, window.top + page).map((row, offset) => {
				const selected = window.top + offset === state.index;
				const text = row.text(Math.max(1, width - MARKER.length), selected);
				return truncateToWidth(`${selected ? style.marker(MARKER) : "  "}${text}`, width, "…");
			});
			const info = page < rows.length ? [style.info(truncateToWidth(`  (${state.index + 1}/${rows.length})`, width, "…"))] : [];
			return [...shown, ...info];
		},
		handleInput: (data) => {
			const count = state.rows.length;
			const paged = getSelectPageIndex(kb, data, state.index, count, window.page);
			if (kb.matches(data, "tui.select.cancel")) return events.cancel();
			if (count === 0) return;
			if (kb.matches(data, "tui.select.up")) return state.move(state.index === 0 ? count - 1 : state.index - 1);
			if (kb.matches(data, "tui.select.down")) return state.move(state.index === count - 1 ? 0 : state.index + 1);
			if (paged !== undefined) return state.move(paged);
			const row = state.rows[state.index];
			if (row && kb.matches(data, "tui.select.confirm")) events.pick(row);
		},
		selected: () => state.rows[state.index],
		setRows: (rows) => state.replace(rows),
	};
}
