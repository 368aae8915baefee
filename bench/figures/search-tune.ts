/**
 * The tuning loop of issue #42, by hand: `node --import tsx bench/figures/search-tune.ts`. Prints, for
 * every catalog, each half's top-1 / top-3 for pi-mcp, Pi 1.6's built-in ranker and plain BM25, and
 * what the model reads; the misses of the TUNING halves only (`--misses`). A held-out half's misses
 * are never printed: it is measured, not looked at.
 */
import { catalog, loadPeers, rankers, score } from "./discovery.ts";
import { catalogs, read, summarizeReading } from "./search-measure.ts";

const showMisses = process.argv.includes("--misses");
const two = (value: number) => value.toFixed(2);
const peers = rankers(await loadPeers()).filter((ranker) => ["pi-mcp", "Pi 1.6 Bm25Ranker", "plain BM25"].includes(ranker.name));

for (const set of catalogs(catalog())) {
	const ranks = peers.map((ranker) => ({ name: ranker.name, rank: ranker.prepare(set.entries) }));
	for (const [kind, halves] of [
		["tune", set.tune],
		["held", set.heldOut],
	] as const) {
		for (const half of halves) {
			const scores = ranks.map(
				({ name, rank }) => `${name} ${two(score(rank, half.queries).top1)}/${two(score(rank, half.queries).top3)}`,
			);
			const readings = await read(set.entries, half.queries);
			const reading = summarizeReading(readings);
			console.log(
				`${set.name} · ${half.name} (n ${half.queries.length}): top-1/top-3 ${scores.join(", ")}; first 20 names ${two(reading.first20)}, extra names ${two(reading.weak)}, tokens mean ${reading.meanTokens.toFixed(0)} max ${reading.maxTokens}`,
			);
			if (kind !== "tune" || !showMisses) continue;
			for (const missed of readings.filter((entry) => !entry.first20)) console.log(`   NOT IN FIRST 20 "${missed.query.q}"`);
			const ours = ranks[0]?.rank;
			for (const query of half.queries) {
				const got = ours?.(query.q) ?? [];
				if (query.expect.includes(got[0] ?? "")) continue;
				const mark = got.slice(0, 3).some((id) => query.expect.includes(id)) ? "top-3" : "MISS ";
				console.log(`   ${mark} "${query.q}" want ${query.expect.join(",")} got ${got.slice(0, 3).join(", ")}`);
			}
		}
	}
}
