/** The tools screen's rows for tools the user hid (`includeTools` / `excludeTools`): greyed, after the others. */
import type { ServerStatus } from "../contracts.ts";
import { escapeName } from "../output/text.ts";
import type { Row } from "./list.ts";

/** The hidden tools whose names hold `query` (all of them without one), each saying which field hides it. */
export function hiddenRows(
	fg: (color: "accent" | "dim", text: string) => string,
	status: ServerStatus | undefined,
	query: string,
): Row[] {
	return (status?.hiddenTools ?? []).flatMap(({ field, names }) =>
		(names ?? [])
			.filter((tool) => tool.toLowerCase().includes(query.toLowerCase()))
			.map((tool) => ({
				value: tool,
				text: (_width: number, selected: boolean) => fg(selected ? "accent" : "dim", `${escapeName(tool)}  (hidden by ${field})`),
			})),
	);
}
