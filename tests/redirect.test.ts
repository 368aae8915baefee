/**
 * Redirects of MCP requests (#39, item 13): a server on 127.0.0.1 answers every request with 307 to another
 * port, which records what reaches it. No request follows it there, so no bearer token, DPoP proof or
 * configured header leaves for another origin; the connection fails naming the server and the new location.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { newDpopKey } from "../src/auth/dpop.ts";
import { memoryStore } from "../src/auth/keyring.ts";
import { recordAccount, serializeRecord } from "../src/auth/record.ts";
import { createAuth } from "../src/auth.ts";
import { loadConfig } from "../src/config.ts";
import { createLoginService } from "../src/login/receiver.ts";
import { createRuntime } from "../src/runtime.ts";
import { startHttpFixture } from "./helpers/servers.ts";

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
	for (const cleanup of cleanups.reverse()) await cleanup();
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; origin: string }> {
	const server = createServer(handler);
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	cleanups.push(() => new Promise((resolve) => server.close(resolve)));
	return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe("redirects of MCP requests", () => {
	test("a 307 to another origin is not followed: no credential, proof or header arrives there; the error names server and location", async () => {
		const arrived: IncomingHttpHeaders[] = [];
		const elsewhere = await listen((request, response) => {
			arrived.push(request.headers);
			response.writeHead(404).end();
		});
		const sent: IncomingHttpHeaders[] = [];
		const redirecting = await listen((request, response) => {
			sent.push(request.headers);
			request.resume();
			response.writeHead(307, { location: `${elsewhere.origin}/mcp?token=leak#frag` }).end();
		});
		const dir = await mkdtemp(join(tmpdir(), "pi-mcp-redirect-"));
		cleanups.push(() => rm(dir, { recursive: true, force: true }));
		const url = `${redirecting.origin}/mcp`;
		const servers = {
			bearer: { url, bearerTokenEnv: "TOKEN" },
			dpop: { url: `${url}?dpop`, oauth: {} },
			keyed: { url: `${url}?keyed`, headers: { "X-Api-Key": "${API_KEY}" } },
		};
		await writeFile(join(dir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
		const env = { ...process.env, TOKEN: "bearer-secret-1234", API_KEY: "header-secret-5678" };
		const config = await loadConfig({ agentDir: dir, cwd: dir, trusted: false, env });
		const dpop = config.servers.find((entry) => entry.name === "dpop")?.config;
		assert.ok(dpop);
		// A stored sign-in whose tokens are bound to a key: every request carries a DPoP proof.
		const now = Date.now();
		const record = {
			version: 2 as const,
			tokens: { access_token: "dpop-secret-9012", token_type: "DPoP" },
			dpop: newDpopKey("ES256"),
			issuedAt: now,
			expiresAt: now + 3_600_000,
			updatedAt: now,
		};
		const store = memoryStore({ [recordAccount(dpop)]: serializeRecord(record) });
		const login = createLoginService({});
		const auth = createAuth({ env, store, login, notify: () => undefined, lockDir: join(dir, "locks") });
		const runtime = createRuntime({ servers: config.servers, env, clientInfo: { name: "t", version: "0" }, auth });
		cleanups.push(async () => {
			await runtime.dispose();
			auth.dispose();
			await login.dispose();
		});

		for (const name of ["bearer", "dpop", "keyed"]) {
			await assert.rejects(runtime.tools(name), (error: Error) => {
				assert.match(error.message, new RegExp(`^MCP server "${name}" failed to start: `));
				assert.ok(error.message.includes(`Redirect to ${elsewhere.origin}/mcp not followed`), error.message);
				assert.doesNotMatch(error.message, /leak|frag|secret/);
				return true;
			});
		}
		// Each credential went to the server it belongs to.
		const carried = (test: (headers: IncomingHttpHeaders) => boolean) => sent.some(test);
		assert.ok(carried((headers) => headers.authorization === "Bearer bearer-secret-1234"));
		assert.ok(carried((headers) => headers.authorization === "DPoP dpop-secret-9012" && typeof headers.dpop === "string"));
		assert.ok(carried((headers) => headers["x-api-key"] === "header-secret-5678"));
		assert.deepEqual(arrived, [], "nothing reached the other origin");
	});

	test("a redirect within the origin is still followed (each hop with its own request), and the server works", async () => {
		const upstream = await startHttpFixture();
		cleanups.push(() => upstream.stop());
		const hops: string[] = [];
		// In front of the fixture: /old answers 307 to /mcp on the same origin, which is passed to the fixture.
		const front = await listen(async (request, response) => {
			hops.push(`${request.method} ${request.url} ${request.headers.authorization ?? "-"}`);
			if (request.url?.startsWith("/old")) {
				request.resume();
				response.writeHead(307, { location: "/mcp" }).end();
				return;
			}
			const body = Buffer.concat(await request.toArray());
			const headers = Object.entries(request.headers).filter(
				(entry): entry is [string, string] =>
					typeof entry[1] === "string" && !["host", "connection", "content-length"].includes(entry[0]),
			);
			const answer = await fetch(upstream.url, { method: request.method, headers, body: body.length > 0 ? body : undefined });
			const kept = [...answer.headers].filter(
				([key]) => !["content-encoding", "content-length", "transfer-encoding"].includes(key),
			);
			response.writeHead(answer.status, Object.fromEntries(kept));
			for await (const chunk of answer.body ?? []) response.write(chunk);
			response.end();
		});
		cleanups.push(async () => front.server.closeAllConnections());
		const dir = await mkdtemp(join(tmpdir(), "pi-mcp-redirect-"));
		cleanups.push(() => rm(dir, { recursive: true, force: true }));
		const servers = { moved: { url: `${front.origin}/old`, bearerTokenEnv: "TOKEN", protocolVersion: "legacy" } };
		await writeFile(join(dir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
		const env = { ...process.env, TOKEN: "same-origin-token" };
		const config = await loadConfig({ agentDir: dir, cwd: dir, trusted: false, env });
		const login = createLoginService({});
		const auth = createAuth({ env, store: memoryStore(), login, notify: () => undefined, lockDir: join(dir, "locks") });
		const runtime = createRuntime({ servers: config.servers, env, clientInfo: { name: "t", version: "0" }, auth });
		cleanups.push(async () => {
			await runtime.dispose();
			auth.dispose();
			await login.dispose();
		});
		const result = await runtime.call("moved", "echo", { text: "moved" });
		assert.equal((result.content[0] as { text?: string }).text, "[legacy] moved");
		assert.ok(hops.includes("POST /old Bearer same-origin-token"), hops.join("\n"));
		assert.ok(hops.includes("POST /mcp Bearer same-origin-token"), "the hop within the origin keeps the credentials");
	});
});
