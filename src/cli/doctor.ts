/**
 * `pi-mcp doctor`: what a setup needs, checked in order: the Node version, the OS keyring (needed
 * only by OAuth sign-in), each configuration file, and one connection to every enabled server
 * (bounded by its own timeout), with era, protocol, tool count and credential state.
 */

import type { CredentialState, Runtime, ServerStatus } from "../contracts.ts";
import { escapeName, oneLine, sanitize } from "../output/text.ts";
import type { ConfigSnapshot } from "../schema.ts";
import { jsonLine } from "./json.ts";

/** The part of the CLI's context the doctor reads (declared here, so it never imports the entry module). */
type DoctorContext = Readonly<{
	io: Readonly<{ out: (text: string) => void; err: (text: string) => void }>;
	flags: Readonly<{ json: boolean; verbose?: boolean }>;
	config: ConfigSnapshot;
	/** Project entries that replace a user entry of the same name. */
	shadowed?: readonly string[];
	runtime: Pick<Runtime, "tools" | "status">;
	signal: AbortSignal;
}>;

export const MIN_NODE = [22, 19] as const;

type Check = Readonly<{ name: string; ok: boolean; detail: string }>;

function nodeCheck(): Check {
	const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
	const ok = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
	return { name: "node", ok, detail: `${process.version}${ok ? "" : ` (Pi 1.6 and pi-mcp need >= ${MIN_NODE.join(".")})`}` };
}

/** Reads one account that never exists: proves the Secret Service answers without touching records. */
async function keyringCheck(needed: boolean): Promise<Check> {
	try {
		const { keyringStore } = await import("../auth/keyring.ts");
		await keyringStore().get("pi-mcp-doctor-probe");
		return { name: "keyring", ok: true, detail: "reachable" };
	} catch (error) {
		if (!needed) return { name: "keyring", ok: true, detail: "unavailable (no configured server uses OAuth sign-in)" };
		return { name: "keyring", ok: false, detail: sanitize((error as Error).message) };
	}
}

function serverLine(status: ServerStatus, credential: string | undefined): string {
	const facts = [
		status.state,
		status.transport,
		status.era ? `era ${status.era}` : undefined,
		status.protocolVersion ? `protocol ${status.protocolVersion}` : undefined,
		status.toolCount !== undefined ? `${status.toolCount} tool${status.toolCount === 1 ? "" : "s"}` : undefined,
		credential ? `credentials: ${credential}` : undefined,
	].filter(Boolean);
	return facts.join(" · ");
}

async function serverCheck(cli: DoctorContext, name: string): Promise<Check> {
	const started = Date.now();
	const outcome = await cli.runtime.tools(name, cli.signal).then(
		() => undefined,
		(error: Error) => sanitize(error.message),
	);
	const status = cli.runtime.status().find((entry) => entry.name === name);
	cli.io.err(
		`pi-mcp doctor: ${escapeName(name)} ${outcome === undefined ? "connected" : "failed"} after ${Date.now() - started} ms\n`,
	);
	return { name, ok: outcome === undefined, detail: outcome ?? (status ? serverLine(status, undefined) : "") };
}

/** A server's instructions: the first line, and how many more `--verbose` shows; all of them with it. */
function instructionsText(text: string, verbose: boolean): string {
	const lines = text.trim().split("\n");
	if (verbose) return lines.join("\n      ");
	const first = oneLine(lines[0] ?? "", 100);
	const more = lines.length - 1;
	if (more === 0 && !first.endsWith("…")) return first;
	return `${first} (${more > 0 ? `${more} more line${more === 1 ? "" : "s"}` : "the rest"}: --verbose)`;
}

/** Prints the report; true when every check passed. */
export async function runDoctor(
	cli: DoctorContext,
	credentialStates: () => Promise<ReadonlyMap<string, CredentialState>>,
): Promise<boolean> {
	const { config } = cli;
	const needsKeyring = config.servers.some(
		(entry) => entry.enabled && entry.config?.auth === "oauth" && entry.config.oauth?.grantType !== "client_credentials",
	);
	const environment = [nodeCheck(), await keyringCheck(needsKeyring)];
	const files: Check[] = config.files.map(
		(file): Check => ({
			name: `${file.scope} file`,
			ok: file.state !== "error",
			detail: `${file.path}: ${file.state === "untrusted" ? "not read (pass --approve to read the project file)" : file.state}${file.error ? ` — ${file.error}` : ""}`,
		}),
	);
	const notes = [
		...config.files.flatMap((file) =>
			(file.warnings ?? []).map(
				(warning): Check => ({ name: `${file.scope} file`, ok: false, detail: `${file.path}: ${warning}` }),
			),
		),
		...(cli.shadowed ?? []).map(
			(name): Check => ({ name, ok: true, detail: "the project file's entry replaces the user file's entry of that name" }),
		),
	];
	files.push(...notes);
	const enabled = config.servers.filter((entry) => entry.enabled && entry.config);
	if (enabled.length > 0)
		cli.io.err(`pi-mcp doctor: connecting to ${enabled.length} server${enabled.length === 1 ? "" : "s"}…\n`);
	const connected = await Promise.all(enabled.map((entry) => serverCheck(cli, entry.name)));
	const credentials = await credentialStates();
	const servers = config.servers.map((entry): Check => {
		if (!entry.config) return { name: entry.name, ok: false, detail: `invalid — ${entry.error ?? "no usable configuration"}` };
		if (!entry.enabled) return { name: entry.name, ok: true, detail: `disabled (${entry.source.path})` };
		const check = connected.find((item) => item.name === entry.name) as Check;
		const status = cli.runtime.status().find((item) => item.name === entry.name);
		const credential = credentials.get(entry.name)?.text;
		const told = status?.instructions
			? `\n    instructions: ${instructionsText(status.instructions, cli.flags.verbose === true || cli.flags.json)}`
			: "";
		const detail =
			check.ok && status ? `${serverLine(status, credential)}${told}` : `failed — ${check.detail.replace(/\n/g, "\n      ")}`;
		return { ...check, detail: check.ok || !credential ? detail : `${detail}\n    credentials: ${credential}` };
	});
	const ok = [...environment, ...files, ...servers].every((check) => check.ok);
	if (cli.flags.json) {
		cli.io.out(jsonLine({ ok, environment, files, servers }, 2));
	} else {
		const section = (title: string, checks: readonly Check[]) =>
			[title, ...checks.map((check) => `  ${check.ok ? "ok  " : "FAIL"} ${escapeName(check.name)}: ${check.detail}`)].join("\n");
		const text = [
			section("Environment", environment),
			section("Files", files),
			servers.length > 0 ? section("Servers", servers) : "Servers\n  none configured",
			ok ? "All good." : "Some checks failed; see FAIL above.",
		];
		cli.io.out(`${text.join("\n")}\n`);
	}
	return ok;
}
