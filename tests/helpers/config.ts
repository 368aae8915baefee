/** Temporary agent dir, cwd and home for configuration tests, and assertions on loaded entries. */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import type { Result } from "../../src/catalog/listing.ts";
import { type ExtensionServer, loadConfig } from "../../src/config.ts";
import type { Session } from "../../src/contracts.ts";
import type { ConfigSnapshot, ServerConfig, ServerEntry } from "../../src/schema.ts";
import { SessionOwner } from "../../src/session.ts";

export type Dirs = Readonly<{ agentDir: string; cwd: string; home: string; userPath: string; projectPath: string }>;

export async function withDirs(fn: (dirs: Dirs) => Promise<void>): Promise<void> {
	const agentDir = await mkdtemp(join(tmpdir(), "pi-mcp-agent-"));
	const cwd = await mkdtemp(join(tmpdir(), "pi-mcp-cwd-"));
	const home = await mkdtemp(join(tmpdir(), "pi-mcp-home-"));
	try {
		await fn({ agentDir, cwd, home, userPath: join(agentDir, "mcp.json"), projectPath: join(cwd, ".pi", "mcp.json") });
	} finally {
		await Promise.all([agentDir, cwd, home].map((dir) => rm(dir, { recursive: true, force: true })));
	}
}

export async function writeText(path: string, text: string): Promise<void> {
	await mkdir(join(path, ".."), { recursive: true });
	await writeFile(path, text, "utf8");
}

export function writeUser(dirs: Dirs, servers: Record<string, unknown>): Promise<void> {
	return writeText(dirs.userPath, JSON.stringify({ mcpServers: servers }, null, 2));
}

export function writeProject(dirs: Dirs, servers: Record<string, unknown>): Promise<void> {
	return writeText(dirs.projectPath, JSON.stringify({ mcpServers: servers }, null, 2));
}

export type LoadExtra = Readonly<{
	trusted?: boolean;
	env?: Record<string, string | undefined>;
	extensionServers?: readonly ExtensionServer[];
}>;

export function load(dirs: Dirs, extra: LoadExtra = {}): Promise<ConfigSnapshot> {
	return loadConfig({
		agentDir: dirs.agentDir,
		cwd: dirs.cwd,
		home: dirs.home,
		trusted: extra.trusted ?? true,
		env: extra.env ?? {},
		extensionServers: extra.extensionServers,
	});
}

/** Temp dirs of `loadServers`, removed when the importing file's tests end. */
const made: string[] = [];
after(() => Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true }))));

/** `servers` as the user file of a fresh temp dir, loaded untrusted with only HOME (that dir) and PATH set. */
export async function loadServers(servers: Record<string, unknown>): Promise<ConfigSnapshot> {
	const dir = await mkdtemp(join(tmpdir(), "pi-mcp-servers-"));
	made.push(dir);
	await writeFile(join(dir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
	return loadConfig({ agentDir: dir, cwd: dir, trusted: false, env: { HOME: dir, PATH: process.env.PATH } });
}

export function entryOf(snapshot: ConfigSnapshot, name: string): ServerEntry {
	const entry = snapshot.servers.find((server) => server.name === name);
	assert.ok(entry, `expected an entry named "${name}"; got ${snapshot.servers.map((server) => server.name).join(", ")}`);
	return entry;
}

export function usable(snapshot: ConfigSnapshot, name: string): ServerConfig {
	const entry = entryOf(snapshot, name);
	assert.equal(entry.error, undefined, `server "${name}" should be usable`);
	assert.ok(entry.config, `server "${name}" should have a config`);
	return entry.config;
}

export function broken(snapshot: ConfigSnapshot, name: string, expected: string): ServerEntry {
	const entry = entryOf(snapshot, name);
	assert.equal(entry.config, undefined, `server "${name}" must not have a config`);
	assert.equal(entry.error, expected);
	return entry;
}

export const GOOD = { command: "good-server", args: ["--stdio"] };

/** Writes `{ bad, good }` to the user file (or project file), loads, and checks the exact error and that `good` works. */
export async function expectBad(
	bad: unknown,
	message: string,
	options: LoadExtra & { scope?: "user" | "project" } = {},
): Promise<ServerEntry> {
	const state: { entry?: ServerEntry } = {};
	await withDirs(async (dirs) => {
		const scope = options.scope ?? "user";
		const servers = { bad, good: GOOD };
		if (scope === "user") await writeUser(dirs, servers);
		else await writeProject(dirs, servers);
		const snapshot = await load(dirs, options);
		const path = scope === "user" ? dirs.userPath : dirs.projectPath;
		state.entry = broken(snapshot, "bad", `server "bad" (${path}): ${message}`);
		const good = usable(snapshot, "good");
		assert.equal(good.command, "good-server");
		assert.deepEqual(good.args, ["--stdio"]);
	});
	assert.ok(state.entry);
	return state.entry;
}

/** Writes `{ ok, good }` to the user file and returns the config of `ok`, checking that `good` works too. */
export async function expectOk(raw: unknown, options: LoadExtra = {}): Promise<ServerConfig> {
	const state: { config?: ServerConfig } = {};
	await withDirs(async (dirs) => {
		await writeUser(dirs, { ok: raw, good: GOOD });
		const snapshot = await load(dirs, options);
		state.config = usable(snapshot, "ok");
		usable(snapshot, "good");
	});
	assert.ok(state.config);
	return state.config;
}

/** A session over the configuration in `dirs` (its runtime made on first use), disposed after `fn`. */
export async function withSession(dirs: Dirs, fn: (session: Session) => Promise<void>): Promise<void> {
	const config = await load(dirs);
	const owner = new SessionOwner({ config, env: {}, agentDir: dirs.home, overflowDir: dirs.home });
	try {
		await fn(await owner.open());
	} finally {
		await owner.dispose();
	}
}

/** The text of a result's first block ("" if it is not text). */
export const textOf = (result: Result): string => (result.content[0]?.type === "text" ? result.content[0].text : "");
