/**
 * The keyring record's name and format, as logic (fast tier): the account name (a digest of what the
 * credentials mean), record versions 1 and 2 (a DPoP key), damaged or foreign records read as absent.
 * A keyring call is made once more when the Secret Service left the bus during it. The same records in the
 * real Secret Service: tests/store.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { newDpopKey } from "../../src/auth/dpop.ts";
import { guarded, KeyringUnavailable } from "../../src/auth/keyring.ts";
import { parseRecord, recordAccount, serializeRecord } from "../../src/auth/record.ts";
import { httpServer } from "../fixtures/oauth/config.ts";

describe("recordAccount", () => {
	const base = httpServer("jira", "https://mcp.example.com/mcp", {
		oauth: { issuer: "https://id.example.com", clientId: "c1", scope: "read", redirectUri: "http://127.0.0.1:8976/callback" },
	});

	test("a sha256 hex digest that reveals neither name nor endpoint, stable across calls", () => {
		const first = recordAccount(base);
		assert.match(first, /^[0-9a-f]{64}$/);
		assert.equal(recordAccount({ ...base }), first);
		assert.equal(first.includes("jira"), false);
	});

	test("changes with the name, the endpoint and each OAuth setting that changes the meaning", () => {
		const first = recordAccount(base);
		const oauth = base.oauth!;
		const variants = [
			{ ...base, name: "jira2" },
			{ ...base, url: "https://mcp.example.com/other" },
			{ ...base, oauth: { ...oauth, issuer: "https://id2.example.com" } },
			{ ...base, oauth: { ...oauth, clientId: "c2" } },
			{ ...base, oauth: { ...oauth, scope: "read write" } },
			{ ...base, oauth: { ...oauth, grantType: "client_credentials" as const } },
			{ ...base, oauth: { ...oauth, redirectUri: "http://127.0.0.1:8977/callback" } },
		];
		const accounts = new Set([first, ...variants.map(recordAccount)]);
		assert.equal(accounts.size, variants.length + 1);
		// Settings that do not change what the credentials mean keep the account.
		assert.equal(recordAccount({ ...base, description: "x", requestTimeoutMs: 5 }), first);
		assert.equal(recordAccount({ ...base, oauth: { ...oauth, clientSecretEnv: "OTHER" } }), first);
	});
});

describe("the record format", () => {
	const tokens = { access_token: "a-token", token_type: "Bearer" };
	test("version-1 records (no DPoP key) are still read, and written as version 1", () => {
		const v1 = parseRecord(JSON.stringify({ version: 1, tokens, updatedAt: 5 }));
		assert.equal(v1?.tokens?.access_token, "a-token");
		assert.equal(v1?.dpop, undefined);
		assert.equal(JSON.parse(serializeRecord({ version: 1, tokens, updatedAt: 6 })).version, 1);
		// A key in a version-1 record is not one (only version 2 carries keys).
		const key = newDpopKey("ES256");
		assert.equal(parseRecord(JSON.stringify({ version: 1, tokens, dpop: key, updatedAt: 5 }))?.dpop, undefined);
	});

	test("a record with a DPoP key is version 2 (readers before DPoP skip it); one with a damaged key is no record", () => {
		const key = newDpopKey("ES256");
		const text = serializeRecord({ version: 1, tokens: { ...tokens, token_type: "DPoP" }, dpop: key, updatedAt: 7 });
		assert.equal(JSON.parse(text).version, 2);
		assert.deepEqual(parseRecord(text)?.dpop, key);
		assert.equal(parseRecord(JSON.stringify({ version: 2, tokens, dpop: { alg: "HS256", jwk: {} }, updatedAt: 7 })), undefined);
		assert.equal(parseRecord(JSON.stringify({ version: 3, tokens, updatedAt: 7 })), undefined);
	});
});

describe("a keyring call", () => {
	const left = () => new Error("Platform failure: DBus error: Message recipient disconnected from message bus without replying");

	// The service left the bus during the call, or a kept entry's session belonged to a service since replaced.
	const stale = () => new Error("Platform failure: DBus error: The session does not exist");
	for (const gone of [left, stale]) {
		test(`is made once more when the Secret Service went away (D-Bus starts it again): ${gone().message}`, async () => {
			let calls = 0;
			const value = await guarded(async () => {
				calls += 1;
				if (calls === 1) throw gone();
				return "stored";
			});
			assert.deepEqual([value, calls], ["stored", 2]);
		});
	}

	test("fails as KeyringUnavailable on a second such failure or on any other, without another try", async () => {
		let calls = 0;
		await assert.rejects(
			guarded(async () => {
				calls += 1;
				throw left();
			}),
			KeyringUnavailable,
		);
		assert.equal(calls, 2);
		calls = 0;
		await assert.rejects(
			guarded(async () => {
				calls += 1;
				throw new Error("No such interface “org.freedesktop.Secret.Collection”");
			}),
			KeyringUnavailable,
		);
		assert.equal(calls, 1);
	});
});
