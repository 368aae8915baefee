/**
 * The manager's list: rows it draws itself (so a row can put a coloured state first and end in an
 * ellipsis where the width cuts it), in as many terminal rows as the screen is given, with the
 * selection kept in view; ↑↓ move (wrapping), PgUp/PgDn move a page, Enter picks, Escape goes back.
 */
import { getSelectPageIndex, type KeybindingsManager, truncateToWidth } from "@earendil-works/pi-tui";

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

export function rowList(
	kb: KeybindingsManager,
	style: ListStyle,
	initial: readonly Row[],
	events: Readonly<{ pick: (row: Row) => void; cancel: () => void }>,
): RowList {
	const state = { rows: initial, index: 0, top: 0, page: 1 };
	const move = (index: number) => {
		state.index = Math.max(0, Math.min(index, state.rows.length - 1));
	};
	return {
		render: (width, height) => {
			const { rows } = state;
			if (rows.length === 0) return [];
			// One row for "(n/m)" when the rows do not all fit.
			const page = rows.length <= height ? rows.length : Math.max(1, height - 1);
			state.page = page;
			state.top = Math.max(0, Math.min(state.top, state.index, rows.length - page));
			if (state.index >= state.top + page) state.top = state.index - page + 1;
			const shown = rows.slice(state.top, state.top + page).map((row, offset) => {
				const selected = state.top + offset === state.index;
				const text = row.text(Math.max(1, width - MARKER.length), selected);
				return truncateToWidth(`${selected ? style.marker(MARKER) : "  "}${text}`, width, "…");
			});
			const info = page < rows.length ? [style.info(truncateToWidth(`  (${state.index + 1}/${rows.length})`, width, "…"))] : [];
			return [...shown, ...info];
		},
		handleInput: (data) => {
			const count = state.rows.length;
			const paged = getSelectPageIndex(kb, data, state.index, count, state.page);
			if (kb.matches(data, "tui.select.cancel")) return events.cancel();
			if (count === 0) return;
			if (kb.matches(data, "tui.select.up")) return move(state.index === 0 ? count - 1 : state.index - 1);
			if (kb.matches(data, "tui.select.down")) return move(state.index === count - 1 ? 0 : state.index + 1);
			if (paged !== undefined) return move(paged);
			const row = state.rows[state.index];
			if (row && kb.matches(data, "tui.select.confirm")) events.pick(row);
		},
		selected: () => state.rows[state.index],
		setRows: (rows) => {
			const value = state.rows[state.index]?.value;
			state.rows = rows;
			move(
				Math.max(
					0,
					rows.findIndex((row) => row.value === value),
				),
			);
		},
	};
}
