/**
 * Stored secrets (`${secret:NAME}`): kept in the OS keyring under the service every pi-mcp record
 * uses, each filed under the server's identity (`config/identity.ts`: scope, declaring file, name,
 * what it runs) and its name, and given only to that identity. An entry of the same name that runs
 * something else, or a project entry shadowing a user one, finds nothing under its own identity; a
 * small index per server name and secret name (identities and what they run, masked; never a value)
 * lets its message say that the secret was stored for another command. No plaintext fallback: a
 * keyring that cannot be used fails the command or the connection.
 */
import { createHash } from "node:crypto";
import { serverIdentity } from "../config/identity.ts";
import { runsText } from "../config/mask.ts";
import { fillSecretRefs, secretNames } from "../config/values.ts";
import { SecretRequired, SetupFailed } from "../errors.ts";
import { escapeName } from "../output/text.ts";
import { isObject, type ServerConfig } from "../schema.ts";
import { KeyringUnavailable, type SecretStore } from "./keyring.ts";
import { keyring } from "./record.ts";

const hash = (parts: readonly string[]) => createHash("sha256").update(JSON.stringify(parts)).digest("hex");

/** Where one secret's value is kept: its identity's and its name's. */
const valueAccount = (identityKey: string, name: string) => `secret/${hash(["pi-mcp/secret/v1", identityKey, name])}`;
/** Which identities hold a secret of this name for a server of this name (no value). */
const indexAccount = (server: string, name: string) => `secret-index/${hash(["pi-mcp/secret-index/v1", server, name])}`;

type Holder = Readonly<{ identity: string; label: string; runs: string }>;

function parseIndex(text: string | undefined): readonly Holder[] {
	try {
		const value: unknown = text === undefined ? undefined : JSON.parse(text);
		if (!isObject(value) || value.v !== 1 || !Array.isArray(value.holders)) return [];
		return value.holders.filter(
			(holder): holder is Holder =>
				isObject(holder) &&
				typeof holder.identity === "string" &&
				typeof holder.label === "string" &&
				typeof holder.runs === "string",
		);
	} catch {
		return [];
	}
}

/** The command a user types to store a secret for this entry (the shell reads a project entry only with --approve). */
export function setCommand(config: ServerConfig, name: string): string {
	if (config.source.kind === "extension") return `/mcp → ${config.name} → Set secret ${name}`;
	const approve = config.source.kind === "project" ? "--approve " : "";
	return `pi-mcp secret set ${approve}${config.name} ${name}`;
}

/** What the server runs, masked, for messages. */
const runsOf = (config: ServerConfig) => escapeName(runsText(config));

/** A keyring failure, said for stored secrets: what could not be done and what to use instead. */
export function keyringDown(config: ServerConfig, what: string, cause: unknown): SetupFailed {
	const reason = cause instanceof Error && cause.cause instanceof Error ? ` (${cause.cause.message})` : "";
	return new SetupFailed(
		config.name,
		`MCP server "${config.name}": ${what}: the OS keyring (Secret Service) is unavailable${reason}. pi-mcp keeps stored secrets only there, never in a file. Unlock or start a Secret Service (GNOME Keyring, KWallet, KeePassXC; over SSH set DBUS_SESSION_BUS_ADDRESS), or use \${VAR} with a variable set in the environment Pi runs in instead.`,
	);
}

/** A keyring step bounded by `signal` (a keyring waiting to be unlocked never holds a connection), failures said for secrets. */
async function guard<T>(config: ServerConfig, what: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
	try {
		return await (signal ? keyring(work(), signal) : work());
	} catch (error) {
		throw error instanceof KeyringUnavailable ? keyringDown(config, what, error) : error;
	}
}

/** A secret's state for one entry: stored for it, stored only for another command of that name, or not at all. */
export type SecretState = Readonly<{ name: string; state: "stored" | "missing" | "other"; others?: readonly string[] }>;

async function stateOf(store: SecretStore, config: ServerConfig, name: string, signal?: AbortSignal): Promise<SecretState> {
	const identity = serverIdentity(config);
	const value = await store.get(valueAccount(identity.key, name), signal);
	if (value !== undefined) return { name, state: "stored" };
	const others = parseIndex(await store.get(indexAccount(config.name, name), signal)).filter(
		(holder) => holder.identity !== identity.key,
	);
	if (others.length === 0) return { name, state: "missing" };
	return { name, state: "other", others: others.map((holder) => `${holder.label}, which runs ${holder.runs}`) };
}

/** The state of every secret the entry references (none: the entry references none). */
export function secretStates(store: SecretStore, config: ServerConfig, signal?: AbortSignal): Promise<readonly SecretState[]> {
	return guard(
		config,
		"stored secrets cannot be read",
		() => Promise.all(secretNames(config).map((name) => stateOf(store, config, name, signal))),
		signal,
	);
}

/**
 * The stored secrets for status: those missing, and the line "needs secret A; secret B stored"; undefined when the
 * entry names none. An unreadable keyring names none missing (it is said in the line).
 */
export async function secretsState(
	store: SecretStore,
	config: ServerConfig,
	signal?: AbortSignal,
): Promise<Readonly<{ missing: readonly string[]; text: string }> | undefined> {
	if (secretNames(config).length === 0) return undefined;
	const states = await secretStates(store, config, signal).catch(() => undefined);
	if (!states) return { missing: [], text: "keyring unavailable (stored secrets cannot be read)" };
	const have = states.filter((each) => each.state === "stored").map((each) => each.name);
	const missing = states.filter((each) => each.state !== "stored");
	const text = [
		...missing.map((each) => `needs secret ${each.name}${each.state === "other" ? " (stored for another command)" : ""}`),
		...(have.length > 0 ? [`secret${have.length === 1 ? "" : "s"} ${have.join(", ")} stored`] : []),
	].join("; ");
	return { missing: missing.map((each) => each.name), text };
}

/** Stores `value` as the entry's secret `name` (for its identity only), and notes it in the index. */
export function storeSecret(store: SecretStore, config: ServerConfig, name: string, value: string): Promise<void> {
	const identity = serverIdentity(config);
	return guard(config, `secret ${name} was not stored`, async () => {
		await store.set(valueAccount(identity.key, name), value);
		const index = indexAccount(config.name, name);
		const holders = parseIndex(await store.get(index)).filter((holder) => holder.identity !== identity.key);
		const self: Holder = { identity: identity.key, label: identity.label, runs: runsOf(config) };
		await store.set(index, JSON.stringify({ v: 1, holders: [...holders, self] }));
	});
}

/** Removes the entry's secret `name`; true when one was stored for it. */
export function removeSecret(store: SecretStore, config: ServerConfig, name: string): Promise<boolean> {
	const identity = serverIdentity(config);
	return guard(config, `secret ${name} was not removed`, async () => {
		const removed = await store.delete(valueAccount(identity.key, name));
		const index = indexAccount(config.name, name);
		const holders = parseIndex(await store.get(index));
		const rest = holders.filter((holder) => holder.identity !== identity.key);
		if (rest.length === 0 && holders.length > 0) await store.delete(index);
		else if (rest.length !== holders.length) await store.set(index, JSON.stringify({ v: 1, holders: rest }));
		return removed;
	});
}

/** Why a referenced secret is not given, as the connection's message. */
function notGiven(config: ServerConfig, state: SecretState): SecretRequired {
	const server = `MCP server "${config.name}"`;
	const store = `store it with: ${setCommand(config, state.name)}`;
	if (state.state === "other") {
		const others = (state.others ?? []).join("; ");
		return new SecretRequired(
			config.name,
			`${server} needs secret ${state.name}, which was stored for another command (${others}), not for this one (${serverIdentity(config).label}, which runs ${runsOf(config)}). A stored secret is given only to the command it was stored for; to give it to this one, ${store}`,
			state.name,
		);
	}
	return new SecretRequired(
		config.name,
		`${server} needs secret ${state.name}, which is not stored in the OS keyring; ${store}`,
		state.name,
	);
}

/**
 * The entry with each `${secret:NAME}` replaced by the value stored for its identity, read now (at
 * connect time) and held by nobody here; `found` receives the values for redaction. Throws
 * `SecretRequired` for a secret that is not stored for it, and a `SetupFailed` naming the keyring
 * when the keyring cannot be used.
 */
export async function withStoredSecrets(
	store: SecretStore,
	config: ServerConfig,
	signal: AbortSignal | undefined,
	found: (values: readonly string[]) => void,
): Promise<ServerConfig> {
	const names = secretNames(config);
	if (names.length === 0) return config;
	const identity = serverIdentity(config);
	const what = `secret ${names.join(", ")} cannot be read`;
	const read = (name: string) => store.get(valueAccount(identity.key, name), signal);
	const values = await guard(
		config,
		what,
		() => Promise.all(names.map(async (name) => [name, await read(name)] as const)),
		signal,
	);
	const missing = values.find(([, value]) => value === undefined);
	if (missing) throw notGiven(config, await guard(config, what, () => stateOf(store, config, missing[0], signal), signal));
	const filled = new Map(values.map(([name, value]) => [name, value ?? ""]));
	found([...filled.values()]);
	const fill = (record: Readonly<Record<string, string>>) =>
		Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fillSecretRefs(value, filled)]));
	return { ...config, env: fill(config.env), headers: fill(config.headers) };
}
