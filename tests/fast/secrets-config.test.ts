/**
 * `${secret:NAME}` in the configuration (issue 48) and the one rule for configured secrets (48 item 5, 47 item
 * 7), fast: where a reference is allowed, which values count as secrets, and that redaction replaces exact
 * values only. The real keyring, `pi-mcp secret` and a real Pi are in tests/secrets.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import { redactDeep, redactExact } from "../../src/output/redact.ts";
import { expectBad, usable, withDirs, writeUser } from "../helpers/config.ts";

describe("${secret:NAME} in the configuration", () => {
	test("allowed whole or in part in env and headers values, kept as written until the server connects", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, {
				s: { command: "x", env: { API_KEY: "${secret:API_KEY}" } },
				h: { url: "https://example.test/mcp", headers: { Authorization: "Bearer ${secret:TOKEN}" } },
			});
			const snapshot = await loadConfig({ agentDir: dirs.agentDir, cwd: dirs.cwd, trusted: false, env: {} });
			assert.deepEqual(usable(snapshot, "s").env, { API_KEY: "${secret:API_KEY}" });
			assert.deepEqual(usable(snapshot, "h").headers, { Authorization: "Bearer ${secret:TOKEN}" });
		});
	});

	test("refused in a command, an argument, a URL or cwd, and with a malformed name; a variable cannot smuggle one in", async () => {
		const only = 'stored secrets are given only in "env" and "headers" values (where no command line or log shows them)';
		await expectBad({ command: "x", args: ["--key=${secret:K}"] }, `field "args[0]" uses \${secret:…}: ${only}`);
		await expectBad({ url: "https://example.test/mcp?k=${secret:K}" }, `field "url" uses \${secret:…}: ${only}`);
		await expectBad(
			{ command: "x", env: { K: "${secret:bad-name}" } },
			'field "env.K" has ${secret:bad-name}: a secret\'s name uses letters, digits and _ (not starting with a digit)',
		);
		await expectBad(
			{ command: "x", env: { K: "${SMUGGLE}" } },
			'environment variable SMUGGLE (used in "env.K") holds "${secret:"',
			{ env: { SMUGGLE: "${secret:OTHER}" } },
		);
	});

	test("configured secrets: ${VAR}s in env and headers and credential-named literals; the user's environment is not", async () => {
		await withDirs(async (dirs) => {
			await writeUser(dirs, {
				s: {
					command: "${HOME}/bin/server",
					args: ["--notes", "${HOME}/notes", "--flag=${PLAIN_ARG}"],
					env: {
						DATA: "${XDG_DATA_HOME}/x",
						WORK: "${PWD}",
						KEY: "${MY_KEY}",
						API_TOKEN: "literal-token-1234",
						N: "plain-literal-value",
					},
					cwd: "${TMPDIR}",
				},
			});
			const env = {
				HOME: "/home/jane",
				XDG_DATA_HOME: "/home/jane/.local/share",
				PWD: "/home/jane/project",
				TMPDIR: "/tmp/jane",
				MY_KEY: "my-key-value-123",
				PLAIN_ARG: "arg-value-long",
			};
			const snapshot = await loadConfig({ agentDir: dirs.agentDir, cwd: dirs.cwd, trusted: false, env });
			const secrets = usable(snapshot, "s").secretValues;
			assert.ok(secrets.includes("my-key-value-123"), "a ${VAR} in env");
			assert.ok(secrets.includes("literal-token-1234"), "a literal under a credential name");
			for (const not of [
				"/home/jane",
				"/home/jane/.local/share",
				"/home/jane/project",
				"/tmp/jane",
				"arg-value-long",
				"plain-literal-value",
			]) {
				assert.equal(secrets.includes(not), false, not);
			}
		});
	});

	test("redaction replaces exact values only: a path after 'Authorization:' stays; results are redacted everywhere but base64", () => {
		assert.equal(
			redactExact('"Authorization: /home/user/.ssh/id_rsa"', ["s3cr3t-value"]),
			'"Authorization: /home/user/.ssh/id_rsa"',
		);
		assert.equal(redactExact("/home/jane/notes/new.md", []), "/home/jane/notes/new.md");
		const result = {
			content: [
				{ type: "text", text: "x s3cr3t-value y" },
				{ type: "image", data: "czNjcjN0LXZhbHVl", mimeType: "image/png" },
			],
			structuredContent: { "s3cr3t-value": ["s3cr3t-value"] },
		};
		assert.deepEqual(redactDeep(result, ["s3cr3t-value"]), {
			content: [
				{ type: "text", text: "x [redacted] y" },
				{ type: "image", data: "czNjcjN0LXZhbHVl", mimeType: "image/png" },
			],
			structuredContent: { "[redacted]": ["[redacted]"] },
		});
	});
});
