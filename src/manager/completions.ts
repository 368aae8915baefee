/**
 * `/mcp` argument completion: subcommands, then server names. Loaded with the registration (Pi asks for
 * completions while the user types), so it imports only what is already loaded then; what follows
 * `prompt <server> ` or `attach <server> ` is `conversation.ts`'s, loaded then.
 */
import { once } from "../async.ts";
import type { Session } from "../contracts.ts";
import { escapeName } from "../output/text.ts";

/** Imported once: Pi asks at each key, and two imports of a module still loading can see it half made. */
const loadPrompt = once(() => import("./conversation.ts"));

/** The `/mcp` subcommands (completion here, the body in `command.ts`). */
export const SUBCOMMANDS: readonly string[] = ["status", "tools", "reconnect", "login", "logout", "prompt", "attach", "trust"];

export type NamedState = Readonly<{ name: string; state: string }>;

export function completions(prefix: string, states: () => readonly NamedState[], open: () => Promise<Session>) {
	if (/^(prompt|attach) \S+ /.test(prefix)) return loadPrompt().then((m) => m.menu(open, prefix));
	const [action = "", server, ...rest] = prefix.trimStart().split(/\s+/);
	if (rest.length > 0) return null;
	// Pi's editor submits on Enter only from the command-name menu; in an argument menu Enter just
	// applies the completion. So a complete command (a subcommand, or one with a known server)
	// gets no menu, and Enter runs it at once.
	if (server === undefined) {
		if (SUBCOMMANDS.includes(action)) return null;
		const items = SUBCOMMANDS.filter((item) => item.startsWith(action)).map((item) => ({ value: `${item} `, label: item }));
		return items.length > 0 ? items : null;
	}
	if (!SUBCOMMANDS.includes(action) || action === "status") return null;
	if (states().some((status) => status.name === server)) return null;
	const items = states()
		.filter((status) => status.name.startsWith(server))
		.map((status) => ({
			value: `${action} ${escapeName(status.name)}`,
			label: escapeName(status.name),
			description: status.state,
		}));
	return items.length > 0 ? items : null;
}
