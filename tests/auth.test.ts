/**
 * Authentication against real parts: oidc-provider as the authorization server, an SDK v2 MCP
 * server as the protected resource, the SDK client and transport driven exactly as the runtime
 * drives them (the narrow `AuthProvider` from `prepare`), and the loopback receiver. The "browser"
 * is a fetch loop with a cookie jar; fake browser launchers on PATH prove none is ever started.
 */
import assert from "node:assert/strict";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type AuthProvider, Client, InsufficientScopeError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { KeyringUnavailable, memoryStore, type SecretStore } from "../src/auth/keyring.ts";
import { parseRecord, recordAccount } from "../src/auth/record.ts";
import { createAuth } from "../src/auth.ts";
import type { Auth } from "../src/contracts.ts";
import { AuthorizationRequired, AuthRequired, SetupFailed } from "../src/errors.ts";
import { createLoginService } from "../src/login/receiver.ts";
import type { LoginService } from "../src/login.ts";
import type { ServerConfig } from "../src/schema.ts";
// @ts-expect-error -- plain ESM fixture without types
import { browse } from "./fixtures/oauth/as.mjs";
import { httpServer } from "./fixtures/oauth/config.ts";
// @ts-expect-error -- plain ESM fixture without types
import { startProtectedMcp } from "./fixtures/oauth/rs.mjs";

type Rs = {
	mcpUrl: URL;
	as: { issuer: string; clients: { confidential: { id: string; secret: string }; public: { id: string } } };
	tokensSeen: string[];
	close(): Promise<void>;
};
type Browsed = { redirect: URL; response?: { status: number; body: string } };

const LAUNCHERS = ["xdg-open", "open", "sensible-browser", "x-www-browser", "www-browser", "gio"];

const state: { rs?: Rs; launchDir?: string; launchLog?: string; path?: string; browser?: string } = {};
/** Every message that reached a user or the model, and every secret the tests saw. */
const messages: string[] = [];
const secrets = new Set<string>();
const cleanups: (() => Promise<unknown>)[] = [];
const auths: Auth[] = [];

before(async () => {
	// Fake browser launchers first on PATH: each records its call.
	state.launchDir = await mkdtemp(join(tmpdir(), "pi-mcp-launchers-"));
	state.launchLog = join(state.launchDir, "calls.log");
	for (const name of LAUNCHERS) {
		const file = join(state.launchDir, name);
		await writeFile(file, `#!/bin/sh\necho "${name} $*" >> "${state.launchLog}"\n`);
		await chmod(file, 0o755);
	}
	state.path = process.env.PATH;
	state.browser = process.env.BROWSER;
	process.env.PATH = `${state.launchDir}:${process.env.PATH}`;
	process.env.BROWSER = join(state.launchDir, "xdg-open");
	state.rs = (await startProtectedMcp()) as Rs;
});

after(async () => {
	for (const cleanup of cleanups.reverse()) await cleanup();
	await state.rs?.close();
	process.env.PATH = state.path;
	if (state.browser === undefined) delete process.env.BROWSER;
	else process.env.BROWSER = state.browser;
	if (state.launchDir) await rm(state.launchDir, { recursive: true, force: true });
});

const rs = (): Rs => state.rs as Rs;

type Harness = {
	auth: Auth;
	login: LoginService;
	store: SecretStore & { entries(): Map<string, string> };
	notes: { server: string; message: string; ok: boolean }[];
	clock: { now: number };
	/** Resolves on the next notification. */
	nextNote(): Promise<{ server: string; message: string; ok: boolean }>;
};

function harness(env: Record<string, string | undefined> = {}, store = memoryStore()): Harness {
	const clock = { now: Date.now() };
	const login = createLoginService({ now: () => clock.now });
	const notes: Harness["notes"] = [];
	const waiters: ((note: Harness["notes"][number]) => void)[] = [];
	const auth = createAuth({
		env,
		store,
		login,
		now: () => clock.now,
		// Refresh locks in the test's own directory, never under the real agent dir.
		lockDir: join(state.launchDir as string, "mcp-locks"),
		notify: (server, message, ok) => {
			const note = { server, message, ok };
			notes.push(note);
			messages.push(message);
			for (const waiter of waiters.splice(0)) waiter(note);
		},
	});
	auths.push(auth);
	cleanups.push(async () => {
		auth.dispose();
		await login.dispose();
	});
	const nextNote = () => new Promise<Harness["notes"][number]>((resolve) => waiters.push(resolve));
	return { auth, login, store: store as Harness["store"], notes, clock, nextNote };
}

/** `prepare` must fail with a link; returns it after the common checks. */
async function expectLink(promise: Promise<unknown>): Promise<AuthorizationRequired> {
	const error = await promise.then(
		() => assert.fail("expected AuthorizationRequired"),
		(e: unknown) => e,
	);
	assert.ok(error instanceof AuthorizationRequired, `expected AuthorizationRequired, got ${String(error)}`);
	assert.ok(error instanceof AuthRequired);
	messages.push(error.message);
	const links = error.message.match(/https?:\/\/\S+/g) ?? [];
	assert.deepEqual(links, [error.url], "exactly one link, the plain URL");
	return error;
}

function linkParams(link: AuthorizationRequired): URLSearchParams {
	return new URL(link.url).searchParams;
}

/** Connects like the runtime: SDK client, Streamable HTTP, only the narrow provider. */
async function connect(config: ServerConfig, authProvider: AuthProvider | undefined): Promise<Client> {
	const client = new Client(
		{ name: "pi-mcp-test", version: "0.0.0" },
		{ capabilities: {}, versionNegotiation: { mode: "auto", probe: { timeoutMs: 5000 } } },
	);
	await client.connect(new StreamableHTTPClientTransport(new URL(config.url as string), { authProvider }));
	cleanups.push(() => client.close().catch(() => undefined));
	return client;
}

async function whoami(client: Client, tool = "whoami"): Promise<{ clientId: string; sub: string; scopes: string[] }> {
	const result = (await client.callTool({ name: tool, arguments: {} })) as { content: { type: string; text: string }[] };
	return JSON.parse(result.content[0]?.text ?? "{}");
}

/** Follows the link as the user would, remembering the code for the hygiene check. */
async function approve(link: AuthorizationRequired, options: { deliver?: boolean; deny?: boolean } = {}): Promise<Browsed> {
	const browsed = (await browse(link.url, { deliver: options.deliver ?? true, deny: options.deny ?? false })) as Browsed;
	const code = browsed.redirect.searchParams.get("code");
	if (code) secrets.add(code);
	// A refused callback would leave a test waiting for a notification forever.
	if (browsed.response && !options.deny) assert.equal(browsed.response.status, 200, browsed.response.body);
	return browsed;
}

function record(h: Harness, config: ServerConfig) {
	return parseRecord(h.store.entries().get(recordAccount(config)));
}

const oauthServer = (name: string, oauth: Record<string, string> = {}) => httpServer(name, rs().mcpUrl.href, { oauth });

describe("authorization code", { timeout: 60_000 }, () => {
	test("link before connecting, headless approval through the loopback, then a tool call succeeds", async () => {
		const h = harness();
		const config = oauthServer("remote");
		const link = await expectLink(h.auth.prepare(config));
		assert.match(link.message, /^MCP server "remote" needs sign-in\. Ask the user to open this link/);
		assert.match(link.message, /Do not open the link yourself, and do not poll or retry/);
		assert.match(link.message, /\/mcp login remote <that address>/);
		const params = linkParams(link);
		assert.equal(params.get("response_type"), "code");
		assert.equal(params.get("code_challenge_method"), "S256");
		assert.equal(params.get("resource"), rs().mcpUrl.href);
		assert.match(params.get("redirect_uri") ?? "", /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
		assert.ok((params.get("state") ?? "").length >= 40);
		assert.equal(h.login.pending(), 1);
		assert.match((await h.auth.credentialState(config)).text, /^not signed in; sign-in link pending \(valid for 5 min\)$/);

		// A second caller gets the same link: one pending sign-in per server.
		const again = await expectLink(h.auth.prepare(config));
		assert.equal(again.url, link.url);
		assert.equal(h.login.pending(), 1);

		const signedIn = h.nextNote();
		const browsed = await approve(link);
		assert.equal(browsed.response?.status, 200);
		assert.match(browsed.response?.body ?? "", /signed in to MCP server "remote"/);
		const note = await signedIn;
		assert.deepEqual(note, {
			server: "remote",
			message: 'Signed in to MCP server "remote". Calls to it can continue now.',
			ok: true,
		});
		assert.equal(h.login.pending(), 0);

		const stored = record(h, config);
		assert.ok(stored?.tokens?.access_token && stored.tokens.refresh_token, "tokens stored");
		assert.equal(stored.issuer, rs().as.issuer);
		assert.equal(stored.client?.issuer, rs().as.issuer, "registered client bound to its issuer");
		assert.ok(stored.discovery?.authorizationServerMetadata);
		assert.ok(stored.expiresAt && stored.expiresAt > h.clock.now);
		assert.deepEqual(Object.keys(JSON.parse(h.store.entries().get(recordAccount(config)) ?? "{}")), [
			"version",
			"tokens",
			"expiresAt",
			"issuedAt",
			"client",
			"discovery",
			"issuer",
			"updatedAt",
		]);
		assert.equal(h.store.entries().size, 1);
		for (const value of h.auth.secrets()) secrets.add(value);
		secrets.add(stored.tokens.access_token);
		secrets.add(stored.tokens.refresh_token);

		const provider = await h.auth.prepare(config);
		const client = await connect(config, provider);
		const me = await whoami(client);
		assert.equal(me.sub, "alice");
		assert.deepEqual(me.scopes, ["mcp:tools"]);
		assert.equal(me.clientId, stored.client?.client_id);
		const status = (await h.auth.credentialState(config)).text;
		assert.match(status, /^signed in \(expires in \d+ min\)$/);
		messages.push(status);
	});

	test("paste fallback: the redirected URL completes the flow with the same checks", async () => {
		const h = harness();
		const config = oauthServer("pasted");
		const link = await expectLink(h.auth.prepare(config));
		const browsed = await approve(link, { deliver: false });
		const wrong = await h.auth.complete({ ...config, name: "other" }, browsed.redirect.href).then(
			() => "accepted",
			(e: Error) => e.message,
		);
		assert.match(wrong, /another server/);
		const tampered = new URL(browsed.redirect.href);
		tampered.pathname = "/elsewhere";
		await assert.rejects(h.auth.complete(config, tampered.href), /not the redirect address/);
		const signedIn = h.nextNote();
		assert.equal(await h.auth.complete(config, browsed.redirect.href), "completed");
		assert.equal((await signedIn).ok, true);
		await assert.rejects(h.auth.complete(config, browsed.redirect.href), /matches no pending sign-in/);
		const client = await connect(config, await h.auth.prepare(config));
		assert.equal((await whoami(client)).sub, "alice");
	});

	test("an authorization response from another issuer (RFC 9207 iss) is refused", async () => {
		const h = harness();
		const config = oauthServer("mixup");
		const link = await expectLink(h.auth.prepare(config));
		const browsed = await approve(link, { deliver: false });
		const forged = new URL(browsed.redirect.href);
		forged.searchParams.set("iss", "http://127.0.0.1:9");
		const failed = h.nextNote();
		assert.equal(await h.auth.complete(config, forged.href), "failed");
		const note = await failed;
		assert.equal(note.ok, false);
		assert.match(
			note.message,
			/^Sign-in to MCP server "mixup" failed: .*authorization server.*Run \/mcp login mixup for a new link\.$/s,
		);
		assert.equal(record(h, config)?.tokens, undefined, "no tokens stored");
		// A new link is issued afterwards.
		const next = await expectLink(h.auth.prepare(config));
		assert.notEqual(next.url, link.url);
	});

	test("the user denies access: a clear error, then a new link works", async () => {
		const h = harness();
		const config = oauthServer("denied");
		const link = await expectLink(h.auth.prepare(config));
		const failed = h.nextNote();
		const browsed = await approve(link, { deny: true });
		assert.equal(browsed.redirect.searchParams.get("error"), "access_denied");
		assert.equal(browsed.response?.status, 400);
		assert.equal(browsed.response?.body.includes("access_denied"), false, "the receiver echoes nothing");
		const note = await failed;
		assert.equal(note.ok, false);
		assert.match(
			note.message,
			/^Sign-in to MCP server "denied" was refused by the authorization server \(access_denied: End-User aborted interaction\)\. Run \/mcp login denied to try again\.$/,
		);
		const next = await expectLink(h.auth.prepare(config));
		assert.notEqual(next.url, link.url);
		const signedIn = h.nextNote();
		await approve(next);
		assert.equal((await signedIn).ok, true);
	});

	test("expired tokens are refreshed before connecting; the rotated refresh token is stored", async () => {
		const h = harness();
		const config = oauthServer("refresh");
		const signedIn = h.nextNote();
		await approve(await expectLink(h.auth.prepare(config)));
		await signedIn;
		const first = record(h, config);
		h.clock.now += 11 * 60_000;
		assert.equal((await h.auth.credentialState(config)).text, "signed in (token expired; refreshed on next use)");
		const provider = await h.auth.prepare(config);
		assert.equal(h.login.pending(), 0, "no link for a refresh");
		const second = record(h, config);
		assert.notEqual(second?.tokens?.access_token, first?.tokens?.access_token);
		assert.notEqual(second?.tokens?.refresh_token, first?.tokens?.refresh_token, "rotated");
		assert.ok((second?.updatedAt ?? 0) > (first?.updatedAt ?? 0));
		for (const value of [second?.tokens?.access_token, second?.tokens?.refresh_token]) if (value) secrets.add(value);
		const client = await connect(config, provider);
		assert.equal((await whoami(client)).sub, "alice");
	});

	test("a rejected token is refreshed once by onUnauthorized, without any link", async () => {
		const h = harness();
		const config = oauthServer("rejected");
		const signedIn = h.nextNote();
		await approve(await expectLink(h.auth.prepare(config)));
		await signedIn;
		const account = recordAccount(config);
		const stored = record(h, config);
		assert.ok(stored?.tokens);
		await h.store.set(account, JSON.stringify({ ...stored, tokens: { ...stored.tokens, access_token: "revoked-or-garbage" } }));
		const provider = await h.auth.prepare(config);
		assert.equal(await provider?.token(), "revoked-or-garbage");
		const client = await connect(config, provider);
		assert.equal((await whoami(client)).sub, "alice");
		assert.notEqual(record(h, config)?.tokens?.access_token, "revoked-or-garbage");
		assert.equal(h.login.pending(), 0);
	});

	test("a spent refresh token ends in a new link, not an error", async () => {
		const h = harness();
		const config = oauthServer("spent");
		const signedIn = h.nextNote();
		await approve(await expectLink(h.auth.prepare(config)));
		await signedIn;
		const old = record(h, config);
		h.clock.now += 11 * 60_000;
		await h.auth.prepare(config); // refresh: the old refresh token is now spent
		// Another process would still hold the old record: put it back and let it expire.
		await h.store.set(recordAccount(config), JSON.stringify(old));
		const link = await expectLink(h.auth.prepare(config));
		assert.match(link.message, /^The sign-in to MCP server "spent" has expired or was revoked\./);
		assert.equal(record(h, config)?.tokens, undefined, "the dead tokens are dropped");
		// The link was started inside the refresh attempt; it still completes through the loopback.
		assert.match(linkParams(link).get("redirect_uri") ?? "", /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
		const again = h.nextNote();
		assert.equal((await approve(link)).response?.status, 200);
		assert.equal((await again).ok, true);
		const client = await connect(config, await h.auth.prepare(config));
		assert.equal((await whoami(client)).sub, "alice");
	});

	test("onUnauthorized never starts an interactive flow: without a refresh token it ends in AuthRequired with a link", async () => {
		const h = harness();
		const config = oauthServer("norefresh");
		const account = recordAccount(config);
		await h.store.set(
			account,
			JSON.stringify({
				version: 1,
				tokens: { access_token: "not-a-valid-token", token_type: "Bearer", issuer: rs().as.issuer },
				expiresAt: h.clock.now + 3_600_000,
				updatedAt: 1,
			}),
		);
		const provider = await h.auth.prepare(config);
		const error = await connect(config, provider).then(
			() => assert.fail("connect should need sign-in"),
			(e: unknown) => e,
		);
		assert.ok(error instanceof AuthorizationRequired, String(error));
		messages.push(error.message);
		assert.match(error.message, /has expired or was revoked/);
		assert.equal(h.login.pending(), 1);
		const signedIn = h.nextNote();
		await approve(error);
		assert.equal((await signedIn).ok, true);
		const client = await connect(config, await h.auth.prepare(config));
		assert.equal((await whoami(client)).sub, "alice");
	});

	test("step-up: 403 insufficient_scope gives a link for the union scope; after approval the call succeeds", async () => {
		const h = harness();
		const config = oauthServer("stepup");
		const signedIn = h.nextNote();
		await approve(await expectLink(h.auth.prepare(config)));
		await signedIn;
		const client = await connect(config, await h.auth.prepare(config));
		const denied = await whoami(client, "admin").then(
			() => assert.fail("admin needs mcp:admin"),
			(e: unknown) => e,
		);
		assert.ok(denied instanceof InsufficientScopeError, String(denied));
		const stepUp = await h.auth.stepUp(config, denied);
		assert.ok(stepUp instanceof AuthorizationRequired);
		messages.push(stepUp.message);
		assert.match(stepUp.message, /^MCP server "stepup" needs more permissions for this call \(scope: [^)]*mcp:admin[^)]*\)\./);
		const scope = (linkParams(stepUp).get("scope") ?? "").split(" ");
		assert.ok(scope.includes("mcp:tools") && scope.includes("mcp:admin"), scope.join(" "));
		// The existing tokens keep working meanwhile, refreshes included (the new registration made
		// for the wider scope is not stored before the step-up completes).
		assert.equal((await whoami(client)).sub, "alice");
		const current = record(h, config);
		await h.store.set(recordAccount(config), JSON.stringify({ ...current, expiresAt: h.clock.now - 1 }));
		const refreshed = await connect(config, await h.auth.prepare(config));
		assert.notEqual(record(h, config)?.tokens?.access_token, current?.tokens?.access_token, "refreshed");
		assert.equal((await whoami(refreshed)).sub, "alice");
		assert.equal(h.login.pending(), 1, "the step-up link is still pending");
		const done = h.nextNote();
		await approve(stepUp);
		const note = await done;
		assert.equal(note.ok, true, note.message);
		const wider = await connect(config, await h.auth.prepare(config));
		const me = await whoami(wider, "admin");
		assert.deepEqual([...me.scopes].sort(), ["mcp:admin", "mcp:tools"]);
	});

	test("/mcp login gives a fresh link even when signed in; /mcp logout deletes the record", async () => {
		const h = harness();
		const config = oauthServer("relogin");
		const signedIn = h.nextNote();
		await approve(await expectLink(h.auth.prepare(config)));
		await signedIn;
		const before = record(h, config);
		const fresh = await h.auth.login(config);
		messages.push(fresh.message);
		assert.match(fresh.message, /^Open this link in your browser to sign in to MCP server "relogin":\n/);
		assert.equal((fresh.message.match(/https?:\/\/\S+/g) ?? []).length, 1);
		const again = h.nextNote();
		await approve(fresh);
		assert.equal((await again).ok, true);
		assert.notEqual(record(h, config)?.tokens?.access_token, before?.tokens?.access_token);
		assert.equal(await h.auth.logout(config), true);
		assert.equal(h.store.entries().size, 0);
		assert.equal((await h.auth.credentialState(config)).text, "not signed in");
		assert.equal(await h.auth.logout(config), false);
		await expectLink(h.auth.prepare(config));
		await assert.rejects(h.auth.login(httpServer("plain", rs().mcpUrl.href)), /does not sign in through a browser/);
	});

	test("a failed code exchange (invalid_grant) during /mcp login changes nothing stored", async () => {
		const h = harness();
		const config = oauthServer("keepgrant");
		const signedIn = h.nextNote();
		await approve(await expectLink(h.auth.prepare(config)));
		assert.equal((await signedIn).ok, true);
		const before = h.store.entries().get(recordAccount(config));
		// Anyone holding the link's state could send a bad code; the working sign-in must survive it.
		const browsed = await approve(await h.auth.login(config), { deliver: false });
		const forged = new URL(browsed.redirect.href);
		forged.searchParams.set("code", "forged-code-0123456789");
		const failed = h.nextNote();
		assert.equal(await h.auth.complete(config, forged.href), "failed");
		const note = await failed;
		messages.push(note.message);
		assert.equal(note.ok, false);
		assert.match(
			note.message,
			/^Sign-in to MCP server "keepgrant" failed: .*invalid_grant.*\. Run \/mcp login keepgrant for a new link\.$/,
		);
		assert.equal(h.store.entries().get(recordAccount(config)), before, "the record is byte for byte the same");
		const client = await connect(config, await h.auth.prepare(config));
		assert.equal((await whoami(client)).sub, "alice", "the stored tokens still work");
	});

	test("a failed code exchange (invalid_client) changes nothing stored either", async () => {
		const { id, secret } = rs().as.clients.confidential;
		secrets.add(secret);
		const config = oauthServer("keepclient", { clientId: id, clientSecretEnv: "CONF_SECRET", issuer: rs().as.issuer });
		const good = harness({ CONF_SECRET: secret });
		const signedIn = good.nextNote();
		await approve(await expectLink(good.auth.prepare(config)));
		assert.equal((await signedIn).ok, true);
		const before = good.store.entries().get(recordAccount(config));
		assert.ok(before);
		// Another session, same keyring, whose secret the authorization server refuses.
		const bad = harness({ CONF_SECRET: "wrong-secret-0123456789" }, good.store);
		const browsed = await approve(await bad.auth.login(config), { deliver: false });
		const failed = bad.nextNote();
		assert.equal(await bad.auth.complete(config, browsed.redirect.href), "failed");
		const note = await failed;
		messages.push(note.message);
		assert.equal(note.ok, false);
		assert.match(note.message, /^Sign-in to MCP server "keepclient" failed: .*refused the client/);
		assert.equal(good.store.entries().get(recordAccount(config)), before, "the record is byte for byte the same");
		const client = await connect(config, await good.auth.prepare(config));
		assert.equal((await whoami(client)).clientId, id);
	});

	test("pre-registered public client with its exact issuer: no registration, the link names the client", async () => {
		const h = harness();
		const config = oauthServer("prereg", { clientId: rs().as.clients.public.id, issuer: rs().as.issuer });
		const link = await expectLink(h.auth.prepare(config));
		assert.equal(linkParams(link).get("client_id"), rs().as.clients.public.id);
		const signedIn = h.nextNote();
		await approve(link);
		assert.equal((await signedIn).ok, true);
		assert.equal(record(h, config)?.client, undefined, "nothing registered");
		const client = await connect(config, await h.auth.prepare(config));
		assert.equal((await whoami(client)).clientId, rs().as.clients.public.id);
	});

	test("pre-registered confidential client: the secret from the environment authenticates the code exchange", async () => {
		const { id, secret } = rs().as.clients.confidential;
		secrets.add(secret);
		const h = harness({ CONF_SECRET: secret });
		const config = oauthServer("confidential", { clientId: id, clientSecretEnv: "CONF_SECRET", issuer: rs().as.issuer });
		const signedIn = h.nextNote();
		await approve(await expectLink(h.auth.prepare(config)));
		assert.equal((await signedIn).ok, true);
		const client = await connect(config, await h.auth.prepare(config));
		assert.equal((await whoami(client)).clientId, id);
		const unset = harness({});
		const error = await unset.auth.prepare(config).catch((e: unknown) => e);
		assert.ok(error instanceof AuthRequired && !(error instanceof AuthorizationRequired), String(error));
		assert.match(error.message, /oauth\.clientSecretEnv CONF_SECRET is not set/);
		assert.equal(unset.login.pending(), 0);
	});

	test("wrong issuer: the SDK rejects a pre-registered client, and a registered one is checked too; no link", async () => {
		const h = harness();
		const variants: Record<string, string>[] = [
			{ clientId: rs().as.clients.public.id, issuer: "http://127.0.0.1:9" },
			{ issuer: "http://127.0.0.1:9" },
		];
		for (const oauth of variants) {
			const config = oauthServer("wrongiss", oauth);
			const error = await h.auth.prepare(config).then(
				() => assert.fail("expected a rejection"),
				(e: unknown) => e,
			);
			assert.ok(error instanceof SetupFailed, String(error));
			messages.push(error.message);
			assert.match(error.message, /oauth\.issuer/);
			assert.equal(/https?:\/\/127\.0\.0\.1:\d+\/auth/.test(error.message), false, "no link");
			assert.equal(h.login.pending(), 0);
		}
	});

	test("keyring unavailable: the flow stops before any link", async () => {
		const broken: SecretStore = {
			get: async () => {
				throw new KeyringUnavailable(new Error("no bus"));
			},
			set: async () => {
				throw new KeyringUnavailable(new Error("no bus"));
			},
			delete: async () => {
				throw new KeyringUnavailable(new Error("no bus"));
			},
		};
		const h = harness({}, broken as Harness["store"]);
		const config = oauthServer("nokeyring");
		await assert.rejects(h.auth.prepare(config), KeyringUnavailable);
		assert.equal(h.login.pending(), 0);
		assert.equal((await h.auth.credentialState(config)).text, "keyring unavailable");
	});
});

describe("client credentials", { timeout: 60_000 }, () => {
	test("secret from the environment, exact issuer, tokens in memory only: no record, no link", async () => {
		const { id, secret } = rs().as.clients.confidential;
		secrets.add(secret);
		const h = harness({ CC_SECRET: secret });
		const config = oauthServer("machine", {
			grantType: "client_credentials",
			clientId: id,
			clientSecretEnv: "CC_SECRET",
			issuer: rs().as.issuer,
		});
		assert.equal((await h.auth.credentialState(config)).text, "client credentials (token fetched on connect)");
		const provider = await h.auth.prepare(config);
		const client = await connect(config, provider);
		const me = await whoami(client);
		assert.equal(me.clientId, id);
		assert.equal(h.store.entries().size, 0, "nothing in the keyring");
		assert.equal(h.login.pending(), 0, "no link, no listener");
		assert.equal((await h.auth.credentialState(config)).text, "client credentials (token in memory)");
		const first = await provider?.token();
		if (first) secrets.add(first);
		assert.equal(await provider?.token(), first, "reused while valid");
		// An expired token is fetched again.
		h.clock.now += 11 * 60_000;
		const second = await provider?.token();
		assert.ok(second && second !== first);
		secrets.add(second);
		// A rejected token is fetched again once (onUnauthorized), then the request is retried.
		await provider?.onUnauthorized?.({ response: new Response(null, { status: 401 }), serverUrl: rs().mcpUrl, fetchFn: fetch });
		const third = await provider?.token();
		assert.ok(third && third !== second);
		secrets.add(third);
		assert.equal((await whoami(client)).clientId, id);
	});

	test("missing secret variable, wrong secret, wrong issuer", async () => {
		const { id } = rs().as.clients.confidential;
		const settings = { grantType: "client_credentials", clientId: id, clientSecretEnv: "CC_SECRET", issuer: rs().as.issuer };
		const missing = harness({});
		const error = await missing.auth.prepare(oauthServer("m1", settings)).catch((e: unknown) => e);
		assert.ok(error instanceof AuthRequired);
		assert.equal(
			error.message,
			'MCP server "m1": oauth.clientSecretEnv CC_SECRET is not set; set it in the environment Pi runs in, then run /mcp reconnect m1.',
		);
		assert.equal(
			(await missing.auth.credentialState(oauthServer("m1", settings))).text,
			"client credentials: CC_SECRET is not set",
		);

		const wrongSecret = "definitely-the-wrong-secret-value";
		secrets.add(wrongSecret);
		const wrong = harness({ CC_SECRET: wrongSecret });
		const refused = await wrong.auth.prepare(oauthServer("m2", settings)).catch((e: unknown) => e);
		assert.ok(refused instanceof AuthRequired, String(refused));
		messages.push(refused.message);
		assert.match(refused.message, /refused the client .*check "oauth\.clientId" and its secret/);

		const issuer = harness({ CC_SECRET: rs().as.clients.confidential.secret });
		const mismatch = await issuer.auth
			.prepare(oauthServer("m3", { ...settings, issuer: "http://127.0.0.1:9" }))
			.catch((e: unknown) => e);
		assert.ok(mismatch instanceof SetupFailed, String(mismatch));
		messages.push(mismatch.message);
		assert.match(mismatch.message, /not the one this configuration trusts.*oauth\.issuer/);
	});

	test("step-up is not possible for a machine client: a clear error", async () => {
		const h = harness({ CC_SECRET: "x" });
		const config = oauthServer("m4", {
			grantType: "client_credentials",
			clientId: "c",
			clientSecretEnv: "CC_SECRET",
			issuer: rs().as.issuer,
		});
		const error = await h.auth.stepUp(config, new InsufficientScopeError({ requiredScope: "mcp:tools mcp:admin" }));
		assert.match(error.message, /requires scope "mcp:tools mcp:admin".*add it to "oauth\.scope"/);
	});
});

describe("bearer", { timeout: 60_000 }, () => {
	test("token from the named variable, read at connect time; missing names the variable", async () => {
		const { id, secret } = rs().as.clients.confidential;
		// A real access token for the resource, obtained out of band.
		const response = await fetch(`${rs().as.issuer}/token`, {
			method: "POST",
			headers: {
				authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`,
				"content-type": "application/x-www-form-urlencoded",
			},
			body: new URLSearchParams({ grant_type: "client_credentials", scope: "mcp:tools", resource: rs().mcpUrl.href }),
		});
		const token = ((await response.json()) as { access_token: string }).access_token;
		secrets.add(token);
		const config = httpServer("bearer", rs().mcpUrl.href, { auth: "bearer", bearerTokenEnv: "MCP_TOKEN" });
		const h = harness({ MCP_TOKEN: token });
		assert.equal((await h.auth.credentialState(config)).text, "bearer token from MCP_TOKEN");
		const provider = await h.auth.prepare(config);
		assert.equal(await provider?.token(), token);
		assert.equal((await whoami(await connect(config, provider))).clientId, id);
		assert.equal(h.store.entries().size, 0);

		const none = harness({});
		const error = await none.auth.prepare(config).catch((e: unknown) => e);
		assert.ok(error instanceof AuthRequired);
		assert.equal(
			error.message,
			'MCP server "bearer": bearerTokenEnv MCP_TOKEN is not set; set it in the environment Pi runs in, then run /mcp reconnect bearer.',
		);
		assert.equal((await none.auth.credentialState(config)).text, "bearer token: MCP_TOKEN is not set");
		assert.equal(await none.auth.prepare(httpServer("open", rs().mcpUrl.href)), undefined);
	});
});

describe("zero browser and secret hygiene", { timeout: 60_000 }, () => {
	test("no browser launcher was ever called", async () => {
		const calls = await readFile(state.launchLog as string, "utf8").catch(() => "");
		assert.equal(calls, "");
	});

	test("no token, client secret, code or verifier appears in any message", () => {
		for (const auth of auths) for (const value of auth.secrets()) secrets.add(value);
		for (const token of rs().tokensSeen) if (!/garbage|not-a-valid/.test(token)) secrets.add(token);
		assert.ok(messages.length > 10, `collected ${messages.length} messages`);
		assert.ok(secrets.size > 10, `collected ${secrets.size} secrets`);
		for (const message of messages) {
			for (const secret of secrets)
				assert.equal(message.includes(secret), false, `a secret leaked into: ${message.slice(0, 120)}`);
		}
	});
});
