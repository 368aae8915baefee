/**
 * What the model and the user are told about the servers: one line per server (`statusLine`), the
 * `status` action's text (`modelStatus`), `/mcp status` and `pi-mcp list` (`userStatus`: source,
 * last error, stderr tail, files, ignored keys), and the credential state of each server with
 * `auth`, read locally.
 */
import { secretNames } from "../config/values.ts";
import type { CredentialState, ServerStatus, Session } from "../contracts.ts";
import { escapeName, oneLine } from "../output/text.ts";
import type { ConfigSnapshot, ServerConfig } from "../schema.ts";

/** What `includeTools` / `excludeTools` hide: "2 hidden by excludeTools", or the fields before a listing. */
export function hiddenText(status: ServerStatus): string | undefined {
	const fields = status.hiddenTools ?? [];
	if (fields.length === 0) return undefined;
	if (fields.some((each) => each.count === undefined))
		return `tools filtered by ${fields.map((each) => each.field).join(" and ")}`;
	return fields.map((each) => `${each.count} hidden by ${each.field}`).join(", ");
}

/** Pinning in a few words (#47): "not pinned", "2 withheld until approved", "pins file unreadable". */
export function pinText(status: ServerStatus): string | undefined {
	const pins = status.pins;
	if (!pins) return undefined;
	if (pins.state === "not pinned") return "not pinned";
	if (pins.state === "unreadable") return "pins file unreadable: definitions withheld";
	return pins.pending > 0 ? `${pins.pending} withheld until approved` : undefined;
}

export function statusLine(status: ServerStatus): string {
	const facts = [
		status.state,
		status.transport,
		status.protocolVersion ? `protocol ${status.protocolVersion}` : undefined,
		status.toolCount !== undefined ? `${status.toolCount} tools` : undefined,
		hiddenText(status),
		pinText(status),
	].filter(Boolean);
	const description = status.description ? ` — ${oneLine(status.description, 100)}` : "";
	return `${escapeName(status.name)}: ${facts.join(" · ")}${description}`;
}

/** What the model sees for `status`: short; paths only of files that could not be read. */
export function modelStatus(statuses: readonly ServerStatus[], unreadFiles: readonly string[] = []): string {
	const lines = statuses.map((status) => {
		const error = status.error ? `\n  error: ${status.error.split("\n")[0]}` : "";
		const withheld = status.pins?.note ? `\n  ${status.pins.note}` : "";
		return `${statusLine(status)}${error}${withheld}`;
	});
	const servers = statuses.length === 0 ? "No MCP servers are configured." : `MCP servers:\n${lines.join("\n")}`;
	if (unreadFiles.length === 0) return servers;
	const files = unreadFiles.map((problem) => `  ${problem}`).join("\n");
	return `${servers}\nConfiguration files that could not be read (their servers are missing):\n${files}`;
}

/** What `/mcp status` shows the user: state, source, last error, stderr tail, ignored keys. */
export function userStatus(session: Session | undefined, credentials?: ReadonlyMap<string, CredentialState>): string {
	if (!session) return "pi-mcp: no session yet.";
	const statuses = session.runtime.status();
	const lines = ["MCP servers (pi-mcp):"];
	if (statuses.length === 0) lines.push("  none configured");
	for (const status of statuses) {
		const source = status.source.kind === "extension" ? `extension ${status.source.path}` : status.source.path;
		lines.push(`  ${statusLine(status)}`, `    source: ${source}`);
		const credential = credentials?.get(status.name)?.text;
		if (credential) lines.push(`    credentials: ${credential}`);
		if (status.error)
			lines.push(...status.error.split("\n").map((line, i) => (i === 0 ? `    error: ${line}` : `      ${line}`)));
		if (status.instructions) lines.push("    instructions:", ...status.instructions.split("\n").map((line) => `      ${line}`));
		if (status.stderrTail && !status.error?.includes(status.stderrTail)) {
			lines.push(
				"    stderr:",
				...status.stderrTail
					.split("\n")
					.slice(-6)
					.map((line) => `      ${line}`),
			);
		}
	}
	lines.push("Files:");
	for (const file of session.config.files) {
		const state = file.state === "untrusted" ? "not read: project not trusted" : file.state;
		lines.push(`  ${file.scope}: ${file.path} (${state})${file.error ? `\n    error: ${file.error}` : ""}`);
	}
	const ignored = statuses.filter((status) => status.ignoredKeys.length > 0);
	if (ignored.length > 0) {
		const list = ignored
			.map((status) => `${escapeName(status.name)} (${[...new Set(status.ignoredKeys)].join(", ")})`)
			.join("; ");
		lines.push(`Ignored Pi-only keys (pi-mcp exposes every server through the one mcp tool): ${list}`);
	}
	return lines.join("\n");
}

/**
 * Credential state per server with `auth` or stored secrets (`needs secret NAME`), read locally (no
 * network): `/mcp status`, the manager, `pi-mcp`.
 */
export async function credentialStates(
	config: ConfigSnapshot,
	auth: Readonly<{ credentialState(config: ServerConfig): Promise<CredentialState> }>,
): Promise<ReadonlyMap<string, CredentialState>> {
	const withAuth = config.servers.flatMap((entry) =>
		entry.config?.auth || (entry.config && secretNames(entry.config).length > 0) ? [entry.config] : [],
	);
	const states = await Promise.all(
		withAuth.map(async (server) => [server.name, await auth.credentialState(server).catch(unread)] as const),
	);
	return new Map(states);
}

/** A state that could not be read: its error is the line, and nothing is known to be missing. */
const unread = (error: Error): CredentialState => ({ missingSecrets: [], needsSignIn: false, text: error.message });
