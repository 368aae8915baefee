/**
 * The `confirm` setting at call time: whether a model's call of a tool waits for the user's yes, the dialog
 * that asks (server, tool, hints in words, every argument whole; allow once, allow the tool for the rest of
 * the session while the server's entry stays the same, deny), and the refusals the model reads. A call made
 * without a call context (the shell's `pi-mcp call`, the user's own act) asks nothing. Nothing reaches the
 * server before the yes; a call that would be refused anyway gets that refusal, not a dialog.
 */
import { createHash } from "node:crypto";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { declaredHints } from "../catalog/hints.ts";
import type { Result } from "../catalog/listing.ts";
import type { Session } from "../contracts.ts";
import { escapeName, showWhole } from "../output/text.ts";
import type { McpDetails } from "../render.ts";
import { type ConfirmSetting, destructive, type Hints, writes } from "../schema/confirm.ts";
import { globMatch } from "../schema/tool-filter.ts";
import type { ServerEntry } from "../schema.ts";

/** What a call needs from Pi's tool context to ask the user: the dialogs and the mode. */
export type CallUi = Pick<ExtensionContext, "hasUI" | "mode" | "ui">;

const ALLOW_ONCE = "Allow once";
const DENY = "Deny";
const allowAlways = (server: string, tool: string) => `Allow ${escapeName(server)}/${escapeName(tool)} for this session`;

/** The hints a tool declares, in words: what the user reads before a yes. */
export function hintsInWords(hints: Hints & Readonly<{ idempotentHint?: boolean }>): string {
	const words = declaredHints(hints);
	return words.length > 0 ? words.join(", ") : "none declared (may change things and reach outside)";
}

/**
 * The arguments as the model wrote them, every one of them, whole (the dialog wraps long lines): pretty
 * JSON, terminal escapes stripped, hidden characters shown escaped, exact configured secret values redacted.
 */
function argumentLines(args: Readonly<Record<string, unknown>>, secrets: readonly string[]): string[] {
	return showWhole(JSON.stringify(args, null, 1) ?? "{}", secrets).split("\n");
}

/** Whether the setting asks for this tool, from its name and the hints its server declares. */
function asks(setting: ConfirmSetting, tool: string, hints: Hints | undefined): boolean {
	if (setting === "none") return false;
	if (setting === "all") return true;
	if (setting === "writes") return writes(hints);
	if (setting === "destructive") return destructive(hints);
	return setting.some((pattern) => globMatch(pattern, tool));
}

/** What a "for this session" yes is bound to: the server's whole entry (a new command, a stricter `confirm`, … end it). */
function entryMark(entry: ServerEntry | undefined): string {
	return createHash("sha256")
		.update(JSON.stringify(entry ?? null))
		.digest("hex");
}

function refusal(details: McpDetails, text: string): Result {
	return { content: [{ type: "text", text }], details: { ...details, error: "declined", declined: true }, isError: true };
}

/**
 * Asks the user, when the server's `confirm` setting says so, before the call of `tool` (its name as the
 * server sends it) goes out. Undefined: go ahead. Otherwise the refusal the model reads; its details say
 * `declined`, which the early start reads as a blocked call (what it started only for this call is closed).
 */
export async function confirmCall(
	ui: CallUi | undefined,
	session: Session,
	server: string,
	tool: string,
	args: Readonly<Record<string, unknown>>,
	signal: AbortSignal | undefined,
): Promise<Result | undefined> {
	if (!ui) return undefined;
	const entry = session.config.servers.find((each) => each.name === server);
	const setting = entry?.config?.confirm;
	if (setting === undefined || setting === "none") return undefined;
	// First the tool itself: a call that would be refused anyway (a hidden tool, one the server lacks) is
	// refused as such, with no dialog. This also gives the hints the rules and the dialog read.
	const hints = (await session.runtime.tool(server, tool, signal)).annotations;
	if (!asks(setting, tool, hints)) return undefined;
	const mark = entryMark(entry);
	if (session.allowed?.has(server, tool, mark)) return undefined;
	const shown = `${escapeName(server)}/${escapeName(tool)}`;
	const details: McpDetails = { action: "call", server, tool };
	const where = entry?.source.kind === "extension" ? "the extension that registers it" : (entry?.source.path ?? "mcp.json");
	const said = JSON.stringify(setting);
	if (!ui.hasUI) {
		// Print and JSON modes keep stderr for the user: the refusal is said there too, not only to the model.
		process.stderr.write(
			`pi-mcp: refused the model's call of ${shown}: MCP server "${escapeName(server)}" has "confirm": ${said}, which ${ui.mode} mode cannot ask; change "confirm" in ${where} to allow it.\n`,
		);
		return refusal(
			details,
			`mcp call ${shown}: not run. MCP server "${escapeName(server)}" has "confirm": ${said}, so this call needs the user's confirmation, which ${ui.mode} mode cannot ask for. The user can change "confirm" in ${where}. Do not retry this call in this mode.`,
		);
	}
	const title = [
		`MCP server "${escapeName(server)}": the model wants to call ${escapeName(tool)}`,
		`Hints (declared by the server, not guaranteed): ${hintsInWords(hints ?? {})}`,
		"Arguments:",
		...argumentLines(args, entry?.config?.secretValues ?? []).map((line) => `  ${line}`),
	].join("\n");
	const always = allowAlways(server, tool);
	const answer = await ui.ui.select(title, [ALLOW_ONCE, always, DENY], { signal }).catch(() => undefined);
	// Kept by the session (`session.ts`), not by its runtime: each call may get its own view of the runtime.
	if (answer === always) session.allowed?.add(server, tool, mark);
	if (answer === ALLOW_ONCE || answer === always) return undefined;
	return refusal(
		details,
		`mcp call ${shown}: the user declined this call (MCP server "${escapeName(server)}" asks before it). It was not run. Do not retry the same call; ask the user what to do instead.`,
	);
}
