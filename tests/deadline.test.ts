/**
 * The credential phase has a time bound: an authorization server that accepts connections and never
 * answers, or a keyring that never answers, cannot keep a setup `connecting` past its timeout, hold
 * `/mcp reconnect` or `session_shutdown`, or keep Pi from exiting. Real sockets (a silent server on
 * 127.0.0.1), the real SDK `auth()`, the runtime, and the real Pi 1.6 CLI with the faux model.
 */
import assert from "node:assert/strict";
import { rm, writeFile } from "node:fs/promises";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createNetServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { memoryStore, type SecretStore } from "../src/auth/keyring.ts";
import { createAuth } from "../src/auth.ts";
import { loadConfig } from "../src/config.ts";
import type { Auth, Credentials } from "../src/contracts.ts";
import { createLoginService } from "../src/login/receiver.ts";
import { createRuntime } from "../src/runtime.ts";
import type { ServerConfig } from "../src/schema.ts";
import { lazyAuth } from "../src/session.ts";
import { acquireLock, ensurePrivateDir } from "../src/store.ts";
import { httpServer } from "./fixtures/oauth/config.ts";
import { makeSandbox, runPiJson, type Sandbox, toolResults } from "./helpers/pi.ts";

const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const cleanups: (() => Promise<unknown>)[] = [];
/** The refresh locks of this file's auths (removed afterwards). */
const LOCKS = join(tmpdir(), `pi-mcp-deadline-locks-${process.pid}`);
after(async () => {
	for (const cleanup of cleanups.reverse()) await cleanup();
	await rm(LOCKS, { recursive: true, force: true });
});

/** Accepts TCP connections and never answers; `closed` resolves when the client hangs up. */
async function silentServer(): Promise<{ url: string; connected: Promise<void>; closed: Promise<void> }> {
	const sockets = new Set<Socket>();
	const events: { connected?: () => void; closed?: () => void } = {};
	const connected = new Promise<void>((resolve) => {
		events.connected = resolve;
	});
	const closed = new Promise<void>((resolve) => {
		events.closed = resolve;
	});
	const server = createNetServer((socket) => {
		sockets.add(socket);
		events.connected?.();
		socket.on("close", () => {
			sockets.delete(socket);
			events.closed?.();
		});
		socket.on("error", () => undefined);
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	cleanups.push(async () => {
		for (const socket of sockets) socket.destroy();
		await new Promise((resolve) => server.close(resolve));
	});
	return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, connected, closed };
}

/** An MCP endpoint that only says "sign in at <issuer>" (401 + RFC 9728 metadata naming `issuer`). */
async function protectedResource(issuer: string): Promise<string> {
	const server: Server = createHttpServer((req, res) => {
		const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
		if (req.url?.startsWith("/.well-known/oauth-protected-resource")) {
			res.writeHead(200, { "content-type": "application/json" });
			res.end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [issuer] }));
			return;
		}
		res.writeHead(401, {
			"www-authenticate": `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
		});
		res.end();
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	cleanups.push(async () => {
		server.closeAllConnections();
		await new Promise((resolve) => server.close(resolve));
	});
	return `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
}

function auth(store: SecretStore = memoryStore(), env: Record<string, string> = {}) {
	const login = createLoginService();
	const created = createAuth({ env, store, login, notify: () => undefined, lockDir: LOCKS });
	cleanups.push(async () => {
		created.dispose();
		await login.dispose();
	});
	return created;
}

const never = <T>() => new Promise<T>(() => undefined);

describe("auth-phase requests stop with the setup signal", { timeout: 60_000, concurrency: true }, () => {
	test("client credentials against a silent authorization server: prepare rejects and the connection is closed", async () => {
		const silent = await silentServer();
		const url = await protectedResource(silent.url);
		const config = httpServer("machine", url, {
			oauth: { grantType: "client_credentials", clientId: "c", clientSecretEnv: "CS", issuer: silent.url },
		});
		const controller = new AbortController();
		const outcome = auth(memoryStore(), { CS: "client-secret-0123" })
			.prepare(config, controller.signal)
			.then(
				() => "resolved",
				(error: Error) => error.message,
			);
		// Stuck at the authorization server: the setup's signal aborts (its timeout, a reconnect, shutdown).
		await silent.connected;
		controller.abort(new Error("setup timeout"));
		assert.match(await outcome, /^MCP server "machine": authorization failed: setup timeout\.$/);
		await silent.closed;
	});

	test("sign-in discovery against a silent authorization server: prepare rejects and the connection is closed", async () => {
		const silent = await silentServer();
		const url = await protectedResource(silent.url);
		const controller = new AbortController();
		const outcome = auth()
			.prepare(httpServer("interactive", url, { oauth: {} }), controller.signal)
			.then(
				() => "resolved",
				(error: Error) => error.message,
			);
		await silent.connected;
		controller.abort(new Error("setup timeout"));
		assert.match(await outcome, /^MCP server "interactive": authorization failed: setup timeout\.$/);
		await silent.closed;
	});

	test("a keyring that never answers: prepare gives up with the signal; status says the keyring is unavailable", async () => {
		const stuck: SecretStore = { get: never, set: never, delete: never };
		const config: ServerConfig = { ...httpServer("locked", "http://127.0.0.1:9/mcp", { oauth: {} }), requestTimeoutMs: 200 };
		const a = auth(stuck);
		const controller = new AbortController();
		const outcome = a.prepare(config, controller.signal).then(
			() => "resolved",
			(error: Error) => error.name,
		);
		controller.abort(new Error("setup timeout"));
		assert.equal(await outcome, "Error");
		// No signal: the server's request timeout is the deadline.
		assert.equal(await a.prepare(config).catch((error: Error) => error.name), "KeyringUnavailable");
		assert.equal((await a.credentialState(config)).text, "keyring unavailable");
	});

	test("waiting for another holder's refresh lock stops with the signal", async () => {
		const dir = LOCKS;
		await ensurePrivateDir(dir);
		const path = join(dir, `deadline-${process.pid}.lock`);
		const held = await acquireLock(path);
		try {
			const controller = new AbortController();
			const waiting = acquireLock(path, { timeoutMs: 60_000, signal: controller.signal }).then(
				() => "acquired",
				(error: Error) => error.message,
			);
			controller.abort(new Error("setup cancelled"));
			assert.equal(await waiting, "setup cancelled");
		} finally {
			await held.release();
		}
	});
});

describe("the deferred auth faces hand the setup's signal on", { timeout: 60_000 }, () => {
	// One face for the extension and pi-mcp alike: the session's (session.ts).
	const faces: readonly (readonly [string, (real: Auth) => Credentials])[] = [
		["the session's", (real) => lazyAuth(async () => ({ auth: real, dispose: async () => undefined })).auth],
	];
	for (const [name, face] of faces) {
		test(`${name}: a reconnect closes the connection to a silent authorization server`, async () => {
			const silent = await silentServer();
			const url = await protectedResource(silent.url);
			const sandbox = await makeSandbox();
			cleanups.push(() => sandbox.cleanup());
			const oauth = { grantType: "client_credentials", clientId: "c", clientSecretEnv: "CS", issuer: silent.url };
			// 60 s: without the signal the request would wait that long for the silent server.
			const entry = { url, auth: "oauth", oauth, timeout: 60 };
			await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { machine: entry } }));
			const env = { CS: "client-secret-0123" };
			const config = await loadConfig({ agentDir: sandbox.agentDir, cwd: sandbox.cwd, trusted: false, env });
			const runtime = createRuntime({
				servers: config.servers,
				env,
				clientInfo: { name: "t", version: "0" },
				auth: face(auth(memoryStore(), env)),
			});
			cleanups.push(() => runtime.dispose());
			const pending = runtime.tools("machine").then(
				() => "connected",
				(error: Error) => error.message,
			);
			await silent.connected;
			await runtime.reset("machine");
			assert.match(await pending, /cancelled by a reconnect|reset/);
			await silent.closed;
		});
	}
});

// Credentials that never come, bounded by the setup timeout (the runtime alone): tests/fast/runtime-timers.test.ts.

describe("a silent authorization server in a real Pi", { timeout: 120_000 }, () => {
	test("timeout 1: the call fails naming the server and the timeout, and Pi exits", async () => {
		const silent = await silentServer();
		const url = await protectedResource(silent.url);
		const sandbox: Sandbox = await makeSandbox();
		cleanups.push(() => sandbox.cleanup());
		const server = {
			url,
			auth: "oauth",
			oauth: { grantType: "client_credentials", clientId: "c", clientSecretEnv: "SILENT_SECRET", issuer: silent.url },
			timeout: 1,
		};
		await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { silent: server } }));
		// A generous bound: without a time limit on the credential phase Pi never exits and this rejects. Pi alone
		// takes ~2 s here; 15 s once ran out in CI while the conformance pool loaded both cores.
		const spawnedAt = Date.now();
		const run = await runPiJson({
			sandbox,
			extensions: [EXTENSION],
			env: { SILENT_SECRET: "client-secret-0123" },
			prompt: "call the silent server",
			script: [{ tool: "mcp", args: { action: "call", server: "silent", tool: "x", args: {} } }, { text: "done" }],
			timeoutMs: 60_000,
		});
		assert.equal(run.code, 0, run.stderr);
		// Printed for the record, not asserted: when the call was made and answered, and when Pi was gone.
		const stamps = run.events
			.filter((event) => event.type === "message_end")
			.map((event) => event.message as { role?: string; timestamp?: number });
		const asked = stamps.find((message) => message.role === "assistant")?.timestamp ?? Number.NaN;
		const answered = stamps.find((message) => message.role === "toolResult")?.timestamp ?? Number.NaN;
		console.log(
			`# call answered after ${answered - asked} ms; Pi exited ${spawnedAt + run.durationMs - answered} ms after the answer (${run.durationMs} ms in all)`,
		);
		const [call] = toolResults(run.events);
		assert.equal(call?.isError, true);
		assert.match(call?.text ?? "", /MCP server "silent" failed to start: setup did not finish within 1 s/);
		// Pi has exited: the authorization server was reached by now or never will be. On a loaded machine the
		// 1 s can run out before (loading the SDK and the auth modules, the keyring read, the 401 probe); the
		// bound is the same then, and the in-process tests above reach the silent server every time. Waiting
		// on it here unbounded hung this test until its 120 s limit once in CI.
		const pending = new Promise<boolean>((resolve) => setImmediate(() => resolve(false)));
		const reached = await Promise.race([silent.connected.then(() => true), pending]);
		if (!reached) console.log("# the 1 s ran out before the authorization server was contacted (a loaded machine)");
		assert.deepEqual(run.leftoverPids, []);
	});
});
