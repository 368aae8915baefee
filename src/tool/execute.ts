/**
 * The `mcp` tool's `execute`: one action in the session its call gets (`Calls`), with a missing sign-in
 * as a result the model reads (its link) rather than a crash. Loaded with the registration, it imports
 * the actions, the errors and the SDK door only on first use (bench figure 1 counts every module).
 */
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { once } from "../async.ts";
import type { ConfirmGate } from "../catalog/actions.ts";
import type { Calls } from "../contracts.ts";
import type { McpDetails } from "../render.ts";
import type { CallUi } from "./confirm.ts";
import type { parameters } from "./definition.ts";

/**
 * The configuration's modules, for the extension's first read of it too: loaded alone and before the rest,
 * because Pi's loader hands a module that another import is still loading to a second importer half made
 * (its own imports read as undefined).
 */
export const loadConfigModule = once(() => import("../config.ts"));

const loadModules = once(() =>
	loadConfigModule().then(() =>
		Promise.all([import("../catalog/actions.ts"), import("../errors.ts"), import("../sdk.ts")]).then(
			([actions, errors, sdk]) => ({
				actions,
				errors,
				sdk,
			}),
		),
	),
);

/** The dialog, imported once: overlapping calls must not import it twice at once (`loadSearch` says why). */
const loadConfirm = once(() => import("./confirm.ts"));

/** The model's face asks the user before a call, where Pi has a UI (`confirm.ts`). */
const confirmGate =
	(ui: CallUi): ConfirmGate =>
	async (session, server, tool, args, signal) =>
		(await loadConfirm()).confirmCall(ui, session, server, tool, args, signal);

/** Loads the tool's modules and the SDK ahead of a call; a failure is the call's to report. */
export function preloadTool(): void {
	loadModules()
		.then((mods) => mods.sdk.loadSdk())
		.catch(() => undefined);
}

export function executeMcp(calls: Calls): ToolDefinition<typeof parameters, McpDetails>["execute"] {
	return async (id, params, signal, onUpdate, ctx) => {
		const opening = calls.open({ id, action: params.action, server: params.server });
		const [session, mods] = await Promise.all([opening, loadModules()]);
		try {
			return await mods.actions.runAction(session, params, signal, onUpdate, ctx && confirmGate(ctx));
		} catch (error) {
			if (!(error instanceof mods.errors.AuthRequired)) throw error;
			return {
				content: [{ type: "text", text: `authorization_required: ${error.message}` }],
				details: { action: params.action, server: params.server, tool: params.tool, error: "authorization required" },
				isError: true,
			};
		}
	};
}
