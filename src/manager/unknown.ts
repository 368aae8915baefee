/** `/mcp`'s error for a server name the configuration lacks, with the closest names ("did you mean"). */
import { unknownServer } from "../config.ts";
import { escapeName } from "../output/text.ts";
import { closeMatches } from "../schema/keys.ts";
import type { ConfigSnapshot } from "../schema.ts";

export function unknownServerHere(config: ConfigSnapshot, name: string): string | undefined {
	const unknown = unknownServer(config, name);
	if (unknown === undefined) return undefined;
	const close = closeMatches(
		name,
		config.servers.map((entry) => entry.name),
	);
	return close.length > 0 ? `${unknown}; did you mean ${close.map((each) => `"${escapeName(each)}"`).join(" or ")}?` : unknown;
}
