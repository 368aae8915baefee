/**
 * The loopback receiver against real HTTP requests on 127.0.0.1: every attack is refused with a
 * plain-text 4xx, consumes nothing, and the flow it aimed at still completes afterwards.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { connect, createServer } from "node:net";
import { afterEach, describe, test } from "node:test";
import { CallbackRejected, createLoginService } from "../../src/login/receiver.ts";
import { FLOW_TTL_MS, type LoginService } from "../../src/login.ts";

type Reply = Readonly<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>;

const services: LoginService[] = [];
afterEach(async () => {
	await Promise.all(services.splice(0).map((service) => service.dispose()));
});

const newState = () => randomBytes(24).toString("base64url");

function service(clock = { now: 1_000_000 }, onClosed?: (port: number) => void): LoginService {
	const created = createLoginService({ now: () => clock.now, onClosed });
	services.push(created);
	return created;
}

/** The service's `onClosed` events: `next(port)` resolves when that port's listener next stops (no sleeping). */
function closings(): Readonly<{ onClosed: (port: number) => void; next: (port: number) => Promise<void> }> {
	const waiting = new Map<number, () => void>();
	return {
		onClosed: (port) => {
			waiting.get(port)?.();
			waiting.delete(port);
		},
		next: (port) => new Promise<void>((resolve) => waiting.set(port, resolve)),
	};
}

type Flow = { state: string; uri: URL; calls: URLSearchParams[]; done: Promise<URLSearchParams> };

/** Begins a flow that records its callbacks; an `error` callback makes it fail, as auth.ts does. */
async function begin(login: LoginService, server = "srv", redirectUri?: string): Promise<Flow> {
	const state = newState();
	const calls: URLSearchParams[] = [];
	const settled: { resolve?: (params: URLSearchParams) => void } = {};
	const done = new Promise<URLSearchParams>((resolve) => {
		settled.resolve = resolve;
	});
	const uri = new URL(
		await login.begin({
			server,
			state,
			redirectUri,
			onCallback: async (params) => {
				calls.push(params);
				settled.resolve?.(params);
				if (params.has("error")) throw new Error("refused by the authorization server");
			},
		}),
	);
	return { state, uri, calls, done };
}

/** A raw HTTP request (fetch cannot set Host). */
function send(
	port: number,
	path: string,
	options: Readonly<{ method?: string; host?: string; headers?: Record<string, string>; address?: string }> = {},
): Promise<Reply> {
	return new Promise((resolve, reject) => {
		const req = request(
			{
				host: options.address ?? "127.0.0.1",
				port,
				path,
				method: options.method ?? "GET",
				headers: { Host: options.host ?? `127.0.0.1:${port}`, ...options.headers },
				agent: false,
			},
			(res) => {
				const chunks: Buffer[] = [];
				res.on("data", (chunk: Buffer) => chunks.push(chunk));
				res.on("end", () =>
					resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
				);
			},
		);
		req.on("error", reject);
		req.end();
	});
}

const callbackPath = (flow: Flow, params: Record<string, string>) =>
	`${flow.uri.pathname}?${new URLSearchParams({ state: flow.state, ...params })}`;

function assertPlain(reply: Reply): void {
	assert.match(String(reply.headers["content-type"]), /^text\/plain; charset=utf-8$/);
	assert.equal(reply.headers["cache-control"], "no-store");
	assert.equal(reply.headers["referrer-policy"], "no-referrer");
	assert.equal(reply.headers["x-content-type-options"], "nosniff");
}

/** A refused request: 4xx, plain text, nothing echoed, nothing consumed. */
function assertRefused(reply: Reply, status: number, flow: Flow, echo: readonly string[] = []): void {
	assert.equal(reply.status, status, reply.body);
	assertPlain(reply);
	for (const fragment of [flow.state, ...echo]) assert.equal(reply.body.includes(fragment), false, `echoed ${fragment}`);
	assert.equal(flow.calls.length, 0, "nothing consumed");
}

/** The legitimate callback still completes the flow. */
async function assertCompletes(flow: Flow, code = `code-${randomBytes(4).toString("hex")}`): Promise<void> {
	const reply = await send(Number(flow.uri.port), callbackPath(flow, { code, iss: "http://127.0.0.1:1" }));
	assert.equal(reply.status, 200, reply.body);
	assertPlain(reply);
	assert.match(reply.body, /signed in to MCP server "srv"/);
	assert.equal(reply.body.includes(code), false);
	assert.equal(flow.calls.length, 1);
	assert.equal(flow.calls[0]?.get("code"), code);
}

function rawRequest(port: number, text: string): Promise<string> {
	return new Promise((resolve, reject) => {
		const socket = connect(port, "127.0.0.1", () => socket.end(text));
		const chunks: Buffer[] = [];
		socket.on("data", (chunk: Buffer) => chunks.push(chunk));
		socket.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
		socket.on("error", reject);
	});
}

function refused(port: number): Promise<boolean> {
	return send(port, "/callback").then(
		() => false,
		(error: NodeJS.ErrnoException) => error.code === "ECONNREFUSED",
	);
}

/** Why this machine cannot listen on ::1, or `undefined` when it can. */
async function ipv6Loopback(): Promise<string | undefined> {
	const server = createServer();
	return new Promise((resolve) => {
		server.once("error", (error: NodeJS.ErrnoException) => resolve(`cannot listen on ::1 (${error.code})`));
		server.listen(0, "::1", () => server.close(() => resolve(undefined)));
	});
}

/** Resolves once nothing listens on `port` at `address` any more (the listener closes after its last callback). */
async function waitClosed(port: number, address: string): Promise<void> {
	for (;;) {
		const closed = await send(port, "/cb", { address }).then(
			() => false,
			(error: NodeJS.ErrnoException) => error.code === "ECONNREFUSED",
		);
		if (closed) return;
		await new Promise((resolve) => setImmediate(resolve));
	}
}

async function freePort(): Promise<number> {
	const server = createServer();
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const port = (server.address() as { port: number }).port;
	await new Promise((resolve) => server.close(resolve));
	return port;
}

describe("loopback receiver", { timeout: 60_000 }, () => {
	test("the default redirect URI is an ephemeral port on 127.0.0.1 with path /callback", async () => {
		const flow = await begin(service());
		assert.equal(flow.uri.origin, `http://127.0.0.1:${flow.uri.port}`);
		assert.equal(flow.uri.pathname, "/callback");
		assert.ok(Number(flow.uri.port) > 0);
		await assertCompletes(flow);
	});

	test("wrong method: 405, nothing consumed", async () => {
		const flow = await begin(service());
		const port = Number(flow.uri.port);
		for (const method of ["POST", "PUT", "DELETE", "OPTIONS"]) {
			const reply = await send(port, callbackPath(flow, { code: "c-method" }), { method });
			assertRefused(reply, 405, flow, ["c-method"]);
			assert.equal(reply.headers.allow, "GET");
		}
		await assertCompletes(flow);
	});

	test("wrong path: 404", async () => {
		const flow = await begin(service());
		for (const path of ["/", "/callback/", "/Callback", "/callbackx", "/other/callback", "//callback"]) {
			const reply = await send(Number(flow.uri.port), `${path}?${new URLSearchParams({ state: flow.state, code: "c-path" })}`);
			assertRefused(reply, 404, flow, ["c-path"]);
		}
		await assertCompletes(flow);
	});

	test("wrong or rebinding Host: 421", async () => {
		const flow = await begin(service());
		const port = Number(flow.uri.port);
		for (const host of [
			`attacker.example:${port}`,
			`localhost:${port}`,
			"127.0.0.1",
			`127.0.0.1:${port + 1}`,
			`127.0.0.2:${port}`,
		]) {
			const reply = await send(port, callbackPath(flow, { code: "c-host" }), { host });
			assertRefused(reply, 421, flow, ["c-host", "attacker"]);
		}
		// No Host at all (HTTP/1.0, which allows it).
		const raw = await rawRequest(port, `GET ${callbackPath(flow, { code: "c-nohost" })} HTTP/1.0\r\n\r\n`);
		assert.match(raw, /^HTTP\/1\.1 421 /);
		assert.equal(raw.includes("c-nohost"), false);
		assert.equal(flow.calls.length, 0);
		await assertCompletes(flow);
	});

	test("foreign Origin: 403", async () => {
		const flow = await begin(service());
		const port = Number(flow.uri.port);
		for (const origin of ["http://attacker.example", "null", `http://localhost:${port}`, `https://127.0.0.1:${port}`]) {
			const reply = await send(port, callbackPath(flow, { code: "c-origin" }), { headers: { Origin: origin } });
			assertRefused(reply, 403, flow, ["c-origin", "attacker"]);
		}
		// Its own origin is fine (a same-origin navigation may carry it).
		const same = await send(port, callbackPath(flow, { code: "c-same" }), { headers: { Origin: `http://127.0.0.1:${port}` } });
		assert.equal(same.status, 200);
	});

	test("missing, duplicated or unknown state, and unsolicited requests: 400", async () => {
		const flow = await begin(service());
		const port = Number(flow.uri.port);
		const attempts = [
			"/callback?code=c-unsolicited",
			"/callback",
			`/callback?state=&code=c-empty`,
			`/callback?state=${newState()}&code=c-unknown`,
			`/callback?state=${flow.state}&state=${newState()}&code=c-dup`,
			`/callback?state=${flow.state}`,
			`/callback?state=${flow.state}&code=a&code=b`,
			`/callback?state=${flow.state}&code=a&error=access_denied`,
		];
		for (const path of attempts) assertRefused(await send(port, path), 400, flow, ["c-unsolicited", "c-unknown", "c-dup"]);
		await assertCompletes(flow);
	});

	test("expired state: 400 and the flow is gone; a new flow still completes", async () => {
		const clock = { now: 1_000_000 };
		const login = service(clock);
		const stale = await begin(login);
		const fresh = await begin(login);
		assert.equal(stale.uri.port, fresh.uri.port, "flows share one listener");
		clock.now += FLOW_TTL_MS + 1;
		assertRefused(await send(Number(stale.uri.port), callbackPath(stale, { code: "c-late" })), 400, stale);
		assertRefused(await send(Number(stale.uri.port), callbackPath(stale, { code: "c-late" })), 400, stale);
		const again = await begin(login);
		await assertCompletes(again);
	});

	test("replayed state: the first callback wins, the replay gets 400; other flows are untouched", async () => {
		const login = service();
		const first = await begin(login);
		const second = await begin(login);
		await assertCompletes(first, "code-first");
		const replay = await send(Number(first.uri.port), callbackPath(first, { code: "code-replay" }));
		assert.equal(replay.status, 400);
		assertPlain(replay);
		assert.equal(first.calls.length, 1);
		await assertCompletes(second);
	});

	test("an error response from the authorization server ends that flow only", async () => {
		const login = service();
		const denied = await begin(login);
		const other = await begin(login);
		const reply = await send(
			Number(denied.uri.port),
			callbackPath(denied, { error: "access_denied", error_description: "<b>nope</b>" }),
		);
		assert.equal(reply.status, 400);
		assertPlain(reply);
		assert.match(reply.body, /did not complete/);
		assert.equal(reply.body.includes("nope"), false);
		assert.equal(denied.calls.length, 1);
		assert.equal(denied.calls[0]?.get("error"), "access_denied");
		assert.equal((await send(Number(denied.uri.port), callbackPath(denied, { code: "late" }))).status, 400);
		await assertCompletes(other);
	});

	test("oversized requests are refused", async () => {
		const flow = await begin(service());
		const port = Number(flow.uri.port);
		const big = `${callbackPath(flow, { code: "c-big" })}&pad=${"x".repeat(5000)}`;
		assertRefused(await send(port, big), 414, flow, ["c-big"]);
		// Beyond the header limit Node refuses before our handler runs.
		const huge = await send(port, callbackPath(flow, { code: "c" }), { headers: { "X-Pad": "y".repeat(10_000) } });
		assert.equal(huge.status, 431);
		assert.equal(flow.calls.length, 0);
		await assertCompletes(flow);
	});

	test("the listener exists only while a flow is pending: completion, cancel, expiry, dispose", { timeout: 20_000 }, async () => {
		const clock = { now: 5_000 };
		const closed = closings();
		const login = service(clock, closed.onClosed);
		const a = await begin(login);
		const port = Number(a.uri.port);
		const aClosed = closed.next(port);
		await assertCompletes(a);
		await aClosed;
		assert.equal(await refused(port), true, "closed after completion");
		assert.equal(login.pending(), 0);

		const b = await begin(login);
		assert.equal(login.pending(), 1);
		const bClosed = closed.next(Number(b.uri.port));
		login.cancel(b.state);
		await bClosed;
		assert.equal(await refused(Number(b.uri.port)), true, "closed after cancel");

		const c = await begin(login);
		clock.now += FLOW_TTL_MS + 1;
		const cClosed = closed.next(Number(c.uri.port));
		assert.equal((await send(Number(c.uri.port), callbackPath(c, { code: "x" }))).status, 400);
		await cClosed;
		assert.equal(await refused(Number(c.uri.port)), true, "closed after expiry");

		const d = await begin(login);
		await login.dispose();
		assert.equal(await refused(Number(d.uri.port)), true, "closed on dispose");
		await assert.rejects(begin(login), /shut down/);
	});

	test("a configured redirect URI is used as is, with its own Host", async () => {
		const port = await freePort();
		const login = service();
		const flow = await begin(login, "srv", `http://localhost:${port}/oauth/cb`);
		assert.equal(flow.uri.href, `http://localhost:${port}/oauth/cb`);
		assertRefused(await send(port, callbackPath(flow, { code: "c" })), 421, flow);
		assertRefused(
			await send(port, callbackPath(flow, { code: "c" }).replace("/oauth/cb", "/callback"), { host: `localhost:${port}` }),
			404,
			flow,
		);
		const reply = await send(port, callbackPath(flow, { code: "c-ok" }), { host: `localhost:${port}` });
		assert.equal(reply.status, 200);
		assert.equal(flow.calls.length, 1);
	});

	test("a configured localhost redirect answers on both 127.0.0.1 and ::1", async (t) => {
		const why = await ipv6Loopback();
		const port = await freePort();
		const login = service();
		const flow = await begin(login, "srv", `http://localhost:${port}/cb`);
		const host = { host: `localhost:${port}` };
		// Both families answer (a browser may resolve localhost to either); a refusal consumes nothing.
		assertRefused(await send(port, "/cb?state=nope&code=c", { ...host, address: "127.0.0.1" }), 400, flow);
		if (why !== undefined) {
			t.diagnostic(`::1 not checked: ${why}`);
			console.log(`# skipped the ::1 half: ${why}`);
		} else {
			assertRefused(await send(port, "/cb?state=nope&code=c", { ...host, address: "::1" }), 400, flow);
			const reply = await send(port, callbackPath(flow, { code: "c-v6" }), { ...host, address: "::1" });
			assert.equal(reply.status, 200, reply.body);
			assert.equal(flow.calls[0]?.get("code"), "c-v6");
			// Both listeners close once the flow is done.
			await waitClosed(port, "::1");
			await waitClosed(port, "127.0.0.1");
		}
	});

	test("a configured localhost redirect whose ::1 port is taken is a clear error, not a half listener", async (t) => {
		const why = await ipv6Loopback();
		if (why !== undefined) return t.skip(`no IPv6 loopback: ${why}`);
		const port = await freePort();
		const blocker = createServer();
		await new Promise<void>((resolve) => blocker.listen(port, "::1", resolve));
		try {
			const login = service();
			await assert.rejects(
				begin(login, "srv", `http://localhost:${port}/cb`),
				/cannot listen on http:\/\/localhost:\d+ .*EADDRINUSE/,
			);
			assert.equal(login.pending(), 0);
			assert.equal(await refused(port), true, "the 127.0.0.1 half was closed again");
		} finally {
			await new Promise((resolve) => blocker.close(resolve));
		}
	});

	test("a busy configured port is a clear error", async () => {
		const blocker = createServer();
		await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
		const port = (blocker.address() as { port: number }).port;
		try {
			const login = service();
			await assert.rejects(
				begin(login, "srv", `http://127.0.0.1:${port}/callback`),
				/cannot listen on http:\/\/127\.0\.0\.1:\d+ .*EADDRINUSE/,
			);
			assert.equal(login.pending(), 0);
		} finally {
			await new Promise((resolve) => blocker.close(resolve));
		}
	});

	test("begin refuses weak or reused state values", async () => {
		const login = service();
		const flow = await begin(login);
		await assert.rejects(login.begin({ server: "s", state: "short", onCallback: async () => {} }), /state/);
		await assert.rejects(login.begin({ server: "s", state: flow.state, onCallback: async () => {} }), /already in use/);
		await assertCompletes(flow);
	});
});

describe("paste fallback", { timeout: 60_000 }, () => {
	test("completes the flow from the redirected URL with the same checks", async () => {
		const login = service();
		const flow = await begin(login);
		const url = (params: Record<string, string>, base = flow.uri.href) => `${base}?${new URLSearchParams(params)}`;
		const rejects = async (text: string, pattern: RegExp, server?: string) => {
			const error = await login.completeFromUrl(text, server).then(
				() => undefined,
				(e: unknown) => e,
			);
			assert.ok(error instanceof CallbackRejected, `expected rejection for ${text.slice(0, 80)}`);
			assert.match(error.message, pattern);
			assert.equal(error.message.includes(flow.state), false);
			assert.equal(flow.calls.length, 0);
		};
		await rejects("not a url", /not a URL/);
		await rejects(url({ state: flow.state, code: "x", pad: "p".repeat(5000) }), /longer than/);
		await rejects(url({ state: newState(), code: "x" }), /matches no pending sign-in/);
		await rejects(url({ code: "x" }), /no state/);
		await rejects(
			url({ state: flow.state, code: "x" }, flow.uri.href.replace("/callback", "/other")),
			/not the redirect address/,
		);
		await rejects(
			url({ state: flow.state, code: "x" }, flow.uri.href.replace("127.0.0.1", "localhost")),
			/not the redirect address/,
		);
		await rejects(url({ state: flow.state, code: "x" }), /another server/, "other");
		await rejects(url({ state: flow.state }), /neither a single code nor an error/);
		assert.equal(
			await login.completeFromUrl(`  ${url({ state: flow.state, code: "pasted", iss: "http://127.0.0.1:1" })}\n`, "srv"),
			"completed",
		);
		assert.equal(flow.calls[0]?.get("code"), "pasted");
		await assert.rejects(login.completeFromUrl(url({ state: flow.state, code: "again" })), CallbackRejected);
		assert.equal(flow.calls.length, 1);
	});

	test("an expired flow cannot be pasted; an AS error is reported as failed", async () => {
		const clock = { now: 0 };
		const login = service(clock);
		const stale = await begin(login);
		clock.now += FLOW_TTL_MS + 1;
		await assert.rejects(login.completeFromUrl(`${stale.uri.href}?state=${stale.state}&code=x`), /expired/);
		const denied = await begin(login);
		assert.equal(await login.completeFromUrl(`${denied.uri.href}?state=${denied.state}&error=access_denied`), "failed");
		assert.equal(denied.calls.length, 1);
	});
});
