/**
 * One session, built the same way for the extension and for `pi-mcp`: the configuration snapshot, the
 * runtime and the overflow store (made on first use, so starting Pi loads neither), credentials whose
 * modules load only when a server needs them, and one `dispose` that stops all of it. Both front doors
 * hand their inputs here, so how a session is wired is written once.
 */
import { join } from "node:path";
import type { SecretStore } from "./auth/keyring.ts";
import type { Allowed, Auth, Runtime, Session, Transports } from "./contracts.ts";
import type { Words } from "./errors.ts";
import type { OverflowStore } from "./output.ts";
import type { ConfigSnapshot, ServerEntry } from "./schema.ts";

/** pi-mcp's version, as servers see it in `clientInfo` and `pi-mcp --version` prints it (package.json's). */
export const VERSION = "0.1.0";

export type SessionInputs = Readonly<{
	config: ConfigSnapshot;
	/** Config interpolation and bearer tokens read only this. */
	env: Readonly<Record<string, string | undefined>>;
	/** Pi's agent directory: the refresh locks live in its `mcp-locks`. */
	agentDir: string;
	/** Defaults to the OS keyring (Secret Service on Linux); never a file. */
	secrets?: SecretStore;
	/** Where the overflow directory is created; defaults to the OS temp directory. */
	overflowDir?: string;
	/** A store of the caller's own for the files calls save (`pi-mcp --out`). */
	overflow?: OverflowStore;
	/** Defaults to Date.now. */
	now?: () => number;
	/** A sign-in finished (or failed): the front door tells the user its own way. */
	notify?: (server: string, message: string, ok: boolean) => void;
	/** How messages name the next step: the front end's commands; defaults to Pi's `/mcp …`. */
	words?: Words;
	/** How this session bounds each entry (`pi-mcp` marks its processes and applies `--timeout`). */
	entry?: (entry: ServerEntry) => ServerEntry;
	/** Where transports come from; defaults to the real ones (a test hands in the SDK's in-memory pairs). */
	transports?: Transports;
}>;

type Made = Readonly<{ auth: Auth; dispose: () => Promise<void> }>;

/** Credentials whose modules load on first use; shutdown disposes them only if they were ever asked for. */
class LazyAuth {
	#promise?: Promise<Made>;
	#made?: Made;
	readonly #make: () => Promise<Made>;
	readonly auth: Auth;

	constructor(make: () => Promise<Made>) {
		this.#make = make;
		const get = async () => (await this.#load()).auth;
		this.auth = {
			// The setup's signal goes on: the auth modules stop their requests and keyring waits with it.
			prepare: async (config, signal) => (await get()).prepare(config, signal),
			stepUp: async (config, error) => (await get()).stepUp(config, error),
			login: async (config) => (await get()).login(config),
			complete: async (config, url) => (await get()).complete(config, url),
			logout: async (config) => (await get()).logout(config),
			credentialState: async (config) => (await get()).credentialState(config),
			secrets: () => this.#made?.auth.secrets() ?? [],
			withSecrets: async (config, signal) => (await get()).withSecrets(config, signal),
			setSecret: async (config, name, value) => (await get()).setSecret(config, name, value),
			dispose: () => this.#made?.auth.dispose(),
		};
	}

	#load(): Promise<Made> {
		this.#promise ??= this.#make().then((made) => {
			this.#made = made;
			return made;
		});
		return this.#promise;
	}

	async dispose(): Promise<void> {
		await this.#promise?.catch(() => undefined);
		this.#made?.auth.dispose();
		await this.#made?.dispose();
	}
}

/** The auth face over `make`, loaded on its first use. */
export function lazyAuth(make: () => Promise<Made>): Readonly<{ auth: Auth; dispose: () => Promise<void> }> {
	const lazy = new LazyAuth(make);
	return { auth: lazy.auth, dispose: () => lazy.dispose() };
}

function makeAuth(inputs: SessionInputs): Promise<Made> {
	return Promise.all([import("./auth.ts"), import("./login/receiver.ts"), import("./auth/keyring.ts")]).then(
		([{ createAuth }, { createLoginService }, { keyringStore }]) => {
			const login = createLoginService({ now: inputs.now });
			const auth = createAuth({
				env: inputs.env,
				store: inputs.secrets ?? keyringStore(),
				login,
				now: inputs.now,
				// Shared by every Pi process using the same keyring records: one refresh at a time per record.
				lockDir: join(inputs.agentDir, "mcp-locks"),
				notify: (server, message, ok) => inputs.notify?.(server, message, ok),
				words: inputs.words,
			});
			return { auth, dispose: () => login.dispose() };
		},
	);
}

type Parts = Readonly<{ runtime: Runtime; overflow: OverflowStore }>;

/** The tools the user allowed for this session: one set, owned here, gone with the session. */
class AllowedTools implements Allowed {
	readonly #keys = new Set<string>();

	has(server: string, tool: string, entry: string): boolean {
		return this.#keys.has(`${server}\0${tool}\0${entry}`);
	}

	add(server: string, tool: string, entry: string): void {
		this.#keys.add(`${server}\0${tool}\0${entry}`);
	}
}

/** A session from its start to `dispose`. Its configuration is replaced whole (`update`); its parts are made once. */
export class SessionOwner {
	readonly #inputs: SessionInputs;
	readonly #auth: LazyAuth;
	readonly #allowed = new AllowedTools();
	#config: ConfigSnapshot;
	#parts?: Promise<Parts>;
	#made?: Parts;
	#ended = false;

	constructor(inputs: SessionInputs) {
		this.#inputs = inputs;
		this.#config = inputs.config;
		this.#auth = new LazyAuth(() => makeAuth(inputs));
	}

	get auth(): Auth {
		return this.#auth.auth;
	}

	config(): ConfigSnapshot {
		return this.#config;
	}

	/** The runtime, only if it was made (closing or listing states never makes one). */
	runtime(): Runtime | undefined {
		return this.#made?.runtime;
	}

	/** Server names and states (for completion); without a runtime yet, from the configuration. Never connects. */
	states(): readonly Readonly<{ name: string; state: string }>[] {
		const runtime = this.runtime();
		if (runtime) return runtime.status();
		return this.#config.servers.map((entry) => ({
			name: entry.name,
			state: entry.error !== undefined ? "invalid" : entry.enabled ? "idle" : "disabled",
		}));
	}

	/** The session's parts, the runtime and overflow store made on first use from the current configuration. */
	async open(): Promise<Session> {
		if (this.#ended) throw new Error("MCP is not available: the session has ended");
		// A failed import (a damaged installation) is not kept: the next use tries again.
		this.#parts ??= this.#makeParts().catch((error: unknown) => {
			this.#parts = undefined;
			throw error;
		});
		const { runtime, overflow } = await this.#parts;
		return { config: this.#config, runtime, overflow, auth: this.auth, allowed: this.#allowed };
	}

	async #makeParts(): Promise<Parts> {
		const [{ createRuntime }, { createOverflowStore }] = await Promise.all([import("./runtime.ts"), import("./output.ts")]);
		const inputs = this.#inputs;
		const runtime = createRuntime({
			servers: this.#config.servers.map((entry) => inputs.entry?.(entry) ?? entry),
			env: inputs.env,
			clientInfo: { name: "pi-mcp", version: VERSION },
			auth: this.auth,
			words: inputs.words,
			transports: inputs.transports,
			pinsPath: join(inputs.agentDir, "mcp-pins.json"),
		});
		this.#made = { runtime, overflow: inputs.overflow ?? createOverflowStore({ baseDir: inputs.overflowDir }) };
		return this.#made;
	}

	/** A new configuration: connections whose entry changed or vanished are closed. */
	async update(config: ConfigSnapshot): Promise<void> {
		this.#config = config;
		const made = await this.#parts?.catch(() => undefined);
		if (made && this.#config === config)
			await made.runtime.update(config.servers.map((entry) => this.#inputs.entry?.(entry) ?? entry));
	}

	/**
	 * Stops every server, removes the overflow directory and closes the sign-in listener, all three at once:
	 * neither a slow server nor a failure of one step keeps the others from happening before Pi exits.
	 */
	async dispose(): Promise<void> {
		this.#ended = true;
		const made = await this.#parts?.catch(() => undefined);
		const steps = await Promise.allSettled([made?.runtime.dispose(), made?.overflow.dispose(), this.#auth.dispose()]);
		const failed = steps.find((step) => step.status === "rejected");
		if (failed) throw failed.reason;
	}
}
