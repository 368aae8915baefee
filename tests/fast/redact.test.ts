/**
 * Redaction: every configured `env` and `headers` value of 8+ characters is a secret (literal
 * values too, not only `${VAR}`), and the pattern fallback catches credentials nobody configured:
 * `Basic …`, `Authorization:`, `x-api-key`, camelCase `accessToken`/`refreshToken`,
 * `registration_access_token`, URL-encoded forms; and the product's own words keep theirs. Fast tier:
 * the end-to-end case with a real stdio server that echoes its environment is in tests/redact.test.ts.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import ts from "typescript";
import { sanitize } from "../../src/output/text.ts";
import { loadServers } from "../helpers/config.ts";

const LITERAL_ENV = "lit-env-secret-9f8e7d6c";
const LITERAL_HEADER = "lit-header-secret-1a2b3c4d";
const SHORT = "short7!";

describe("configured values", () => {
	test("literal env and headers values of 8+ characters are secrets; shorter ones are not", async () => {
		const snapshot = await loadServers({
			local: { command: process.execPath, env: { API_TOKEN: LITERAL_ENV, SHORT } },
			remote: { url: "http://127.0.0.1:9/mcp", headers: { "X-Token": LITERAL_HEADER } },
		});
		const local = snapshot.servers.find((entry) => entry.name === "local")?.config;
		const remote = snapshot.servers.find((entry) => entry.name === "remote")?.config;
		assert.ok(local?.secretValues.includes(LITERAL_ENV), "literal env value");
		assert.equal(local?.secretValues.includes(SHORT), false, "7 characters are too short to be a secret");
		assert.ok(remote?.secretValues.includes(LITERAL_HEADER), "literal header value");
	});
});

describe("secrets in URLs and arguments (issue 32, item 7)", () => {
	test("query values, userinfo and credential-named argument values are secrets; --author and short plain values are not", async () => {
		const snapshot = await loadServers({
			local: {
				command: process.execPath,
				args: [
					"--password",
					"hunter2hunter2",
					"--token=ARGVSECRET999",
					"--author",
					"jane-doe-the-author",
					"API_KEY=kv-secret-77",
					"--clientSecret",
					"camel-secret-42",
					"--auth-header",
					"hdr-secret-88",
					"--verbose",
					"--mode=production-like",
					"--dsn",
					"postgres://app:DSN-PASSWORD-5@db.example/app?sslmode=require",
					"https://TOKEN-AS-USER-1@git.example/repo.git",
				],
			},
			remote: { url: "http://127.0.0.1:9/mcp?token=QS1&workspace=acme-production&x=1" },
		});
		const local = snapshot.servers.find((entry) => entry.name === "local")?.config?.secretValues ?? [];
		const remote = snapshot.servers.find((entry) => entry.name === "remote")?.config?.secretValues ?? [];
		for (const secret of [
			"hunter2hunter2",
			"ARGVSECRET999",
			"kv-secret-77",
			"camel-secret-42",
			"hdr-secret-88",
			"DSN-PASSWORD-5",
			"TOKEN-AS-USER-1",
		]) {
			assert.ok(local.includes(secret), `${secret} in ${local.join(" ")}`);
		}
		for (const plain of ["jane-doe-the-author", "--verbose", "production-like", "require", "app"]) {
			assert.equal(local.includes(plain), false, `${plain} is not a secret`);
		}
		assert.ok(remote.includes("QS1"), "a query value under a secret name, however short");
		assert.ok(remote.includes("acme-production"), "a query value of 8+ characters");
		assert.equal(remote.includes("1"), false);
	});
});

describe("pattern fallback", () => {
	const cases: readonly (readonly [string, string, string])[] = [
		["Basic credentials", "auth failed for Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy"],
		[
			"an Authorization header line",
			"Authorization: Digest username=alice, response=6629fae49393a05397450978507c4ef1",
			"6629fae4",
		],
		["x-api-key header", "x-api-key: sk-live-abcdef0123456789", "sk-live-abcdef0123456789"],
		["X-API-Key in JSON", '{"X-API-Key":"sk-live-abcdef0123456789"}', "sk-live-abcdef0123456789"],
		["api_key query", "GET /v1?api_key=abcdef0123456789&q=1", "abcdef0123456789"],
		["camelCase accessToken", '{"accessToken":"eyJhbGciOiJIUzI1NiJ9.abc.def"}', "eyJhbGciOiJIUzI1NiJ9"],
		["camelCase refreshToken", "refreshToken = rt-0123456789abcdef", "rt-0123456789abcdef"],
		["clientSecret", "clientSecret: cs-0123456789abcdef", "cs-0123456789abcdef"],
		["registration_access_token", '"registration_access_token": "reg-0123456789abcdef"', "reg-0123456789abcdef"],
		[
			"URL-encoded access_token",
			"redirect=https%3A%2F%2Fx%2Fcb%3Faccess_token%3Dat-0123456789abcdef%26x%3D1",
			"at-0123456789abcdef",
		],
		["URL-encoded JSON", "%7B%22refresh_token%22%3A%22rt-0123456789abcdef%22%7D", "rt-0123456789abcdef"],
		["URL-encoded Bearer", "Authorization=Bearer%20at-0123456789abcdef", "at-0123456789abcdef"],
		["form body", "grant_type=refresh_token&refresh_token=rt-0123456789abcdef&client_id=c", "rt-0123456789abcdef"],
	];
	for (const [what, text, secret] of cases) {
		test(`redacts ${what}`, () => {
			const cleaned = sanitize(text);
			assert.equal(cleaned.includes(secret), false, cleaned);
			assert.match(cleaned, /\[redacted\]/);
		});
	}

	test("keeps ordinary prose: the word after Basic, and the rest of a redacted line", () => {
		assert.equal(sanitize("Basic authentication is not supported"), "Basic authentication is not supported");
		assert.equal(sanitize("x-api-key: sk-live-abcdef0123456789 was rejected"), "x-api-key: [redacted] was rejected");
		assert.equal(sanitize("GET /v1?api_key=abcdef0123456789&q=1"), "GET /v1?api_key=[redacted]&q=1");
	});
});

/**
 * Every text the product writes, as far as the source says: each string and template literal in
 * src/, with `+` chains of them folded into one and every `${…}` or non-literal operand as "x".
 */
function productTexts(): readonly Readonly<{ file: string; text: string }>[] {
	const root = new URL("../../src/", import.meta.url).pathname;
	const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts"));
	const found: { file: string; text: string }[] = [];
	const isPlus = (node: ts.Node): node is ts.BinaryExpression =>
		ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken;
	const literal = (node: ts.Node): string | undefined => {
		if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
		if (ts.isTemplateExpression(node)) return node.head.text + node.templateSpans.map((span) => `x${span.literal.text}`).join("");
		return undefined;
	};
	const fold = (node: ts.Node): string =>
		isPlus(node)
			? fold(node.left) + fold(node.right)
			: (literal(ts.isParenthesizedExpression(node) ? node.expression : node) ?? "x");
	for (const file of files) {
		const source = ts.createSourceFile(file, readFileSync(join(root, file), "utf8"), ts.ScriptTarget.Latest, true);
		const visit = (node: ts.Node): void => {
			const text = literal(node);
			if (text !== undefined) found.push({ file, text });
			if (isPlus(node) && !isPlus(node.parent)) found.push({ file, text: fold(node) });
			ts.forEachChild(node, visit);
		};
		visit(source);
	}
	return found;
}

describe("the product's own words (issue 32, item 9)", () => {
	test("no string or template literal in src/ loses a word to the redaction", () => {
		const texts = productTexts();
		assert.ok(texts.length > 1000, `${texts.length} texts found`);
		const eaten = texts
			.filter(({ text }) => !text.includes("[redacted]") && sanitize(text).includes("[redacted]"))
			.map(({ file, text }) => `${file}: ${sanitize(text)}`);
		assert.deepEqual(eaten, []);
	});

	test("the keyring's advice keeps its words; values that look like secrets still go", () => {
		const advice = "Alternatively use a bearer token (`bearerTokenEnv`) or client credentials.";
		assert.equal(sanitize(advice), advice);
		for (const prose of [
			"Bearer tokens expire",
			"authorization: required",
			"code: 3",
			"password: incorrect",
			"client_secret=invalid_client",
		]) {
			assert.equal(sanitize(prose), prose);
		}
		assert.equal(sanitize("Bearer abc.def and Bearer eyJhbGciOiJIUzI1NiJ9"), "Bearer [redacted] and Bearer [redacted]");
		assert.equal(sanitize("password: hunter2hunter2"), "password: [redacted]");
		assert.equal(sanitize("code=AbCdEfGhIjKlMnOpQrStUvWx"), "code=[redacted]", "24+ characters without a digit");
	});
});
