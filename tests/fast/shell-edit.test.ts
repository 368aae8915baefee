/**
 * `pi-mcp`'s edits in process (`main()`, no server started): add, add-json, get, remove, enable, disable
 * and import from five clients, as the shell words them and with their exit codes; configuration slips
 * named by `list`. The edit logic itself (order, indentation, refusals): cli-edit.test.ts; writes that
 * race or meet links: tests/edit-safety.test.ts.
 */
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type ShellBox, shell, shellBox } from "../helpers/shell.ts";

const state: { box?: ShellBox } = {};
const box = (): ShellBox => state.box as ShellBox;
const run = (args: readonly string[]) => shell(box(), args);
const readJson = async (path: string) => JSON.parse(await readFile(path, "utf8"));

before(async () => {
	state.box = await shellBox();
});
after(() => state.box?.cleanup());

describe("managing servers without editing JSON", () => {
	test("add (stdio and HTTP), exit 2 on an existing name, --force, masked values, ${VAR} warnings, secret hints, the reload note", async () => {
		const added = await run([
			"add",
			"files",
			"-e",
			"API_TOKEN=sk-literal-secret-123",
			"-e",
			"HOME_DIR=${NOT_SET_ANYWHERE}",
			"--",
			"node",
			"server.mjs",
		]);
		assert.equal(added.code, 0, added.stderr);
		assert.match(added.stdout, new RegExp(`^Added "files" to the user file ${box().userFile} \\(created\\):`));
		assert.match(added.stdout, /"API_TOKEN": "\*{8}"/);
		assert.match(added.stdout, /"HOME_DIR": "\$\{NOT_SET_ANYWHERE\}"/);
		assert.equal(added.stdout.includes("sk-literal-secret-123"), false, "a literal value is never shown");
		assert.match(added.stderr, /warning: environment variable NOT_SET_ANYWHERE is not set here/);
		assert.match(added.stderr, /warning: env\.API_TOKEN holds a literal value that looks like a secret: store "\$\{API_TOKEN\}"/);
		assert.match(added.stderr, /A running Pi uses the change from its next session, or after \/reload\./);
		assert.deepEqual((await readJson(box().userFile)).mcpServers.files, {
			command: "node",
			args: ["server.mjs"],
			env: { API_TOKEN: "sk-literal-secret-123", HOME_DIR: "${NOT_SET_ANYWHERE}" },
		});

		const again = await run(["add", "files", "--", "other"]);
		assert.equal(again.code, 2);
		assert.match(again.stderr, /server "files" already exists in .*mcp\.json; pass --force to replace it/);
		const json = await run(["--json", "add", "files", "--", "other"]);
		assert.equal(json.code, 2);
		assert.deepEqual(JSON.parse(json.stdout).error.code, "exists");

		const http = await run([
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
		const invalid = await run(["add", "plain", "--url", "http://example.com/mcp"]);
		assert.equal(invalid.code, 2);
		assert.match(invalid.stderr, /field "url" uses http: to a non-loopback host.*nothing was changed/);

		const forced = await run(["add-json", "--force", "files", JSON.stringify({ command: "node", args: ["server.mjs"] })]);
		assert.equal(forced.code, 0, forced.stderr);
		assert.match(forced.stdout, /^Replaced "files"/);
		assert.equal((await run(["add-json", "x", "[1]"])).code, 2);
	});

	test("get, enable, disable, remove: the defining file, --scope when both define it; a file with comments is refused", async () => {
		await writeFile(box().projectFile, JSON.stringify({ mcpServers: { files: { command: "project-files" } } }, null, 2));
		const both = await run(["disable", "files"]);
		assert.equal(both.code, 2);
		assert.match(both.stderr, /defined in both .* choose one with --scope user or --scope project/);
		const off = await run(["disable", "--scope", "user", "files"]);
		assert.equal(off.code, 0, off.stderr);
		assert.match(off.stdout, new RegExp(`^Disabled "files" in the user file ${box().userFile}`));
		assert.equal((await readJson(box().userFile)).mcpServers.files.enabled, false);

		const get = await run(["get", "--json", "--approve", "files"]);
		assert.equal(get.code, 0, get.stderr);
		const got = JSON.parse(get.stdout) as { definitions: { scope: string }[] };
		assert.deepEqual(
			got.definitions.map((each) => each.scope),
			["user", "project"],
		);
		const typo = await run(["get", "filse"]);
		assert.equal(typo.code, 2);
		assert.match(typo.stderr, /no server "filse" in .*; did you mean "files"\?/);

		const removed = await run(["remove", "--scope", "project", "files"]);
		assert.equal(removed.code, 0, removed.stderr);
		assert.match(removed.stdout, /^Removed "files" from the project file /);
		assert.deepEqual((await readJson(box().projectFile)).mcpServers, {});
		const on = await run(["enable", "files"]);
		assert.equal(on.code, 0, on.stderr);
		assert.equal((await readJson(box().userFile)).mcpServers.files.enabled, undefined, "enabling removes the key");

		const commented = '{\n  // mine\n  "mcpServers": {}\n}\n';
		await writeFile(box().projectFile, commented);
		const refused = await run(["add", "--scope", "project", "x", "--", "cmd"]);
		assert.equal(refused.code, 2);
		assert.match(refused.stderr, /invalid JSON at line 2, column 3: comments are not allowed/);
		assert.equal(await readFile(box().projectFile, "utf8"), commented);
		await writeFile(box().projectFile, "{}");
	});

	test("import from Claude Desktop, Claude Code, Cursor, VS Code and Codex: only the file asked for", async () => {
		const { home, cwd, root } = box();
		const desktop = join(home, ".config", "Claude", "claude_desktop_config.json");
		await mkdir(join(desktop, ".."), { recursive: true });
		await writeFile(desktop, JSON.stringify({ mcpServers: { desk: { command: "desk-cmd", args: ["a"] } } }));
		await writeFile(
			join(cwd, ".mcp.json"),
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
		await mkdir(join(cwd, ".vscode"), { recursive: true });
		await writeFile(
			join(cwd, ".vscode", "mcp.json"),
			JSON.stringify({
				inputs: [],
				servers: {
					vs: { type: "stdio", command: "vs-cmd", args: ["${workspaceFolder}/x"] },
					asks: { type: "http", url: "https://x/mcp", headers: { K: "${input:key}" } },
				},
			}),
		);
		const codex = join(root, "codex.toml");
		await writeFile(
			codex,
			'model = "o3"\n[mcp_servers.cx]\ncommand = "cx-cmd"\nargs = ["-y"]\nenv = { CX = "1" }\n[mcp_servers.cx-http]\nurl = "https://cx.example/mcp"\nbearer_token_env_var = "CX_TOKEN"\n',
		);
		const desk = await run(["import", "claude-desktop"]);
		assert.equal(desk.code, 0, desk.stderr);
		const code = await run(["import", "claude-code"]);
		assert.equal(code.code, 1, "one server imported, one skipped");
		assert.match(code.stderr, /skipped "old": it uses the legacy SSE transport/);
		assert.equal((await run(["import", "cursor"])).code, 0);
		const vs = await run(["import", "vscode"]);
		assert.match(vs.stderr, /skipped "asks": field "headers\.K" uses a variable form pi-mcp cannot read/);
		assert.equal(vs.stderr.includes("input:key"), false, "a skipped entry's value is never quoted");
		const cx = await run(["import", "--json", "codex", codex]);
		assert.equal(cx.code, 0, cx.stderr);
		const servers = (await readJson(box().userFile)).mcpServers;
		const project = (await readJson(box().projectFile)).mcpServers;
		assert.deepEqual(servers.desk, { command: "desk-cmd", args: ["a"] });
		assert.equal(servers.code, undefined, "a project's own file goes to the project file");
		assert.deepEqual(project.code, { command: "code-cmd" });
		assert.deepEqual(servers.cur, { url: "https://cursor.example/mcp", headers: { Authorization: "Bearer ${CUR_TOKEN}" } });
		assert.deepEqual(project.vs, { command: "vs-cmd", args: [`${cwd}/x`] });
		assert.deepEqual(servers.cx, { command: "cx-cmd", args: ["-y"], env: { CX: "1" } });
		assert.deepEqual(servers["cx-http"], { url: "https://cx.example/mcp", auth: "bearer", bearerTokenEnv: "CX_TOKEN" });
		const twice = await run(["import", "claude-desktop"]);
		assert.match(twice.stderr, /skipped "desk": server "desk" already exists .*--force/);
		const missing = await run(["import", "cursor", join(root, "nope.json")]);
		assert.equal(missing.code, 2);
		assert.match(missing.stderr, /no file at .*nope\.json/);
	});

	test("import's exit code says what was written: some imported and some skipped exit 1; none imported exit 2", async () => {
		const file = join(box().root, "claude.json");
		await writeFile(
			file,
			JSON.stringify({ mcpServers: { fresh: { command: "fresh-cmd" }, stale: { type: "sse", url: "https://x/sse" } } }),
		);
		const partly = await run(["import", "claude-desktop", file]);
		assert.equal(partly.code, 1, partly.stderr);
		assert.match(partly.stdout, /Imported 1 of 2 servers/);
		assert.equal((await readJson(box().userFile)).mcpServers.fresh.command, "fresh-cmd");
		const none = await run(["import", "claude-desktop", file]);
		assert.equal(none.code, 2, none.stderr);
		assert.match(none.stdout, /Imported 0 of 2 servers/);
	});
});

describe("configuration slips are named", () => {
	test("list exits 2: VS Code's servers key, every unset variable, a misspelt field", async () => {
		await writeFile(box().userFile, JSON.stringify({ servers: { a: { command: "x" } } }));
		const vscode = await run(["list"]);
		assert.equal(vscode.code, 2);
		assert.match(vscode.stdout, /top-level key "servers" is VS Code's format \("servers"\); pi-mcp reads "mcpServers"/);
		await writeFile(
			box().userFile,
			JSON.stringify({
				mcpServer: {},
				mcpServers: {
					fixture: { command: "fixture-cmd" },
					vars: { command: "x", env: { A: "${UNSET_ONE}", B: "${UNSET_TWO}" } },
					typo: { cmd: "x", agrs: [] },
				},
			}),
		);
		const listed = await run(["list"]);
		assert.equal(listed.code, 2);
		assert.match(listed.stdout, /top-level key "mcpServer" is not used \(did you mean "mcpServers"\?\)/);
		assert.match(
			listed.stdout,
			/environment variables UNSET_ONE \(used in "env\.A"\), UNSET_TWO \(used in "env\.B"\) are not set/,
		);
		assert.match(listed.stdout, /"cmd" \(did you mean "command"\?\), "agrs" \(did you mean "args"\?\) are not supported/);
	});
});
