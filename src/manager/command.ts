/**
 * The `/mcp` command's body: status, tools, reconnect, login (link, paste completion) and logout.
 * Loaded on the first `/mcp` (the registration in `index.ts` only parses completions, and opens the
 * manager for a bare `/mcp` in the TUI); output goes through `report`.
 */
import type { ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { userToolList } from "../catalog/listing.ts";
import { credentialStates, statusLine, userStatus } from "../catalog/status.ts";
import { oauthConfig } from "../config.ts";
import type { Session } from "../contracts.ts";
import { errorText } from "../errors.ts";
import { SUBCOMMANDS } from "./completions.ts";
import type { Conversation } from "./conversation.ts";
import { unknownServerHere } from "./unknown.ts";

const USAGE =
	"Usage: /mcp [status] | /mcp tools <server> | /mcp reconnect <server> | /mcp login <server> [redirected-url] | /mcp logout <server> | /mcp prompt <server> <prompt> [name=value …] | /mcp attach <server> <uri> | /mcp trust <server>";

/** Command output: a notification where there is a UI (TUI, RPC); plain text on stderr in print and
 * JSON modes, where Pi keeps stdout for the agent's own output (it redirects extensions' stdout there too). */
function report(ctx: ExtensionContext, text: string, level: "info" | "warning" | "error" = "info"): void {
	if (ctx.hasUI) ctx.ui.notify(text, level);
	else process.stderr.write(`${text}\n`);
}

function reportSignIn(ctx: ExtensionContext, name: string, outcome: "completed" | "failed"): void {
	const ok = outcome === "completed";
	report(ctx, ok ? `Signed in to MCP server "${name}".` : `Sign-in to MCP server "${name}" failed.`, ok ? "info" : "error");
}

/** `/mcp logout <server>` (confirmed in the TUI) and `/mcp login <server> [redirected-url]`. */
async function signIn(ctx: ExtensionContext, session: Session, action: string, name: string, pasted?: string) {
	const config = oauthConfig(session.config, name);
	if (typeof config === "string") return report(ctx, config, "error");
	if (action === "logout") {
		if (ctx.mode === "tui" && !(await ctx.ui.confirm("Sign out", `Delete the stored sign-in for MCP server "${name}"?`))) {
			return report(ctx, "Sign-out cancelled.");
		}
		const existed = await session.auth.logout(config);
		await session.runtime.reset(name);
		return report(ctx, existed ? `Signed out of MCP server "${name}".` : `MCP server "${name}" had no stored sign-in.`);
	}
	if (pasted !== undefined) return reportSignIn(ctx, name, await session.auth.complete(config, pasted));
	const link = await session.auth.login(config);
	report(ctx, link.message);
	if (ctx.mode !== "tui") return;
	// Paste fallback in the TUI: the loopback receiver keeps waiting whatever is answered here.
	const answer = await ctx.ui.input(
		`Signing in to ${name}`,
		"If the browser runs on another machine, paste the address it ended on; Esc to wait for the browser",
	);
	if (!answer?.trim()) return;
	return reportSignIn(ctx, name, await session.auth.complete(config, answer.trim()));
}

/**
 * Runs `/mcp <args>`; `session` is undefined before `session_start`; `conversation` takes prompts and
 * attachments; `manage` opens the manager at a server's withheld changes (the TUI's `/mcp trust`).
 */
export async function runCommand(
	args: string,
	ctx: ExtensionCommandContext,
	session: Session | undefined,
	conversation?: Conversation,
	manage?: (server: string) => Promise<void>,
): Promise<void> {
	const [action = "status", name, ...extra] = args.trim().split(/\s+/).filter(Boolean);
	if (action === "prompt" || action === "attach")
		return (await import("./conversation.ts")).runUserCommand(args, ctx, session, conversation);
	if (action === "status" && name === undefined) {
		return report(
			ctx,
			session ? userStatus(session, await credentialStates(session.config, session.auth)) : "pi-mcp: no session yet.",
		);
	}
	const allowed = action === "login" ? extra.length <= 1 : extra.length === 0;
	if (!SUBCOMMANDS.includes(action) || !allowed || name === undefined || action === "status") {
		return report(ctx, USAGE, "warning");
	}
	if (!session) return report(ctx, "pi-mcp: no session yet.", "warning");
	const unknown = unknownServerHere(session.config, name);
	if (unknown !== undefined) return report(ctx, unknown, "error");
	try {
		if (action === "tools") {
			const tools = await session.runtime.tools(name, ctx.signal);
			return report(ctx, await userToolList(session, name, tools));
		}
		if (action === "login" || action === "logout") return await signIn(ctx, session, action, name, extra[0]);
		if (action === "trust" && manage) {
			await manage(name);
			const left = session.runtime.status().find((status) => status.name === name)?.pins?.pending ?? 0;
			return report(
				ctx,
				left > 0 ? `${name}: ${left} definition${left === 1 ? "" : "s"} still withheld` : `${name}: nothing withheld`,
			);
		}
		if (action === "trust") return report(ctx, await (await import("./review.ts")).reviewChanges(ctx, session, name));
		await session.runtime.reset(name);
		const status = await session.runtime.connect(name, ctx.signal);
		const ready = status.state === "ready";
		report(
			ctx,
			ready ? `Reconnected: ${statusLine(status)}` : `${name}: ${status.error ?? status.state}`,
			ready ? "info" : "error",
		);
	} catch (error) {
		report(ctx, errorText(error), "error");
	}
}
