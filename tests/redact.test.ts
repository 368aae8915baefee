/**
 * Redaction end to end (real tier): a literal configured `env` value that a real stdio server echoes to
 * stderr before failing never reaches the setup error or the status. The rules themselves are in
 * tests/fast/redact.test.ts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { SetupFailed } from "../src/errors.ts";
import { createRuntime } from "../src/runtime.ts";
import { loadServers } from "./helpers/config.ts";

const LITERAL_ENV = "lit-env-secret-9f8e7d6c";

test("a literal env token echoed to stderr by a failing server never reaches the setup error or status", async () => {
	const script =
		"process.stderr.write('starting with API_TOKEN=' + process.env.API_TOKEN + ' as ' + process.env.API_TOKEN.toUpperCase() + '\\n', () => process.exit(3))";
	const snapshot = await loadServers({
		echo: { command: process.execPath, args: ["-e", script], env: { API_TOKEN: LITERAL_ENV } },
	});
	const runtime = createRuntime({ servers: snapshot.servers, env: {}, clientInfo: { name: "redact-test", version: "0" } });
	try {
		const error = await runtime.tools("echo").then(
			() => assert.fail("expected a setup failure"),
			(e: unknown) => e,
		);
		assert.ok(error instanceof SetupFailed, String(error));
		assert.match(error.message, /stderr \(last lines\):\nstarting with API_TOKEN=\[redacted\]/);
		assert.equal(error.message.includes(LITERAL_ENV), false, error.message);
		const status = runtime.status().find((entry) => entry.name === "echo");
		assert.equal(JSON.stringify(status).includes(LITERAL_ENV), false);
	} finally {
		await runtime.dispose();
	}
});
