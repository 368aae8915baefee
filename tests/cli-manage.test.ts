/**
 * `pi-mcp` as a user runs it (its own process) for what #19 and #17 ask of the shell command:
 * managing servers without editing JSON (add, add-json, get, remove, enable, disable, import from
 * five clients), a run that behaves (npm's clean form, INIT_CWD, --version, JSON errors, --timeout,
 * no process left after Ctrl+C or SIGTERM), configuration slips named, search and describe, and the
 * bounds of the command line (-- ends the options, escapes in JSON output).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { makeSandbox, type Sandbox } from "./helpers/pi.ts";
import { HANG, HOSTILE, SERVER } from "./helpers/servers.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const BIN = join(ROOT, "bin", "pi-mcp.mjs");

type Run = Readonly<{ code: number | null; stdout: string; stderr: string }>;

function spawnCli(box: Sandbox, args: readonly string[], env: Readonly<Record<string, string>> = {}, cwd = box.cwd) {
	const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...box.env, TMPDIR: box.root, ...env } });
	const out: Buffer[] = [];
	const err: Buffer[] = [];
	child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
	child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
	const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
	const done = new Promise<Run>((resolve) =>
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
		}),
	);
	const stderr = () => Buffer.concat(err).toString("utf8");
	return { child, done, stderr };
}

const run = (box: Sandbox, args: readonly string[], env: Readonly<Record<string, string>> = {}) => spawnCli(box, args, env).done;

/** Processes whose environment holds `needle` (the fixture's log path marks this test's servers). */
function processesWith(needle: string): number[] {
	const pids = readdirProc();
	return pids.filter((pid) => {
		try {
			return (
				readFileSync(`/proc/${pid}/environ`, "utf8").includes(needle) &&
				!readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ")
			);
		} catch {
			return false;
		}
	});
}

function readdirProc(): number[] {
	return readdirSync("/proc")
		.filter((entry) => /^\d+$/.test(entry))
		.map(Number)
		.filter((pid) => pid !== process.pid);
}

const state: { box?: Sandbox } = {};
const box = (): Sandbox => state.box as Sandbox;
const userFile = () => join(box().agentDir, "mcp.json");
const projectFile = () => join(box().cwd, ".pi", "mcp.json");
const readJson = async (path: string) => JSON.parse(await readFile(path, "utf8"));

before(async () => {
	state.box = await makeSandbox();
	await mkdir(join(box().cwd, ".pi"));
});
after(() => state.box?.cleanup());

describe("managing servers without editing JSON", () => {
	test("add (stdio and HTTP), exit 2 on an existing name, --force, masked values, ${VAR} warnings, secret hints, the reload note", async () => {
		const added = await run(box(), [
			"add",
			"files",
			"-e",
			"API_TOKEN=sk-literal-secret-123",
			"-e",
			"HOME_DIR=${NOT_SET_ANYWHERE}",
			"--",
			process.execPath,
			SERVER,
		]);
		assert.equal(added.code, 0, added.stderr);
		assert.match(added.stdout, new RegExp(`^Added "files" to the user file ${userFile()} \\(created\\):`));
		assert.match(added.stdout, /"API_TOKEN": "\*{8}"/);
		assert.match(added.stdout, /"HOME_DIR": "\$\{NOT_SET_ANYWHERE\}"/);
		assert.equal(added.stdout.includes("sk-literal-secret-123"), false, "a literal value is never shown");
		assert.match(added.stderr, /warning: environment variable NOT_SET_ANYWHERE is not set here/);
		assert.match(added.stderr, /warning: env\.API_TOKEN holds a literal value that looks like a secret: store "\$\{API_TOKEN\}"/);
		assert.match(added.stderr, /A running Pi uses the change from its next session, or after \/reload\./);
		assert.deepEqual((await readJson(userFile())).mcpServers.files, {
			command: process.execPath,
			args: [SERVER],
			env: { API_TOKEN: "sk-literal-secret-123", HOME_DIR: "${NOT_SET_ANYWHERE}" },
		});

		const again = await run(box(), ["add", "files", "--", "other"]);
		assert.equal(again.code, 2);
		assert.match(again.stderr, /server "files" already exists in .*mcp\.json; pass --force to replace it/);
		const json = await run(box(), ["--json", "add", "files", "--", "other"]);
		assert.equal(json.code, 2);
		assert.deepEqual(JSON.parse(json.stdout).error.code, "exists");

		const http = await run(box(), [
			"add",
			"remote",
			"--url",
			"https://example.com/mcp",
			"--header",
			"X-Api-Key: ${REMOTE_KEY}",
			"--auth",
			"bearer",
			"--bearer-env",
			"REMOTE_TOKEN",
			"--json",
		]);
		assert.equal(http.code, 0, http.stderr);
		assert.deepEqual(JSON.parse(http.stdout).entry, {
			url: "https://example.com/mcp",
			headers: { "X-Api-Key": "${REMOTE_KEY}" },
			auth: "bearer",
			bearerTokenEnv: "REMOTE_TOKEN",
		});
		const invalid = await run(box(), ["add", "plain", "--url", "http://example.com/mcp"]);
		assert.equal(invalid.code, 2);
		assert.match(invalid.stderr, /field "url" uses http: to a non-loopback host.*nothing was changed/);

		const forced = await run(box(), [
			"add-json",
			"--force",
			"files",
			JSON.stringify({ command: process.execPath, args: [SERVER] }),
		]);
		assert.equal(forced.code, 0, forced.stderr);
		assert.match(forced.stdout, /^Replaced "files"/);
		assert.equal((await run(box(), ["add-json", "x", "[1]"])).code, 2);
	});

	test("get, enable, disable, remove: the defining file, --scope when both define it; a file with comments is refused", async () => {
		await writeFile(projectFile(), JSON.stringify({ mcpServers: { files: { command: "project-files" } } }, null, 2));
		const both = await run(box(), ["disable", "files"]);
		assert.equal(both.code, 2);
		assert.match(both.stderr, /defined in both .* choose one with --scope user or --scope project/);
		const off = await run(box(), ["disable", "--scope", "user", "files"]);
		assert.equal(off.code, 0, off.stderr);
		assert.match(off.stdout, new RegExp(`^Disabled "files" in the user file ${userFile()}`));
		assert.equal((await readJson(userFile())).mcpServers.files.enabled, false);

		const get = await run(box(), ["get", "--json", "--approve", "files"]);
		assert.equal(get.code, 0, get.stderr);
		const got = JSON.parse(get.stdout) as { definitions: { scope: string }[] };
		assert.deepEqual(
			got.definitions.map((each) => each.scope),
			["user", "project"],
		);
		const typo = await run(box(), ["get", "filse"]);
		assert.equal(typo.code, 2);
		assert.match(typo.stderr, /no server "filse" in .*; did you mean "files"\?/);

		const removed = await run(box(), ["remove", "--scope", "project", "files"]);
		assert.equal(removed.code, 0, removed.stderr);
		assert.match(removed.stdout, /^Removed "files" from the project file /);
		assert.deepEqual((await readJson(projectFile())).mcpServers, {});
		const on = await run(box(), ["enable", "files"]);
		assert.equal(on.code, 0, on.stderr);
		assert.equal((await readJson(userFile())).mcpServers.files.enabled, undefined, "enabling removes the key");

		const commented = '{\n  // mine\n  "mcpServers": {}\n}\n';
		await writeFile(projectFile(), commented);
		const refused = await run(box(), ["add", "--scope", "project", "x", "--", "cmd"]);
		assert.equal(refused.code, 2);
		assert.match(refused.stderr, /invalid JSON at line 2, column 3: comments are not allowed/);
		assert.equal(await readFile(projectFile(), "utf8"), commented);
		await writeFile(projectFile(), "{}");
	});

	test("import from Claude Desktop, Claude Code, Cursor, VS Code and Codex: only the file asked for", async () => {
		const home = box().home;
		const desktop = join(home, ".config", "Claude", "claude_desktop_config.json");
		await mkdir(join(desktop, ".."), { recursive: true });
		await writeFile(desktop, JSON.stringify({ mcpServers: { desk: { command: "desk-cmd", args: ["a"] } } }));
		await writeFile(
			join(box().cwd, ".mcp.json"),
			JSON.stringify({
				mcpServers: { code: { type: "stdio", command: "code-cmd" }, old: { type: "sse", url: "https://x/sse" } },
			}),
		);
		await mkdir(join(home, ".cursor"), { recursive: true });
		await writeFile(
			join(home, ".cursor", "mcp.json"),
			JSON.stringify({
				mcpServers: { cur: { url: "https://cursor.example/mcp", headers: { Authorization: "Bearer ${env:CUR_TOKEN}" } } },
			}),
		);
		await mkdir(join(box().cwd, ".vscode"), { recursive: true });
		await writeFile(
			join(box().cwd, ".vscode", "mcp.json"),
			JSON.stringify({
				inputs: [],
				servers: {
					vs: { type: "stdio", command: "vs-cmd", args: ["${workspaceFolder}/x"] },
					asks: { type: "http", url: "https://x/mcp", headers: { K: "${input:key}" } },
				},
			}),
		);
		const codex = join(box().root, "codex.toml");
		await writeFile(
			codex,
			'model = "o3"\n[mcp_servers.cx]\ncommand = "cx-cmd"\nargs = ["-y"]\nenv = { CX = "1" }\n[mcp_servers.cx-http]\nurl = "https://cx.example/mcp"\nbearer_token_env_var = "CX_TOKEN"\n',
		);
		const desk = await run(box(), ["import", "claude-desktop"]);
		assert.equal(desk.code, 0, desk.stderr);
		const code = await run(box(), ["import", "claude-code"]);
		assert.equal(code.code, 1, "one server imported, one skipped");
		assert.match(code.stderr, /skipped "old": it uses the legacy SSE transport/);
		assert.equal((await run(box(), ["import", "cursor"])).code, 0);
		const vs = await run(box(), ["import", "vscode"]);
		assert.match(vs.stderr, /skipped "asks": field "headers\.K" uses a variable form pi-mcp cannot read/);
		assert.equal(vs.stderr.includes("input:key"), false, "a skipped entry's value is never quoted");
		const cx = await run(box(), ["import", "--json", "codex", codex]);
		assert.equal(cx.code, 0, cx.stderr);
		const servers = (await readJson(userFile())).mcpServers;
		const project = (await readJson(projectFile())).mcpServers;
		assert.deepEqual(servers.desk, { command: "desk-cmd", args: ["a"] });
		assert.equal(servers.code, undefined, "a project's own file goes to the project file");
		assert.deepEqual(project.code, { command: "code-cmd" });
		assert.deepEqual(servers.cur, { url: "https://cursor.example/mcp", headers: { Authorization: "Bearer ${CUR_TOKEN}" } });
		assert.deepEqual(project.vs, { command: "vs-cmd", args: [`${box().cwd}/x`] });
		assert.deepEqual(servers.cx, { command: "cx-cmd", args: ["-y"], env: { CX: "1" } });
		assert.deepEqual(servers["cx-http"], { url: "https://cx.example/mcp", auth: "bearer", bearerTokenEnv: "CX_TOKEN" });
		const twice = await run(box(), ["import", "claude-desktop"]);
		assert.match(twice.stderr, /skipped "desk": server "desk" already exists .*--force/);
		const missing = await run(box(), ["import", "cursor", join(box().root, "nope.json")]);
		assert.equal(missing.code, 2);
		assert.match(missing.stderr, /no file at .*nope\.json/);
	});
});

describe("a run that behaves", () => {
	test("npm run -s gives clean JSON and reads the directory npm ran from; --version; JSON errors on stdout", async () => {
		await writeFile(projectFile(), JSON.stringify({ mcpServers: { local: { command: process.execPath, args: [SERVER] } } }));
		const npm = spawn("npm", ["--prefix", ROOT, "run", "-s", "pi-mcp", "--", "--approve", "list", "--json"], {
			cwd: box().cwd,
			env: { ...box().env, PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH}` },
		});
		const chunks: Buffer[] = [];
		npm.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
		await new Promise((resolve) => npm.on("close", resolve));
		const listed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { servers: { name: string }[] };
		assert.ok(
			listed.servers.some((server) => server.name === "local"),
			"the project file of the user's directory",
		);

		const version = await run(box(), ["--version"]);
		assert.equal(version.code, 0);
		assert.equal(version.stdout, `pi-mcp ${(await readJson(join(ROOT, "package.json"))).version}\n`);
		const bad = await run(box(), ["--json", "tools", "nope"]);
		assert.equal(bad.code, 2);
		assert.equal(bad.stderr, "");
		const error = JSON.parse(bad.stdout).error as { message: string; code: string };
		assert.equal(error.code, "usage");
		assert.match(error.message, /^unknown MCP server "nope"/);
		const option = await run(box(), ["--json", "list", "--frob"]);
		assert.deepEqual(JSON.parse(option.stdout), { error: { message: "unknown option '--frob'", code: "usage" } });
	});

	test("Ctrl+C or SIGTERM while a server connects leaves no process; --timeout bounds connecting", async () => {
		const log = join(box().root, "hang.log");
		await writeFile(
			userFile(),
			JSON.stringify({ mcpServers: { hang: { command: process.execPath, args: [HANG], env: { FIXTURE_LOG: log } } } }),
		);
		for (const signal of ["SIGINT", "SIGTERM"] as const) {
			const started = spawnCli(box(), ["tools", "hang"]);
			while (!existsSync(log) || processesWith(log).length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
			started.child.kill(signal);
			const done = await started.done;
			assert.equal(done.code, 130, done.stderr);
			assert.deepEqual(processesWith(log), [], `no server left after ${signal}`);
		}
		const bounded = await run(box(), ["--timeout", "1", "tools", "hang"]);
		assert.equal(bounded.code, 1);
		assert.match(bounded.stderr, /hang/);
		assert.deepEqual(processesWith(log), []);
	});
});

describe("configuration slips are named", () => {
	test("list exits 2: VS Code's servers key, every unset variable, a misspelt field; a close server name is suggested", async () => {
		await writeFile(userFile(), JSON.stringify({ servers: { a: { command: "x" } } }));
		const vscode = await run(box(), ["list"]);
		assert.equal(vscode.code, 2);
		assert.match(vscode.stdout, /top-level key "servers" is VS Code's format \("servers"\); pi-mcp reads "mcpServers"/);
		await writeFile(
			userFile(),
			JSON.stringify({
				mcpServer: {},
				mcpServers: {
					fixture: { command: process.execPath, args: [SERVER] },
					vars: { command: "x", env: { A: "${UNSET_ONE}", B: "${UNSET_TWO}" } },
					typo: { cmd: "x", agrs: [] },
				},
			}),
		);
		const listed = await run(box(), ["list"]);
		assert.equal(listed.code, 2);
		assert.match(listed.stdout, /top-level key "mcpServer" is not used \(did you mean "mcpServers"\?\)/);
		assert.match(
			listed.stdout,
			/environment variables UNSET_ONE \(used in "env\.A"\), UNSET_TWO \(used in "env\.B"\) are not set/,
		);
		assert.match(listed.stdout, /"cmd" \(did you mean "command"\?\), "agrs" \(did you mean "args"\?\) are not supported/);
		const near = await run(box(), ["tools", "fixtrue"]);
		assert.equal(near.code, 2);
		assert.match(near.stderr, /did you mean "fixture"\?/);
	});
});

describe("search, describe, and the bounds of the command line", () => {
	test("search across servers; describe one tool; after --, a word is an argument; JSON escapes C1 and bidi; non-object args exit 2", async () => {
		await writeFile(
			userFile(),
			JSON.stringify({
				mcpServers: {
					fixture: { command: process.execPath, args: [SERVER] },
					hostile: { command: process.execPath, args: [HOSTILE] },
					evil: { command: process.execPath, args: [SERVER] },
				},
			}),
		);
		await writeFile(
			projectFile(),
			JSON.stringify({ mcpServers: { evil: { command: process.execPath, args: [SERVER, "project"] } } }),
		);
		const found = await run(box(), ["search", "--json", "add", "numbers"]);
		assert.equal(found.code, 0, found.stderr);
		const hits = JSON.parse(found.stdout).results as { server: string; tool: string }[];
		assert.ok(
			hits.some((hit) => hit.tool === "add"),
			found.stdout,
		);
		const text = await run(box(), ["search", "add", "numbers"]);
		assert.equal(text.code, 0, text.stderr);
		assert.match(text.stdout, /^fixture\/add — Add two numbers$/m);
		const described = await run(box(), ["describe", "fixture", "add"]);
		assert.equal(described.code, 0, described.stderr);
		assert.match(described.stdout, /"a"/);

		// After --, a word is an argument even where it looks like an option.
		const smuggled = await run(box(), ["call", "evil", "echo", "--", "--approve"]);
		assert.equal(smuggled.code, 2);
		assert.match(smuggled.stderr, /not valid JSON/);
		assert.doesNotMatch(smuggled.stderr, /project file/);
		const shadow = await run(box(), ["call", "--approve", "evil", "echo", '{"text":"x"}']);
		assert.equal(shadow.code, 0, shadow.stderr);
		assert.match(shadow.stderr, /server "evil" comes from the project file .*replaces the user file's entry/);
		const list = await run(box(), ["--approve", "list"]);
		assert.match(list.stdout, /note: project entry "evil" replaces the user file's entry of that name/);

		const array = await run(box(), ["call", "fixture", "echo", "[1]"]);
		assert.equal(array.code, 2);
		assert.match(array.stderr, /the arguments must be one JSON object/);

		const echoed = await run(box(), ["call", "--json", "fixture", "echo", JSON.stringify({ text: "a\u009b2Jb\u009dc\u202ed" })]);
		const tools = await run(box(), ["tools", "--json", "hostile"]);
		for (const output of [echoed.stdout, tools.stdout]) {
			assert.equal(/[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/.test(output), false, JSON.stringify(output.slice(0, 200)));
			JSON.parse(output);
		}
		assert.match(tools.stdout, /\\u202e/);
	});
});
