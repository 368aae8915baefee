/**
 * A server's identity: what a user approved or stored a secret for. Pinned definitions (`mcp-pins.json`)
 * and stored secrets (`${secret:NAME}`) both belong to it, so an entry with the same name that runs
 * something else (another command, other args, another working directory, another origin or path, or a
 * project file's entry shadowing a user one) is a new server and gets neither.
 *
 * Part of it: the scope (user, project or extension) and, outside the user's own file, the file that
 * declares the entry (one repository's `notes` is not another's); the name; what it runs: a stdio
 * server's command, args and cwd, an HTTP server's URL origin and path (not its query or fragment, which
 * may carry a secret and change nothing about who answers). The name a server reports about itself is
 * not part of it. `env` and `headers` are not part of it: they carry the secrets themselves.
 */

import { createHash } from "node:crypto";
import type { ServerConfig } from "../schema.ts";

export type ServerIdentity = Readonly<{
	/** A stable key (hex sha256): never holds a value of the entry in clear. */
	key: string;
	/** Readable, secret-free: `user:notes`, `project:notes`. */
	label: string;
	/** What it runs, for a message ("npx -y @acme/notes", "https://mcp.acme.dev/mcp"), masked by the caller. */
	runs: string;
}>;

/** The identity of a resolved entry (variables expanded, paths absolute). */
export function serverIdentity(config: ServerConfig): ServerIdentity {
	const scope = config.source.kind;
	const file = scope === "user" ? "" : config.source.path;
	const runs =
		config.transport === "stdio"
			? { transport: "stdio", command: config.command, args: config.args, cwd: config.cwd ?? "" }
			: { transport: "http", endpoint: endpointOf(config.url) };
	const key = createHash("sha256")
		.update(JSON.stringify({ scope, file, name: config.name, runs }))
		.digest("hex");
	const shown = config.transport === "stdio" ? [config.command, ...config.args].join(" ") : endpointOf(config.url);
	return { key, label: `${scope}:${config.name}`, runs: shown };
}

/** The URL's origin and path: who answers, without a query or fragment. */
function endpointOf(url: string): string {
	if (!URL.canParse(url)) return url;
	const parsed = new URL(url);
	return `${parsed.origin}${parsed.pathname}`;
}
