/**
 * Regenerates bench/data/catalog2.json (issue #42): the tools of published MCP servers that are not in
 * the shared catalog, as their own `tools/list` gives them. Not run in CI: it needs the packages,
 * installed outside the repository (`npm install --ignore-scripts <packages>` in CATALOG2_DIR,
 * /tmp/catalog2 by default). Credentials are dummies: a server that cannot list without a real
 * account is recorded as skipped, with its error.
 *
 *   node --import tsx bench/catalog2.ts
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const DIR = process.env.CATALOG2_DIR ?? "/tmp/catalog2";
const CREDENTIALS = join(DIR, "dummy-gdrive-credentials.json");
writeFileSync(CREDENTIALS, JSON.stringify({ access_token: "dummy", token_type: "Bearer" }));
const KEYTAR_STUB = join(DIR, "keytar-stub.cjs");
writeFileSync(
	KEYTAR_STUB,
	`const Module = require("node:module");
const load = Module._load;
const stub = { getPassword: async () => null, setPassword: async () => {}, deletePassword: async () => false, findCredentials: async () => [] };
Module._load = function (request, ...rest) {
	return request === "keytar" || request.endsWith("keytar.node") ? stub : load.call(this, request, ...rest);
};
`,
);

/** A stand-in Redis on port 16399: every RESP command gets +OK. */
const stubRedis = createServer((socket) =>
	socket.on("data", (data) => socket.write("+OK\r\n".repeat(Math.max(1, data.toString().split("\r\n*").length)))),
).listen(16399, "127.0.0.1");

/** How each server is started: its package, the bin's arguments, and the (dummy) environment it insists on. */
type Start = Readonly<{
	server: string;
	pkg: string;
	args?: string[];
	env?: Record<string, string>;
	/** Node's own flags, and the install directory when the package needs one of its own. */
	node?: string[];
	dir?: string;
}>;
const SERVERS: readonly Start[] = [
	{ server: "brave-search", pkg: "@modelcontextprotocol/server-brave-search", env: { BRAVE_API_KEY: "dummy" } },
	{ server: "puppeteer", pkg: "@modelcontextprotocol/server-puppeteer" },
	// Connects at start: a stub that answers +OK to every command stands in for Redis (see `stubRedis`).
	{ server: "redis", pkg: "@modelcontextprotocol/server-redis", args: ["redis://127.0.0.1:16399"] },
	// Reads saved OAuth credentials at start: a dummy file (nothing is fetched to list).
	{ server: "gdrive", pkg: "@modelcontextprotocol/server-gdrive", env: { GDRIVE_CREDENTIALS_PATH: CREDENTIALS } },
	{
		server: "aws-kb",
		pkg: "@modelcontextprotocol/server-aws-kb-retrieval",
		env: { AWS_ACCESS_KEY_ID: "dummy", AWS_SECRET_ACCESS_KEY: "dummy", AWS_REGION: "us-east-1" },
	},
	{
		server: "cloudflare",
		pkg: "@cloudflare/mcp-server-cloudflare",
		args: ["run", "0000"],
		env: { CLOUDFLARE_API_TOKEN: "dummy" },
	},
	// Installed on its own (its SDK 1.x would clash when hoisted); it imports the SDK without file
	// extensions, which plain Node rejects: tsx's loader resolves them.
	{
		server: "heroku",
		pkg: "@heroku/mcp-server",
		env: { HEROKU_API_KEY: "dummy" },
		dir: `${DIR}-heroku`,
		node: ["--import", `${new URL("../node_modules/tsx/dist/esm/index.mjs", import.meta.url)}`],
	},
	{ server: "hubspot", pkg: "@hubspot/mcp-server", env: { PRIVATE_APP_ACCESS_TOKEN: "dummy" } },
	{ server: "upstash", pkg: "@upstash/mcp-server", args: ["run", "dummy@example.com", "dummy"] },
	{
		server: "elasticsearch",
		pkg: "@elastic/mcp-server-elasticsearch",
		env: { ES_URL: "http://127.0.0.1:1", ES_API_KEY: "dummy" },
	},
	{ server: "figma", pkg: "figma-developer-mcp", args: ["--stdio", "--figma-api-key=dummy"] },
	// keytar (native, unbuilt under --ignore-scripts) is stubbed by a preload: listing never reads the keychain.
	{ server: "azure-devops", pkg: "@azure-devops/mcp", args: ["dummy-org"], node: ["--require", KEYTAR_STUB] },
	{
		server: "browserbase",
		pkg: "@browserbasehq/mcp-server-browserbase",
		env: { BROWSERBASE_API_KEY: "dummy", BROWSERBASE_PROJECT_ID: "dummy", GEMINI_API_KEY: "dummy" },
	},
];

type Listed = Record<string, unknown>;

async function list(entry: Start): Promise<Listed> {
	const dir = entry.dir ?? DIR;
	const manifest = JSON.parse(readFileSync(join(dir, "node_modules", entry.pkg, "package.json"), "utf8")) as {
		version: string;
		bin: string | Record<string, string>;
	};
	const bin = typeof manifest.bin === "string" ? manifest.bin : (Object.values(manifest.bin)[0] ?? "");
	const args = [...(entry.node ?? []), join(dir, "node_modules", entry.pkg, bin), ...(entry.args ?? [])];
	const how = {
		package: entry.pkg,
		version: manifest.version,
		command: [
			"node",
			...(entry.node ?? []).map((flag) => flag.replace(/.*\//, "")),
			`node_modules/${entry.pkg}/${bin.replace(/^\.\//, "")}`,
			...(entry.args ?? []),
		].join(" "),
		env: Object.keys(entry.env ?? {}),
	};
	const transport = new StdioClientTransport({
		command: process.execPath,
		args,
		env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...entry.env },
		stderr: "ignore",
	});
	const client = new Client({ name: "catalog2", version: "1.0.0" });
	const timer = setTimeout(() => void transport.close(), 30_000);
	try {
		await client.connect(transport);
		const tools = [];
		for (let cursor: string | undefined, first = true; first || cursor; first = false) {
			const page = await client.listTools(cursor ? { cursor } : {});
			tools.push(...page.tools);
			cursor = page.nextCursor;
		}
		return {
			server: entry.server,
			...how,
			tools: tools.map((tool) => ({
				name: tool.name,
				...(tool.title ? { title: tool.title } : {}),
				description: tool.description ?? "",
				inputSchema: tool.inputSchema,
				...(tool.annotations ? { annotations: tool.annotations } : {}),
			})),
		};
	} catch (error) {
		return { server: entry.server, ...how, skipped: String((error as Error).message ?? error).slice(0, 200), tools: [] };
	} finally {
		clearTimeout(timer);
		await client.close().catch(() => undefined);
	}
}

const servers = [];
for (const entry of SERVERS) {
	const listed = await list(entry);
	console.log(
		`${entry.server}: ${(listed.tools as unknown[]).length} tools${listed.skipped ? ` (skipped: ${listed.skipped})` : ""}`,
	);
	servers.push(listed);
}
stubRedis.close();
writeFileSync(
	new URL("data/catalog2.json", import.meta.url),
	`${JSON.stringify({ listed: new Date().toISOString().slice(0, 10), servers }, null, "\t")}\n`,
);
