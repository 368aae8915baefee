/**
 * The measure of figure 7 on every catalog (issue #42): each catalog's tools as one cross-server pool,
 * its tuning and held-out query halves, and what the model reads for a query (the `tools` result text
 * as `rankedListing` renders it): whether an acceptable tool is among its first 20 names, whether it
 * carries the weak-match names, and its o200k tokens. Shared by the figure and the tuning script
 * (`search-tune.ts`), so both measure the same thing.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { rankedListing } from "../../src/catalog/listing.ts";
import type { SearchTool } from "../../src/search/rank.ts";
import { CATALOG2_HOLDOUT } from "../data/catalog2-holdout.ts";
import { CATALOG2_TUNE } from "../data/catalog2-tune.ts";
import { FRESH, HOLDOUT, type Query, split } from "../data/discovery-queries.ts";
import { ROOT } from "../lib/pi.ts";

export type Entry = Readonly<{ server: string; tool: SearchTool & Readonly<{ origin: string }>; id: string }>;
export type Half = Readonly<{ name: string; queries: readonly Query[] }>;
export type Catalog = Readonly<{ name: string; entries: readonly Entry[]; tune: readonly Half[]; heldOut: readonly Half[] }>;

type Listed = Readonly<{
	servers: readonly Readonly<{ server: string; package: string; version: string; tools: readonly SearchTool[] }>[];
}>;

/** Catalog 2: published servers outside the shared catalog, as their own tools/list gave them. */
export function catalog2(): Entry[] {
	const listed = JSON.parse(readFileSync(join(ROOT, "bench", "data", "catalog2.json"), "utf8")) as Listed;
	return listed.servers.flatMap((source) =>
		source.tools.map((tool) => ({
			server: source.server,
			tool: { ...tool, origin: `npm:${source.package}@${source.version}` },
			id: `${source.server}/${tool.name}`,
		})),
	);
}

/** Both catalogs with their halves: catalog 1's two query sets (each split in two), catalog 2's own. */
export function catalogs(first: readonly Entry[]): Catalog[] {
	const { tune, heldOut } = split();
	return [
		{
			name: "catalog 1",
			entries: first,
			tune: [
				{ name: "first set, tuning", queries: tune },
				{ name: "second set, tuning (FRESH)", queries: FRESH },
			],
			heldOut: [
				{ name: "first set, held out", queries: heldOut },
				{ name: "second set, held out (HOLDOUT)", queries: HOLDOUT },
			],
		},
		{
			name: "catalog 2",
			entries: catalog2(),
			tune: [{ name: "tuning", queries: CATALOG2_TUNE }],
			heldOut: [{ name: "held out", queries: CATALOG2_HOLDOUT }],
		},
	];
}

export const byServer = (entries: readonly Entry[]) =>
	[...new Set(entries.map((entry) => entry.server))].map((server) => ({
		server,
		tools: entries.filter((entry) => entry.server === server).map((entry) => entry.tool),
	}));

/** The `server/tool` ids a result's text names, in order: its `server/tool [hints] — …` lines, then its `server: a b c` name lines. */
export function namesInOrder(text: string): string[] {
	const ids: string[] = [];
	for (const line of text.split("\n")) {
		const hit = /^([^\s/:]+)\/(\S+?)(?: \[[^\]]*\])?(?: — |$)/.exec(line);
		if (hit) ids.push(`${hit[1]}/${hit[2]}`);
		const names = /^([^\s/:]+): (.+)$/.exec(line);
		if (names) for (const name of (names[2] ?? "").split(" ")) ids.push(`${names[1]}/${name}`);
	}
	return ids;
}

/** What the model reads for one query. */
export type Reading = Readonly<{ query: Query; first20: boolean; anywhere: boolean; tokens: number; weak: boolean }>;

export async function read(entries: readonly Entry[], queries: readonly Query[]): Promise<Reading[]> {
	const sources = byServer(entries);
	return Promise.all(
		queries.map(async (query) => {
			const listing = await rankedListing(sources, query.q, { action: "tools", query: query.q }, false);
			const text = [listing.header, ...listing.lines, ...(listing.more ? [listing.more.trim()] : [])].join("\n");
			const names = namesInOrder(text);
			return {
				query,
				first20: names.slice(0, 20).some((id) => query.expect.includes(id)),
				anywhere: names.some((id) => query.expect.includes(id)),
				tokens: encode(text).length,
				weak: /^(Weak match|Tools by name)/m.test(text),
			};
		}),
	);
}

export type ReadSummary = Readonly<{ first20: number; weak: number; meanTokens: number; maxTokens: number; n: number }>;

export function summarizeReading(readings: readonly Reading[]): ReadSummary {
	const n = readings.length || 1;
	const tokens = readings.map((reading) => reading.tokens);
	return {
		first20: readings.filter((reading) => reading.first20).length / n,
		weak: readings.filter((reading) => reading.weak).length / n,
		meanTokens: tokens.reduce((sum, value) => sum + value, 0) / n,
		maxTokens: Math.max(0, ...tokens),
		n: readings.length,
	};
}
