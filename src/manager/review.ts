/**
 * `/mcp trust <server>` (#47) outside the TUI, where the manager (`changes.ts`) cannot open: in RPC mode
 * (dialogs, no custom screens) the withheld definitions one per choice, a choice shows its word diff
 * (old → new, hidden characters escaped, lines cut to 76 columns) to approve it; approve one or all;
 * cancelling leaves them pending. In print and JSON modes the changes are reported and nothing is approved.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { PendingChange, Session } from "../contracts.ts";
import { diffText, wordDiff } from "../pins/diff.ts";

const WIDTH = 76;

/** A change's diff as rows of at most `WIDTH` characters: `[-removed-]`, `{+added+}`. */
export function diffRows(change: PendingChange): string[] {
	const text = diffText(wordDiff(change.before, change.after));
	return text.split("\n").flatMap((line) => {
		const rows: string[] = [];
		for (let at = 0; at < line.length || at === 0; at += WIDTH) rows.push(line.slice(at, at + WIDTH));
		return rows;
	});
}

const plural = (n: number) => `${n} definition${n === 1 ? "" : "s"}`;

/** Runs the review; resolves to what to report. */
export async function reviewChanges(ctx: ExtensionContext, session: Session, name: string): Promise<string> {
	let review = await session.runtime.changes(name, ctx.signal);
	if (review.error && review.pending.length > 0) return review.error;
	if (review.pending.length === 0) return `${name}: nothing changed since you approved it`;
	if (!ctx.hasUI) {
		const shown = review.pending.map((change) => [`${change.title}:`, ...diffRows(change)].join("\n"));
		return [`${name}: ${plural(review.pending.length)} withheld until approved (nothing approved here):`, ...shown].join("\n\n");
	}
	let approved = 0;
	while (review.pending.length > 0) {
		const all = `Approve all ${review.pending.length}`;
		const titles = review.pending.map((change, i) => `${i + 1}. ${change.title}`);
		const pick = await ctx.ui.select(`${name}: ${plural(review.pending.length)} withheld until you approve`, [all, ...titles]);
		if (pick === undefined) break;
		if (pick === all) {
			approved += await session.runtime.approve(name, undefined, ctx.signal);
			break;
		}
		const change = review.pending[titles.indexOf(pick)];
		if (!change) break;
		const approve = "Approve this one";
		const back = "Back (leave it pending)";
		const choice = await ctx.ui.select(`${change.title} — [-old-] {+new+}`, [approve, back, ...diffRows(change)]);
		if (choice === approve) approved += await session.runtime.approve(name, [change.key], ctx.signal);
		review = await session.runtime.changes(name, ctx.signal);
	}
	const left = (await session.runtime.changes(name, ctx.signal)).pending.length;
	return `${name}: approved ${plural(approved)}${left > 0 ? `; ${plural(left)} still withheld` : ""}`;
}
