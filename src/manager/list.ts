/**
 * The manager's list: rows it draws itself (so a row can put a coloured state first and end in an
 * ellipsis where the width cuts it), in as many terminal rows as the screen is given, with the
 * selection kept in view; ↑↓ move (wrapping unless `wrap` is false), PgUp/PgDn move a page, Enter
 * picks, Escape goes back.
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

export type ListEvents = Readonly<{
	pick: (row: Row) => void;
	cancel: () => void;
	/** Up on the first row goes to the last and Down on the last to the first (default true). */
	wrap?: boolean;
}>;

const MARKER = "→ ";

/** The first line of a window of `page` lines over `lines` that keeps `index` in view, moving as little as needed from `top`. */
export function windowTop(top: number, lines: number, page: number, index: number): number {
	const kept = Math.max(0, Math.min(top, index, lines - page));
	return index >= kept + page ? index - page + 1 : kept;
}

export function rowList(kb: KeybindingsManager, style: ListStyle, initial: readonly Row[], events: ListEvents): RowList {
	// The list's own state: its rows, the selected index and the first row shown.
	let rows = initial;
	let index = 0;
	let top = 0;
	let page = 1;
	const move = (to: number) => {
		index = Math.max(0, Math.min(to, rows.length - 1));
	};
	const wrap = events.wrap ?? true;
	return {
		render: (width, height) => {
			if (rows.length === 0) return [];
			// One row for "(n/m)" when the rows do not all fit.
			page = rows.length <= height ? rows.length : Math.max(1, height - 1);
			top = windowTop(top, rows.length, page, index);
			const shown = rows.slice(top, top + page).map((row, offset) => {
				const selected = top + offset === index;
				const text = row.text(Math.max(1, width - MARKER.length), selected);
				return truncateToWidth(`${selected ? style.marker(MARKER) : "  "}${text}`, width, "…");
			});
			const info = page < rows.length ? [style.info(truncateToWidth(`  (${index + 1}/${rows.length})`, width, "…"))] : [];
			return [...shown, ...info];
		},
		handleInput: (data) => {
			const count = rows.length;
			const paged = getSelectPageIndex(kb, data, index, count, page);
			if (kb.matches(data, "tui.select.cancel")) return events.cancel();
			if (count === 0) return;
			if (kb.matches(data, "tui.select.up")) return move(index > 0 ? index - 1 : wrap ? count - 1 : 0);
			if (kb.matches(data, "tui.select.down")) return move(index < count - 1 ? index + 1 : wrap ? 0 : index);
			if (paged !== undefined) return move(paged);
			const row = rows[index];
			if (row && kb.matches(data, "tui.select.confirm")) events.pick(row);
		},
		selected: () => rows[index],
		setRows: (next) => {
			const value = rows[index]?.value;
			rows = next;
			move(
				Math.max(
					0,
					next.findIndex((row) => row.value === value),
				),
			);
		},
	};
}
