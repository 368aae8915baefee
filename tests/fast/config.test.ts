// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in plain strings is the mcp.json syntax under test.
/**
 * Configuration loading (src/config.ts + src/schema.ts): sources and precedence, trust gating,
 * per-entry validation with named errors, `${VAR}` interpolation, URL rules, paths and limits.
 * Every test works in its own temporary agentDir, cwd and home, and removes them afterwards.
 */
import assert from "node:assert/strict";
import { symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { loadConfig, MAX_FILE_BYTES, MAX_SERVERS } from "../../src/config.ts";
import {
	broken,
	entryOf,
	expectBad,
	expectOk,
	GOOD,
	load,
	usable,
	withDirs,
	writeProject,
	writeText,
	writeUser,
} from "../helpers/config.ts";

describe("sources and precedence", () => {
	it("reads the user file and reports both files", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, { one: { command: "one", args: ["a"], env: { K: "v" }, description: "first" } });
			const snapshot = await load(dirs);
			const one = usable(snapshot, "one");
			assert.equal(one.transport, "stdio");
			assert.equal(one.command, "one");
			assert.deepEqual(one.args, ["a"]);
			assert.deepEqual(one.env, { K: "v" });
			assert.equal(one.description, "first");
			assert.equal(one.enabled, true);
			assert.equal(one.protocolVersion, "auto");
			assert.equal(one.requestTimeoutMs, 60_000);
			assert.deepEqual(one.source, { kind: "user", path: dirs.userPath });
			assert.deepEqual(snapshot.files, [
				{ scope: "user", path: dirs.userPath, state: "loaded" },
				{ scope: "project", path: dirs.projectPath, state: "missing" },
			]);
		});
	});

	it("reports a missing user file as missing and loads nothing", async () => {
		await withDirs(async (dirs) => {
			const snapshot = await load(dirs);
			assert.deepEqual(snapshot.servers, []);
			assert.deepEqual(snapshot.files[0], { scope: "user", path: dirs.userPath, state: "missing" });
		});
	});

	it("a file without mcpServers loads with no servers", async () => {
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, JSON.stringify({ other: true }));
			const snapshot = await load(dirs);
			assert.deepEqual(snapshot.servers, []);
			assert.equal(snapshot.files[0]?.state, "loaded");
		});
	});

	it("a project entry replaces the user entry of the same name entirely", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, {
				shared: { command: "user-cmd", args: ["--user"], env: { FROM: "user" }, description: "user", timeout: 5 },
				userOnly: { command: "u" },
			});
			await writeProject(dirs, { shared: { url: "https://project.example/mcp" }, projectOnly: { command: "p" } });
			const snapshot = await load(dirs);
			const shared = usable(snapshot, "shared");
			assert.equal(shared.transport, "http");
			assert.equal(shared.url, "https://project.example/mcp");
			assert.equal(shared.command, undefined);
			assert.deepEqual(shared.args, []);
			assert.deepEqual(shared.env, {});
			assert.equal(shared.description, undefined);
			assert.equal(shared.requestTimeoutMs, 60_000);
			assert.deepEqual(shared.source, { kind: "project", path: dirs.projectPath });
			assert.equal(usable(snapshot, "userOnly").command, "u");
			assert.deepEqual(usable(snapshot, "projectOnly").source, { kind: "project", path: dirs.projectPath });
			assert.equal(snapshot.servers.filter((server) => server.name === "shared").length, 1);
			assert.equal(snapshot.files[1]?.state, "loaded");
		});
	});

	it("a project override flips only enabled and keeps the rest of the user entry", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, {
				svc: { command: "svc", args: ["--x"], env: { A: "1" }, description: "kept", requestTimeoutMs: 1234 },
				off: { command: "off", disabled: true },
			});
			await writeProject(dirs, { svc: { enabled: false, exposure: "direct" }, off: { disabled: false } });
			const snapshot = await load(dirs);
			const svc = entryOf(snapshot, "svc");
			assert.equal(svc.error, undefined);
			assert.equal(svc.enabled, false);
			assert.equal(svc.config?.enabled, false);
			assert.equal(svc.config?.command, "svc");
			assert.deepEqual(svc.config?.args, ["--x"]);
			assert.deepEqual(svc.config?.env, { A: "1" });
			assert.equal(svc.config?.description, "kept");
			assert.equal(svc.config?.requestTimeoutMs, 1234);
			assert.deepEqual(svc.source, { kind: "user", path: dirs.userPath });
			assert.deepEqual(svc.ignoredKeys, ["exposure"]);
			const off = entryOf(snapshot, "off");
			assert.equal(off.error, undefined);
			assert.equal(off.enabled, true);
			assert.equal(off.config?.command, "off");
		});
	});

	it("a project override with no user entry is an error naming the project file", async () => {
		await expectBad({ enabled: true }, "only sets enabled/disabled, but no user entry of that name exists", { scope: "project" });
	});

	it("an override in the user file is not an override: the entry lacks command/url", async () => {
		await expectBad({ enabled: false }, 'set "command" (stdio) or "url" (HTTP)');
	});
});

describe("trust gating", () => {
	it("untrusted: the project file is not read and is reported as untrusted", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, { shared: { command: "user-cmd" } });
			await writeProject(dirs, { shared: { command: "project-cmd" }, projectOnly: { command: "p" }, off: { enabled: false } });
			const snapshot = await load(dirs, { trusted: false });
			assert.equal(usable(snapshot, "shared").command, "user-cmd");
			assert.equal(
				snapshot.servers.find((server) => server.name === "projectOnly"),
				undefined,
			);
			assert.deepEqual(
				snapshot.servers.map((server) => server.name),
				["shared"],
			);
			assert.deepEqual(snapshot.files[1], { scope: "project", path: dirs.projectPath, state: "untrusted" });
		});
	});

	it("untrusted: an invalid project file is not even parsed", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, { good: GOOD });
			await writeText(dirs.projectPath, "{ not json");
			const snapshot = await load(dirs, { trusted: false });
			usable(snapshot, "good");
			assert.deepEqual(snapshot.files[1], { scope: "project", path: dirs.projectPath, state: "untrusted" });
		});
	});

	it("untrusted without a project file: reported as missing", async () => {
		await withDirs(async (dirs) => {
			const snapshot = await load(dirs, { trusted: false });
			assert.deepEqual(snapshot.files[1], { scope: "project", path: dirs.projectPath, state: "missing" });
		});
	});

	it("trusted: the project file is read", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, { shared: { command: "user-cmd" } });
			await writeProject(dirs, { shared: { command: "project-cmd" }, projectOnly: { command: "p" } });
			const snapshot = await load(dirs, { trusted: true });
			assert.equal(usable(snapshot, "shared").command, "project-cmd");
			assert.equal(usable(snapshot, "projectOnly").command, "p");
			assert.deepEqual(snapshot.files[1], { scope: "project", path: dirs.projectPath, state: "loaded" });
		});
	});
});

describe("entry fields", () => {
	it("an unknown field is a named error; other servers still work", async () => {
		await expectBad({ command: "x", foo: 1 }, 'field "foo" is not supported');
	});

	it("an unknown field in a project entry names the project file", async () => {
		await expectBad({ url: "https://e.example/mcp", bogus: true }, 'field "bogus" is not supported', { scope: "project" });
	});

	it("Pi-only exposure and toolExposure are accepted and reported as ignored", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, { pi: { command: "x", exposure: "direct", toolExposure: { a: "b" } }, good: GOOD });
			const snapshot = await load(dirs);
			const entry = entryOf(snapshot, "pi");
			assert.equal(entry.error, undefined);
			assert.ok(entry.config);
			assert.deepEqual(entry.ignoredKeys, ["exposure", "toolExposure"]);
			assert.deepEqual(entry.config.ignoredKeys, ["exposure", "toolExposure"]);
			assert.deepEqual(usable(snapshot, "good").ignoredKeys, []);
		});
	});

	it('type "sse" is refused with a pointer to the Streamable HTTP endpoint', async () => {
		await expectBad(
			{ type: "sse", url: "https://e.example/sse" },
			'type "sse" (the deprecated HTTP+SSE transport) is not supported; point "url" at the server\'s Streamable HTTP endpoint (often ending in /mcp rather than /sse) and use "type": "http"',
		);
	});

	it("an unknown type is refused", async () => {
		await expectBad(
			{ type: "websocket", url: "https://e.example/" },
			'field "type" must be "stdio", "http" or "streamable-http"',
		);
	});

	it("infers stdio from command and HTTP from url; accepts stdio, http and streamable-http", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, {
				inferredStdio: { command: "x" },
				inferredHttp: { url: "https://e.example/mcp" },
				explicitStdio: { type: "stdio", command: "x" },
				explicitHttp: { type: "http", url: "https://e.example/mcp" },
				streamable: { type: "streamable-http", url: "https://e.example/mcp" },
			});
			const snapshot = await load(dirs);
			assert.equal(usable(snapshot, "inferredStdio").transport, "stdio");
			assert.equal(usable(snapshot, "inferredHttp").transport, "http");
			assert.equal(usable(snapshot, "explicitStdio").transport, "stdio");
			assert.equal(usable(snapshot, "explicitHttp").transport, "http");
			assert.equal(usable(snapshot, "streamable").transport, "http");
		});
	});

	it("neither command nor url is an error", async () => {
		await expectBad({ description: "nothing" }, 'set "command" (stdio) or "url" (HTTP)');
	});

	it('type "stdio" without command is an error', async () => {
		await expectBad({ type: "stdio" }, 'field "command" is required for a stdio server');
	});

	it('type "http" without url is an error', async () => {
		await expectBad({ type: "http" }, 'field "url" is required for an HTTP server');
	});

	it("command and url together is an error", async () => {
		await expectBad({ command: "x", url: "https://e.example/mcp" }, 'set either "command" (stdio) or "url" (HTTP), not both');
	});

	it("HTTP fields on a stdio server are errors", async () => {
		await expectBad({ command: "x", headers: { A: "b" } }, 'field "headers" applies only to HTTP servers');
		await expectBad({ command: "x", bearerTokenEnv: "TOKEN" }, 'field "bearerTokenEnv" applies only to HTTP servers');
		await expectBad({ command: "x", auth: "oauth" }, 'field "auth" applies only to HTTP servers');
	});

	it("stdio fields on an HTTP server are errors", async () => {
		await expectBad({ url: "https://e.example/mcp", env: { A: "b" } }, 'field "env" applies only to stdio servers');
		await expectBad({ url: "https://e.example/mcp", cwd: "sub" }, 'field "cwd" applies only to stdio servers');
		await expectBad({ url: "https://e.example/mcp", args: ["x"] }, 'field "args" applies only to stdio servers');
	});

	it("wrongly typed fields are named", async () => {
		await expectBad({ command: "x", args: "--flag" }, 'field "args" must be an array of strings');
		await expectBad({ command: "x", env: { A: 1 } }, 'field "env.A" must be a string');
		await expectBad({ command: "" }, 'field "command" must be a non-empty string');
		await expectBad({ command: "x", description: 5 }, 'field "description" must be a non-empty string');
	});

	it("enabled/disabled: defaults, values and contradictions", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, {
				dflt: { command: "x" },
				enabledFalse: { command: "x", enabled: false },
				disabledTrue: { command: "x", disabled: true },
				agree: { command: "x", enabled: true, disabled: false },
			});
			const snapshot = await load(dirs);
			assert.equal(entryOf(snapshot, "dflt").enabled, true);
			assert.equal(entryOf(snapshot, "enabledFalse").enabled, false);
			assert.equal(usable(snapshot, "enabledFalse").enabled, false);
			assert.equal(entryOf(snapshot, "disabledTrue").enabled, false);
			assert.equal(entryOf(snapshot, "agree").enabled, true);
		});
		await expectBad({ command: "x", enabled: true, disabled: true }, 'fields "enabled" and "disabled" contradict each other');
		await expectBad({ command: "x", enabled: "yes" }, 'field "enabled" must be true or false');
	});

	it("protocolVersion: auto by default, legacy and 2026-07-28 accepted, anything else refused", async () => {
		assert.equal((await expectOk({ command: "x" })).protocolVersion, "auto");
		assert.equal((await expectOk({ command: "x", protocolVersion: "legacy" })).protocolVersion, "legacy");
		assert.equal((await expectOk({ command: "x", protocolVersion: "2026-07-28" })).protocolVersion, "2026-07-28");
		await expectBad(
			{ command: "x", protocolVersion: "2025-06-18" },
			'field "protocolVersion" must be one of "auto", "legacy", "2026-07-28"',
		);
	});

	it("a top-level hint key (callbackPort) gets a hint", async () => {
		await expectBad(
			{ url: "https://e.example/mcp", callbackPort: 8976 },
			'field "callbackPort" is not supported; use "redirectUri", e.g. "http://127.0.0.1:8976/callback"',
		);
	});
});

describe("timeouts", () => {
	it("timeout in seconds becomes requestTimeoutMs; requestTimeoutMs is kept; default is 60 s", async () => {
		assert.equal((await expectOk({ command: "x", timeout: 30 })).requestTimeoutMs, 30_000);
		assert.equal((await expectOk({ command: "x", timeout: 1.5 })).requestTimeoutMs, 1500);
		assert.equal((await expectOk({ command: "x", timeout: 3600 })).requestTimeoutMs, 3_600_000);
		assert.equal((await expectOk({ command: "x", requestTimeoutMs: 2500 })).requestTimeoutMs, 2500);
		assert.equal((await expectOk({ command: "x" })).requestTimeoutMs, 60_000);
	});

	it("timeout and requestTimeoutMs together is an error", async () => {
		await expectBad(
			{ command: "x", timeout: 10, requestTimeoutMs: 10_000 },
			'set either "timeout" (seconds) or "requestTimeoutMs", not both',
		);
	});

	it("out-of-range or mistyped timeouts are errors", async () => {
		const seconds = 'field "timeout" must be a number of seconds between 0.001 and 3600';
		await expectBad({ command: "x", timeout: 0 }, seconds);
		await expectBad({ command: "x", timeout: -1 }, seconds);
		await expectBad({ command: "x", timeout: 3601 }, seconds);
		await expectBad({ command: "x", timeout: "30" }, seconds);
		await expectBad({ command: "x", requestTimeoutMs: 1.5 }, 'field "requestTimeoutMs" must be a positive integer');
		await expectBad({ command: "x", requestTimeoutMs: 0 }, 'field "requestTimeoutMs" must be a positive integer');
		await expectBad({ command: "x", requestTimeoutMs: 3_600_001 }, 'field "requestTimeoutMs" must be at most 3600000 (one hour)');
	});

	it("a tiny positive timeout never becomes a 0 ms request timeout", async () => {
		// timeout 0.0001 s passes the "> 0" check but Math.round(0.1) gives requestTimeoutMs 0.
		// Correct behaviour: either refuse the value or keep a positive timeout.
		await withDirs(async (dirs) => {
			await writeUser(dirs, { tiny: { command: "x", timeout: 0.0001 }, good: GOOD });
			const snapshot = await load(dirs);
			const tiny = entryOf(snapshot, "tiny");
			if (tiny.error === undefined) {
				assert.ok(tiny.config);
				assert.ok(tiny.config.requestTimeoutMs > 0, `requestTimeoutMs is ${tiny.config.requestTimeoutMs}`);
			} else {
				assert.match(tiny.error, /field "timeout"/);
			}
			usable(snapshot, "good");
		});
	});
});

describe("oauth", () => {
	const url = "https://e.example/mcp";
	const issuer = "https://issuer.example";

	it("oauth without auth infers oauth with authorization_code by default", async () => {
		const config = await expectOk({ url, oauth: { scope: "read" } });
		assert.equal(config.auth, "oauth");
		assert.deepEqual(
			{ grantType: config.oauth?.grantType, scope: config.oauth?.scope },
			{ grantType: "authorization_code", scope: "read" },
		);
		const bare = await expectOk({ url, auth: "oauth" });
		assert.equal(bare.auth, "oauth");
		assert.equal(bare.oauth?.grantType, "authorization_code");
	});

	it("a complete client_credentials entry is accepted", async () => {
		const config = await expectOk({
			url,
			auth: "oauth",
			oauth: { grantType: "client_credentials", clientId: "cid", clientSecretEnv: "CLIENT_SECRET", issuer, scope: "s" },
		});
		assert.equal(config.oauth?.grantType, "client_credentials");
		assert.equal(config.oauth?.clientId, "cid");
		assert.equal(config.oauth?.clientSecretEnv, "CLIENT_SECRET");
		assert.equal(config.oauth?.issuer, issuer);
	});

	it("client_credentials requires clientId, clientSecretEnv and issuer", async () => {
		const full = { grantType: "client_credentials", clientId: "cid", clientSecretEnv: "CLIENT_SECRET", issuer };
		for (const missing of ["clientId", "clientSecretEnv", "issuer"] as const) {
			const oauth: Record<string, string> = { ...full };
			delete oauth[missing];
			await expectBad({ url, oauth }, `field "oauth.${missing}" is required for grantType "client_credentials"`);
		}
	});

	it("client_credentials refuses redirectUri", async () => {
		await expectBad(
			{
				url,
				oauth: {
					grantType: "client_credentials",
					clientId: "cid",
					clientSecretEnv: "S",
					issuer,
					redirectUri: "http://127.0.0.1:1/callback",
				},
			},
			'field "oauth.redirectUri" does not apply to "client_credentials"',
		);
	});

	it("a pre-registered clientId requires issuer", async () => {
		await expectBad(
			{ url, oauth: { clientId: "cid" } },
			'field "oauth.issuer" is required with a pre-registered "oauth.clientId"',
		);
		const config = await expectOk({ url, oauth: { clientId: "cid", issuer } });
		assert.equal(config.oauth?.clientId, "cid");
	});

	it("a clientSecret key is refused with a hint to use clientSecretEnv", async () => {
		await expectBad(
			{ url, oauth: { clientId: "cid", issuer, clientSecret: "s3cr3t" } },
			'field "oauth.clientSecret" is not supported; put the secret in an environment variable and name it in "clientSecretEnv"',
		);
	});

	it("other oauth shape errors are named", async () => {
		await expectBad(
			{ url, oauth: { grantType: "password" } },
			'field "oauth.grantType" must be "authorization_code" or "client_credentials"',
		);
		await expectBad({ url, oauth: { audience: "x" } }, 'field "oauth.audience" is not supported');
		await expectBad({ url, oauth: "yes" }, 'field "oauth" must be an object');
		await expectBad(
			{ url, oauth: { clientId: "cid", issuer, clientSecretEnv: "not a name!" } },
			'field "oauth.clientSecretEnv" must name an environment variable (letters, digits, _), not hold a value',
		);
	});

	it("oauth URLs are checked: issuer must be https (or loopback http), redirectUri loopback http", async () => {
		await expectBad(
			{ url, oauth: { clientId: "cid", issuer: "http://issuer.example" } },
			'field "oauth.issuer" uses http: to a non-loopback host; use https: (http: is allowed only for 127.0.0.1, [::1] and localhost)',
		);
		await expectBad(
			{ url, oauth: { redirectUri: "https://app.example/callback" } },
			'field "oauth.redirectUri" must be an http: loopback URL (e.g. http://127.0.0.1:8976/callback)',
		);
		const config = await expectOk({ url, oauth: { redirectUri: "http://127.0.0.1:8976/callback" } });
		assert.equal(config.oauth?.redirectUri, "http://127.0.0.1:8976/callback");
	});
});

describe("bearer", () => {
	const url = "https://e.example/mcp";

	it("bearerTokenEnv alone infers bearer; auth bearer with bearerTokenEnv is accepted", async () => {
		const inferred = await expectOk({ url, bearerTokenEnv: "API_TOKEN" });
		assert.equal(inferred.auth, "bearer");
		assert.equal(inferred.bearerTokenEnv, "API_TOKEN");
		assert.equal(inferred.oauth, undefined);
		const explicit = await expectOk({ url, auth: "bearer", bearerTokenEnv: "API_TOKEN" });
		assert.equal(explicit.auth, "bearer");
		assert.equal(explicit.bearerTokenEnv, "API_TOKEN");
	});

	it('auth "bearer" requires bearerTokenEnv', async () => {
		await expectBad({ url, auth: "bearer" }, 'field "bearerTokenEnv" is required for auth "bearer"');
	});

	it("bearerTokenEnv must name a variable, not hold the token", async () => {
		await expectBad(
			{ url, bearerTokenEnv: "sk-live-abc123" },
			'field "bearerTokenEnv" must name an environment variable (letters, digits, _), not hold a value',
		);
	});

	it("bearer and oauth settings do not mix", async () => {
		await expectBad({ url, auth: "bearer", bearerTokenEnv: "T", oauth: {} }, 'field "oauth" does not apply to auth "bearer"');
		await expectBad({ url, auth: "oauth", bearerTokenEnv: "T" }, 'field "bearerTokenEnv" does not apply to auth "oauth"');
	});

	it("bearerTokenEnv and oauth together without auth is an error, not a silent drop of oauth", async () => {
		const entry = await expectBad(
			{ url, bearerTokenEnv: "T", oauth: { scope: "read" } },
			'fields "bearerTokenEnv" and "oauth" exclude each other; set "auth" to "bearer" or "oauth"',
		);
		assert.ok(entry.error);
	});

	it("invalid auth values are refused", async () => {
		await expectBad({ url, auth: "basic" }, 'field "auth" must be "oauth" or "bearer"');
		await expectBad(
			{ url, auth: { provider: "x" } },
			'field "auth" must be "oauth" or "bearer" (Pi\'s auth.provider form is not supported)',
		);
	});
});

describe("${VAR} interpolation", () => {
	it("expands variables in url, args, env and headers; the values used in env and headers are secrets (issue 48)", async () => {
		const env = { HOST: "api.example", TOKEN: "tok-123456", ARG: "arg-value", KEY: "key-value" };
		await withDirs(async (dirs) => {
			await writeUser(dirs, {
				web: { url: "https://${HOST}/mcp", headers: { Authorization: "Bearer ${TOKEN}", Plain: "plain" } },
				local: { command: "x", args: ["--flag=${ARG}", "literal"], env: { API_KEY: "${KEY}", MIXED: "a-${ARG}-b" } },
			});
			const snapshot = await load(dirs, { env });
			const web = usable(snapshot, "web");
			assert.equal(web.url, "https://api.example/mcp");
			assert.deepEqual(web.headers, { Authorization: "Bearer tok-123456", Plain: "plain" });
			assert.ok(!web.secretValues.includes("api.example"), "a host is not a secret");
			assert.ok(web.secretValues.includes("tok-123456"));
			const local = usable(snapshot, "local");
			assert.deepEqual(local.args, ["--flag=arg-value", "literal"]);
			assert.deepEqual(local.env, { API_KEY: "key-value", MIXED: "a-arg-value-b" });
			assert.ok(local.secretValues.includes("key-value"));
			assert.ok(local.secretValues.includes("arg-value"), "ARG is used in env (MIXED) too");
			assert.ok(!local.secretValues.includes("tok-123456"));
		});
	});

	it("a missing variable in env fails that server closed, naming the variable", async () => {
		await expectBad(
			{ command: "x", env: { API_KEY: "${MISSING_KEY}" } },
			'environment variable MISSING_KEY is not set (used in "env.API_KEY")',
			{ env: { OTHER: "1" } },
		);
	});

	it("a missing variable in url, args or headers fails closed too", async () => {
		await expectBad({ url: "https://${NO_HOST}/mcp" }, 'environment variable NO_HOST is not set (used in "url")');
		await expectBad({ command: "x", args: ["a", "${NO_ARG}"] }, 'environment variable NO_ARG is not set (used in "args[1]")');
		await expectBad(
			{ url: "https://e.example/mcp", headers: { "X-Key": "${NO_HEADER}" } },
			'environment variable NO_HEADER is not set (used in "headers.X-Key")',
		);
	});

	it('a "!" value in env or headers (shell-evaluated secret) is refused', async () => {
		await expectBad(
			{ command: "x", env: { TOKEN: "!op read op://vault/token" } },
			'field "env.TOKEN" starts with "!" (a shell command): pi-mcp never runs commands to obtain values; use ${VAR} with a variable set in the environment instead',
		);
		await expectBad(
			{ url: "https://e.example/mcp", headers: { Authorization: "!security find-generic-password -w" } },
			'field "headers.Authorization" starts with "!" (a shell command): pi-mcp never runs commands to obtain values; use ${VAR} with a variable set in the environment instead',
		);
	});
});

describe("URL rules", () => {
	const nonLoopback =
		'field "url" uses http: to a non-loopback host; use https: (http: is allowed only for 127.0.0.1, [::1] and localhost)';

	it("https is accepted", async () => {
		assert.equal((await expectOk({ url: "https://mcp.example.com/mcp" })).url, "https://mcp.example.com/mcp");
		assert.equal((await expectOk({ url: "https://mcp.example.com:8443/a?b=c" })).url, "https://mcp.example.com:8443/a?b=c");
	});

	it("http to loopback is accepted: 127.0.0.1, 127.1.2.3, [::1], localhost", async () => {
		assert.equal((await expectOk({ url: "http://127.0.0.1:3000/mcp" })).url, "http://127.0.0.1:3000/mcp");
		assert.equal((await expectOk({ url: "http://127.1.2.3/mcp" })).url, "http://127.1.2.3/mcp");
		assert.equal((await expectOk({ url: "http://[::1]:8080/mcp" })).url, "http://[::1]:8080/mcp");
		assert.equal((await expectOk({ url: "http://localhost:8080/mcp" })).url, "http://localhost:8080/mcp");
	});

	it("http to a non-loopback host is refused", async () => {
		await expectBad({ url: "http://mcp.example.com/mcp" }, nonLoopback);
		await expectBad({ url: "http://10.0.0.1/mcp" }, nonLoopback);
		await expectBad({ url: "http://localhost.evil.example/mcp" }, nonLoopback);
		await expectBad({ url: "http://[::2]/mcp" }, nonLoopback);
	});

	it("userinfo in the URL is refused", async () => {
		const message = 'field "url" must not contain credentials (user:password@); use headers or auth instead';
		await expectBad({ url: "https://user:secret@mcp.example.com/mcp" }, message);
		await expectBad({ url: "https://user@mcp.example.com/mcp" }, message);
		await expectBad({ url: "http://user:pw@127.0.0.1/mcp" }, message);
	});

	it("other schemes and invalid URLs are refused", async () => {
		await expectBad({ url: "ftp://mcp.example.com/" }, 'field "url" must be an https: URL (or http: to loopback)');
		await expectBad({ url: "not a url" }, 'field "url" is not a valid URL');
	});
});

describe("paths", () => {
	it("expands ~/ in cwd, command and args", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, {
				tilde: { command: "~/bin/server", args: ["~/data", "plain", "x~/y"], cwd: "~/work" },
				bare: { command: "x", cwd: "~" },
			});
			const snapshot = await load(dirs);
			const tilde = usable(snapshot, "tilde");
			assert.equal(tilde.command, join(dirs.home, "bin", "server"));
			assert.deepEqual(tilde.args, [join(dirs.home, "data"), "plain", "x~/y"]);
			assert.equal(tilde.cwd, join(dirs.home, "work"));
			assert.equal(usable(snapshot, "bare").cwd, dirs.home);
		});
	});

	it("resolves a relative cwd against the session cwd and keeps an absolute one", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, {
				rel: { command: "x", cwd: "tools/server" },
				up: { command: "x", cwd: "../sibling" },
				abs: { command: "x", cwd: dirs.home },
				none: { command: "x" },
			});
			const snapshot = await load(dirs);
			assert.equal(usable(snapshot, "rel").cwd, join(dirs.cwd, "tools", "server"));
			assert.equal(usable(snapshot, "up").cwd, join(dirs.cwd, "..", "sibling"));
			assert.equal(usable(snapshot, "abs").cwd, dirs.home);
			assert.equal(usable(snapshot, "none").cwd, undefined);
		});
	});

	it("a relative session cwd is rejected", async () => {
		await assert.rejects(loadConfig({ agentDir: "/nonexistent", cwd: "relative/dir", trusted: false, env: {} }), {
			message: "cwd must be absolute: relative/dir",
		});
	});
});

describe("limits", () => {
	// Files: tests/config-files.test.ts ("at most 64 servers per file").
	it("more than 64 servers registered by extensions: the extra ones are ignored with an error; file servers are unaffected", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, { good: GOOD });
			const extensionServers = Array.from({ length: MAX_SERVERS + 1 }, (_, i) => ({
				name: `e${i}`,
				config: { command: "e" },
				extensionPath: "/ext/many.ts",
			}));
			const snapshot = await load(dirs, { extensionServers });
			usable(snapshot, "good");
			usable(snapshot, "e63");
			broken(
				snapshot,
				"e64",
				'server "e64" (registered by extension /ext/many.ts): more than 64 servers are registered by extensions; this one is ignored',
			);
		});
	});

	it("a file over 1 MiB is refused; the other file still works", async () => {
		await withDirs(async (dirs) => {
			const body = JSON.stringify({ mcpServers: { big: { command: "x" } } });
			const text = body + " ".repeat(MAX_FILE_BYTES + 1 - body.length);
			await writeText(dirs.userPath, text);
			await writeProject(dirs, { good: GOOD });
			const snapshot = await load(dirs);
			assert.equal(MAX_FILE_BYTES, 1_048_576);
			assert.deepEqual(snapshot.files[0], {
				scope: "user",
				path: dirs.userPath,
				state: "error",
				error: `${dirs.userPath}: file is 1048577 bytes; the limit is 1048576 (1 MiB)`,
			});
			assert.equal(
				snapshot.servers.find((server) => server.name === "big"),
				undefined,
			);
			usable(snapshot, "good");
		});
	});

	it("a file of exactly 1 MiB is accepted", async () => {
		await withDirs(async (dirs) => {
			const body = JSON.stringify({ mcpServers: { big: { command: "x" } } });
			await writeText(dirs.userPath, body + " ".repeat(MAX_FILE_BYTES - body.length));
			const snapshot = await load(dirs);
			assert.equal(snapshot.files[0]?.state, "loaded");
			usable(snapshot, "big");
		});
	});
});

describe("invalid files", () => {
	it("a file that cannot be read is a named error, not a failed session start; the other file still works", {
		skip: process.platform !== "linux" && "needs /proc",
	}, async () => {
		await withDirs(async (dirs) => {
			// A regular file (per stat) whose read fails with EIO, even for root: /proc/self/mem.
			await symlink("/proc/self/mem", dirs.userPath);
			await writeProject(dirs, { good: GOOD });
			const snapshot = await load(dirs);
			assert.deepEqual(snapshot.files[0], {
				scope: "user",
				path: dirs.userPath,
				state: "error",
				error: `${dirs.userPath}: cannot read (EIO)`,
			});
			usable(snapshot, "good");
		});
	});

	it("invalid JSON reports the file and the line and column (missing comma on line 3)", async () => {
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, '{\n  "mcpServers": {\n    "a": { "command": "x" } "b": {}\n  }\n}\n');
			await writeProject(dirs, { good: GOOD });
			const snapshot = await load(dirs);
			const report = snapshot.files[0];
			assert.equal(report?.state, "error");
			assert.equal(report?.error, `${dirs.userPath}: invalid JSON at line 3, column 29: comma expected`);
			usable(snapshot, "good");
		});
	});

	it("invalid JSON with an unquoted value on line 3 reports line 3", async () => {
		// V8 reports `Unexpected token 'x', ..." is not valid JSON` without a position for this kind of error.
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, '{\n  "mcpServers": {\n    "a": { "command": x }\n  }\n}\n');
			await writeProject(dirs, { good: GOOD });
			const snapshot = await load(dirs);
			const report = snapshot.files[0];
			assert.equal(report?.state, "error");
			assert.ok(report?.error?.startsWith(`${dirs.userPath}: invalid JSON at `), report?.error);
			assert.match(report?.error ?? "", /line 3\b/);
			usable(snapshot, "good");
		});
	});

	it("an empty file reports the end of file", async () => {
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, "");
			await writeProject(dirs, { good: GOOD });
			const snapshot = await load(dirs);
			assert.equal(snapshot.files[0]?.error, `${dirs.userPath}: invalid JSON at line 1, column 1: value expected`);
			usable(snapshot, "good");
		});
	});

	it("a project file with invalid JSON names the project file; user servers still work", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, { good: GOOD });
			await writeText(dirs.projectPath, '{\n  "mcpServers": {\n    "a": 1,\n  }\n}');
			const snapshot = await load(dirs);
			assert.deepEqual(snapshot.files[1], {
				scope: "project",
				path: dirs.projectPath,
				state: "error",
				error: `${dirs.projectPath}: invalid JSON at line 4, column 3: property name expected`,
			});
			usable(snapshot, "good");
		});
	});

	it("the top level and mcpServers must be objects", async () => {
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, "[]");
			await writeProject(dirs, { good: GOOD });
			const snapshot = await load(dirs);
			assert.equal(snapshot.files[0]?.error, `${dirs.userPath}: the top level must be an object`);
			usable(snapshot, "good");
		});
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, JSON.stringify({ mcpServers: [] }));
			await writeProject(dirs, { good: GOOD });
			const snapshot = await load(dirs);
			assert.equal(snapshot.files[0]?.error, `${dirs.userPath}: "mcpServers" must be an object`);
			usable(snapshot, "good");
		});
	});

	it("an entry that is not an object is a named error", async () => {
		await expectBad("npx server", "entry must be an object");
	});
});

describe("server names", () => {
	const message = "server names may use letters, digits, - and _ only (at most 64)";

	it("invalid names are named errors; other servers still work", async () => {
		await withDirs(async (dirs) => {
			const long = "a".repeat(65);
			await writeUser(dirs, { "bad name": { command: "x" }, "a.b": { command: "x" }, [long]: { command: "x" }, good: GOOD });
			const snapshot = await load(dirs);
			broken(snapshot, "bad name", `server "bad name" (${dirs.userPath}): ${message}`);
			broken(snapshot, "a.b", `server "a.b" (${dirs.userPath}): ${message}`);
			broken(snapshot, long, `server "${long}" (${dirs.userPath}): ${message}`);
			usable(snapshot, "good");
		});
	});

	it("letters, digits, - and _ up to 64 characters are fine", async () => {
		await withDirs(async (dirs) => {
			const max = "b".repeat(64);
			await writeUser(dirs, { "My_server-2": { command: "x" }, [max]: { command: "x" } });
			const snapshot = await load(dirs);
			usable(snapshot, "My_server-2");
			usable(snapshot, max);
		});
	});
});

describe("extension-registered servers", () => {
	const extensionPath = "/ext/some-extension/index.ts";

	it("are used when no file entry has the same name", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, { good: GOOD });
			const snapshot = await load(dirs, {
				extensionServers: [{ name: "ext", config: { url: "https://ext.example/mcp", timeout: 2 }, extensionPath }],
			});
			const ext = usable(snapshot, "ext");
			assert.equal(ext.url, "https://ext.example/mcp");
			assert.equal(ext.requestTimeoutMs, 2000);
			assert.deepEqual(ext.source, { kind: "extension", path: extensionPath });
			usable(snapshot, "good");
		});
	});

	it("a user or project file entry of the same name wins", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, { shared: { command: "from-user" } });
			await writeProject(dirs, { projectShared: { command: "from-project" } });
			const snapshot = await load(dirs, {
				extensionServers: [
					{ name: "shared", config: { command: "from-extension" }, extensionPath },
					{ name: "projectShared", config: { command: "from-extension" }, extensionPath },
				],
			});
			const shared = usable(snapshot, "shared");
			assert.equal(shared.command, "from-user");
			assert.deepEqual(shared.source, { kind: "user", path: dirs.userPath });
			const projectShared = usable(snapshot, "projectShared");
			assert.equal(projectShared.command, "from-project");
			assert.deepEqual(projectShared.source, { kind: "project", path: dirs.projectPath });
			assert.equal(snapshot.servers.filter((server) => server.name === "shared").length, 1);
		});
	});

	it("an untrusted project file does not shadow an extension server", async () => {
		await withDirs(async (dirs) => {
			await writeProject(dirs, { ext: { command: "from-project" } });
			const snapshot = await load(dirs, {
				trusted: false,
				extensionServers: [{ name: "ext", config: { command: "from-extension" }, extensionPath }],
			});
			assert.equal(usable(snapshot, "ext").command, "from-extension");
		});
	});

	it("an invalid extension entry is a named error naming the extension; others still work", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, { good: GOOD });
			const snapshot = await load(dirs, {
				extensionServers: [
					{ name: "broken", config: { command: "x", nope: 1 }, extensionPath },
					{ name: "bad name", config: { command: "x" }, extensionPath },
					{ name: "fine", config: { command: "x" }, extensionPath },
				],
			});
			broken(snapshot, "broken", `server "broken" (registered by extension ${extensionPath}): field "nope" is not supported`);
			broken(
				snapshot,
				"bad name",
				`server "bad name" (registered by extension ${extensionPath}): server names may use letters, digits, - and _ only`,
			);
			usable(snapshot, "fine");
			usable(snapshot, "good");
		});
	});
});
