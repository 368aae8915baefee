/**
 * The runtime's review operations (#47): every kind listed to find what is withheld, approving some or
 * all (then listing again past the SDK's cache), and refusing a request that names a withheld prompt or
 * template before anything is sent.
 */
import type { Named, PinReview } from "../contracts.ts";
import { CallFailed } from "../errors.ts";
import { escapeName } from "../output/text.ts";
import type { ConnectionTable } from "./table.ts";

type Table = ConnectionTable;

/** Lists the prompts and templates a server offers (what is withheld is found on the way). */
async function listOthers(t: Table, name: string, signal: AbortSignal | undefined, refresh = false): Promise<void> {
	const { client } = await t.ready(name, signal);
	const options = { signal, timeout: t.configOf(name).requestTimeoutMs, ...(refresh ? { cacheMode: "refresh" as const } : {}) };
	const offers = client.getServerCapabilities();
	await Promise.all([
		offers?.prompts ? client.listPrompts(undefined, options).catch(() => undefined) : undefined,
		offers?.resources ? client.listResourceTemplates(undefined, options).catch(() => undefined) : undefined,
	]);
}

export async function changes(t: Table, name: string, signal?: AbortSignal): Promise<PinReview> {
	const config = t.configOf(name);
	const live = await t.ready(name, signal);
	await t.listTools(name, live, "fresh", signal);
	await listOthers(t, name, signal);
	const status = t.pins.status(config);
	return { state: status?.state ?? "not pinned", pending: t.pins.pending(config), error: t.pins.error?.message };
}

export async function approve(
	t: Table,
	name: string,
	keys: readonly string[] | undefined,
	signal?: AbortSignal,
): Promise<number> {
	const config = t.configOf(name);
	const done = (await t.pins.view(config)?.approve(keys)) ?? [];
	if (done.length === 0) return 0;
	const live = await t.ready(name, signal);
	// Listed again past the SDK's cache, which holds the lists without what was withheld.
	if (done.some((each) => each.kind === "tools")) await t.listTools(name, live, "refresh", signal).catch(() => undefined);
	if (done.some((each) => each.kind === "prompts" || each.kind === "templates")) await listOthers(t, name, signal, true);
	return done.length;
}

/** Refuses a request naming a withheld prompt or template, before anything is sent (listing it first if needed). */
export async function refuseWithheld(t: Table, name: string, named: Named, signal: AbortSignal | undefined): Promise<void> {
	const config = t.configOf(name);
	const view = t.pins.view(config);
	if (!view) return;
	if (!view.listed(named.kind)) await listOthers(t, name, signal);
	const refusal = t.pins.refusal(config, named.kind, named.name);
	const what = named.kind === "prompts" ? "prompt" : "resource template";
	if (refusal) throw new CallFailed(name, `${what} "${escapeName(named.name)}" of MCP server "${name}" ${refusal}`, "refused");
}
