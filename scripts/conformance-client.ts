/**
 * The client under test for `@modelcontextprotocol/conformance` (`conformance client --command`):
 * a thin entry point over pi-mcp's own modules. It writes the server entry a user would put in
 * `mcp.json` (auth settings from `MCP_CONFORMANCE_SCENARIO` / `MCP_CONFORMANCE_CONTEXT`), loads it
 * with `loadConfig`, and drives `createRuntime` with `createAuth` (in-memory store, real loopback
 * receiver). Sign-in links are followed headlessly: the conformance authorization server approves
 * at once and redirects to our loopback redirect URI, which we then request, exactly as a browser
 * would. Step-up links (`403 insufficient_scope`) are followed the same way (at most twice per
 * operation, three sign-ins per run). Tools are called with the arguments the scenario suggests
 * (`MCP_CONFORMANCE_CONTEXT.toolCalls`) when it names some, else with made-up ones; the schema echo
 * tool gets back the schema pi-mcp listed for the other tool. "done" on stderr ends a complete run.
 *
 * Usage: node --import tsx scripts/conformance-client.ts <server-url>   (the runner appends the URL)
 * Exit 0 when every step succeeded; 1 with the reason on stderr otherwise; 3 when the scenario
 * needs something pi-mcp deliberately does not implement.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Tool } from "@modelcontextprotocol/client";
import { memoryStore } from "../src/auth/keyring.ts";
import { createAuth } from "../src/auth.ts";
import { loadConfig } from "../src/config.ts";
import { AuthorizationRequired } from "../src/errors.ts";
import { createLoginService } from "../src/login/receiver.ts";
import { createRuntime } from "../src/runtime.ts";
import { loadSdk } from "../src/sdk.ts";

const SERVER = "conformance";
const SECRET_ENV = "MCP_CONFORMANCE_CLIENT_SECRET";
const CIMD_URL = "https://conformance-test.local/client-metadata.json";
/** Sign-ins per run: the initial one plus step-ups; the conformance retry-limit check allows 3. */
const MAX_SIGN_INS = 3;

/** A tool call the scenario suggests (0.2: `http-custom-headers` needs exactly these arguments). */
type SuggestedCall = Readonly<{ name: string; arguments?: Record<string, unknown> }>;

type Context = Readonly<{
	client_id?: string;
	client_secret?: string;
	private_key_pem?: string;
	idp_id_token?: string;
	toolCalls?: readonly SuggestedCall[];
}>;

/** The 0.2 schema-preservation scenario's echo tool: it gets the other tool's schema, as received. */
const SCHEMA_ECHO = "json_schema_echo";

class Unsupported extends Error {}

const log = (text: string) => process.stderr.write(`conformance-client: ${text}\n`);

function readContext(): Context {
	const raw = process.env.MCP_CONFORMANCE_CONTEXT;
	if (!raw) return {};
	const parsed: unknown = JSON.parse(raw);
	return typeof parsed === "object" && parsed !== null ? (parsed as Context) : {};
}

/** The issuer of the server's authorization server, as a user would look it up for `oauth.issuer`. */
async function discoverIssuer(url: string): Promise<string> {
	const sdk = await loadSdk().then(() => import("@modelcontextprotocol/client"));
	const info = await sdk.discoverOAuthServerInfo(url);
	return info.authorizationServerMetadata?.issuer ?? info.authorizationServerUrl;
}

/** The `mcpServers` entry for this scenario, as written in `mcp.json`. */
async function serverEntry(url: string, scenario: string, context: Context): Promise<Record<string, unknown>> {
	const base = { url };
	if (context.private_key_pem !== undefined) {
		throw new Unsupported("private_key_jwt client authentication is not supported by pi-mcp (client_secret only)");
	}
	if (context.idp_id_token !== undefined) throw new Unsupported("cross-app access (SEP-990) is not supported by pi-mcp");
	if (context.client_id !== undefined && context.client_secret !== undefined) {
		const grantType = scenario.includes("client-credentials") ? "client_credentials" : "authorization_code";
		return {
			...base,
			auth: "oauth",
			oauth: { grantType, clientId: context.client_id, clientSecretEnv: SECRET_ENV, issuer: await discoverIssuer(url) },
		};
	}
	// The client ID metadata document URL the basic-cimd scenario expects (it is never fetched there).
	if (scenario === "auth/basic-cimd") return { ...base, auth: "oauth", oauth: { clientMetadataUrl: CIMD_URL } };
	if (scenario.startsWith("auth/")) return { ...base, auth: "oauth" };
	return base;
}

/** Arguments for a tool from its input schema: 1 for numbers, "test" for strings, true for booleans. */
function argumentsFor(tool: Tool): Record<string, unknown> {
	const properties = (tool.inputSchema.properties ?? {}) as Record<string, { type?: unknown }>;
	const sample = (type: unknown): unknown =>
		type === "number" || type === "integer" ? 1 : type === "boolean" ? true : type === "string" ? "test" : undefined;
	return Object.fromEntries(
		Object.entries(properties)
			.map(([name, schema]) => [name, sample(schema.type)] as const)
			.filter(([, value]) => value !== undefined),
	);
}

/**
 * The calls to make: the scenario's suggested calls when it names some, else every listed tool once
 * (the schema echo with the schema pi-mcp listed for the other tool, so the harness sees what survived).
 */
function plannedCalls(tools: readonly Tool[], context: Context): readonly SuggestedCall[] {
	if (context.toolCalls && context.toolCalls.length > 0) return context.toolCalls;
	const focal = tools.find((tool) => tool.name !== SCHEMA_ECHO);
	return tools.map((tool) =>
		tool.name === SCHEMA_ECHO && focal
			? { name: tool.name, arguments: { schema: focal.inputSchema } }
			: { name: tool.name, arguments: argumentsFor(tool) },
	);
}

async function main(): Promise<number> {
	const url = process.argv.at(-1);
	if (!url || !URL.canParse(url)) throw new Error("usage: conformance-client.ts <server-url>");
	const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
	const context = readContext();
	const version = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
	const env: Record<string, string | undefined> = { ...process.env, [SECRET_ENV]: context.client_secret };

	const dir = await mkdtemp(join(tmpdir(), "pi-mcp-conformance-"));
	const login = createLoginService();
	const notices: { ok: boolean; message: string }[] = [];
	const waiters = new Set<() => void>();
	const auth = createAuth({
		env,
		store: memoryStore(),
		lockDir: join(dir, "locks"),
		login,
		notify: (_server, message, ok) => {
			notices.push({ ok, message });
			for (const wake of waiters) wake();
		},
	});
	const holder: { runtime?: ReturnType<typeof createRuntime> } = {};
	try {
		const entry = await serverEntry(url, scenario, context);
		await writeFile(join(dir, "mcp.json"), JSON.stringify({ mcpServers: { [SERVER]: entry } }));
		const snapshot = await loadConfig({ agentDir: dir, cwd: dir, trusted: false, env, home: dir });
		const server = snapshot.servers.find((candidate) => candidate.name === SERVER);
		if (!server?.config) throw new Error(server?.error ?? "the server entry did not load");
		const runtime = createRuntime({ servers: snapshot.servers, env, clientInfo: { name: "pi-mcp", version }, auth });
		holder.runtime = runtime;

		/** Waits for the next sign-in notice after `seen` notices (the loopback completion reports one). */
		const nextNotice = (seen: number) =>
			new Promise<{ ok: boolean; message: string }>((resolve, reject) => {
				const timer = setTimeout(() => finish(() => reject(new Error("no sign-in notice within 10 s"))), 10_000);
				const finish = (settle: () => void) => {
					clearTimeout(timer);
					waiters.delete(check);
					settle();
				};
				const check = () => {
					const notice = notices[seen];
					if (notice) finish(() => resolve(notice));
				};
				waiters.add(check);
				check();
			});

		const signIns = { count: 0 };
		/** What a user does with the link: open it (the AS approves at once), land on the redirect URI. */
		async function follow(link: string): Promise<void> {
			signIns.count += 1;
			const seen = notices.length;
			const approval = await fetch(link, { redirect: "manual" });
			await approval.body?.cancel();
			const location = approval.headers.get("location");
			if (!location) throw new Error(`the authorization endpoint answered ${approval.status} without a redirect`);
			const callback = await fetch(new URL(location, link), { redirect: "manual" });
			await callback.body?.cancel();
			const notice = await nextNotice(seen);
			if (!notice.ok) throw new Error(notice.message);
			log(`signed in (${signIns.count})`);
		}

		/** Runs an operation; a sign-in or step-up link is followed and the operation retried, at most twice. */
		async function authorized<T>(what: string, operation: () => Promise<T>, retries = 2): Promise<T> {
			try {
				return await operation();
			} catch (error) {
				if (!(error instanceof AuthorizationRequired) || retries === 0 || signIns.count >= MAX_SIGN_INS) throw error;
				log(`${what}: authorization required`);
				await follow(error.url);
				return authorized(what, operation, retries - 1);
			}
		}

		const tools = await authorized("list tools", () => runtime.tools(SERVER));
		log(`tools: ${tools.map((tool) => tool.name).join(", ") || "none"}`);
		for (const call of plannedCalls(tools, context)) {
			const result = await authorized(`call ${call.name}`, () => runtime.call(SERVER, call.name, call.arguments ?? {}));
			if (result.isError) throw new Error(`tool ${call.name} returned an error: ${JSON.stringify(result.content)}`);
			log(`called ${call.name}`);
		}
		// scripts/conformance.mjs counts a scenario whose checks were all skipped as not applicable only after this.
		log("done");
		return 0;
	} catch (error) {
		if (error instanceof Unsupported) {
			log(`not supported: ${error.message}`);
			return 3;
		}
		log(`failed: ${error instanceof Error ? error.message : String(error)}`);
		return 1;
	} finally {
		auth.dispose();
		await holder.runtime?.dispose();
		await login.dispose();
		await rm(dir, { recursive: true, force: true });
	}
}

process.exitCode = await main();
