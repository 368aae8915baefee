/**
 * Edits of mcp.json tried as an attacker and as a careful user would (#39), in one process (fast tier):
 * links planted where an edit writes, concurrent edits in one process, a symlinked file, an abandoned
 * lock, secrets in what edits print, entries kept byte for byte, an untrusted project file, the command
 * line's `--` and doctor's names. What needs processes of its own (edits from several processes, SIGTERM,
 * INIT_CWD, a FIFO) is tests/edit-safety.test.ts.
 */
import assert from "node:assert/strict";
import { lstat, mkdir, readdir, readFile, readlink, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { parseArgs } from "../../src/cli/args.ts";
import { runDoctor } from "../../src/cli/doctor.ts";
import { main } from "../../src/cli/main.ts";
import { addServer, MASK, maskedEntry, removeServer, secretHints, setEnabled } from "../../src/config/edit.ts";
import { loadConfig } from "../../src/config.ts";
import { type Dirs, withDirs, writeText } from "../helpers/config.ts";

const place = (dirs: Dirs) => ({ agentDir: dirs.agentDir, cwd: dirs.cwd, home: dirs.home, env: {} });

type Run = Readonly<{ code: number | null; stdout: string; stderr: string }>;

/** `pi-mcp` in this process. */
async function inProcess(dirs: Dirs, argv: readonly string[]): Promise<Run> {
	const out: string[] = [];
	const err: string[] = [];
	const io = {
		out: (text: string) => void out.push(text),
		err: (text: string) => void err.push(text),
		stdin: process.stdin,
		env: { PI_CODING_AGENT_DIR: dirs.agentDir, HOME: dirs.home },
		cwd: dirs.cwd,
	};
	const code = await main(argv, io);
	return { code, stdout: out.join(""), stderr: err.join("") };
}

describe("planted links and concurrent edits", () => {
	test("links at the old temporary name and at plausible names are never written through; mcp.json stays a file", async () => {
		await withDirs(async (dirs) => {
			const victim = join(dirs.home, "victim.txt");
			await writeFile(victim, "untouched\n");
			await writeText(dirs.projectPath, '{ "mcpServers": { "one": { "command": "node" } } }\n');
			const names = [
				`mcp.json.pi-mcp-${process.pid}.tmp`,
				"mcp.json.tmp",
				".mcp.json.tmp",
				"mcp.json~",
				"mcp.json.new",
				`.mcp.json.${process.pid}.tmp`,
			];
			for (const name of names) await symlink(victim, join(dirs.cwd, ".pi", name));
			await addServer(place(dirs), "project", "two", { command: "node", args: ["x.js"] });
			await setEnabled(place(dirs), "one", false, "project");
			await setEnabled(place(dirs), "one", true, "project");
			await removeServer(place(dirs), "two", "project");
			assert.equal(await readFile(victim, "utf8"), "untouched\n");
			assert.ok((await lstat(dirs.projectPath)).isFile(), "still a regular file, not a link");
			for (const name of names) assert.equal(await readlink(join(dirs.cwd, ".pi", name)), victim);
			const left = (await readdir(join(dirs.cwd, ".pi"))).filter((name) => !names.includes(name));
			assert.deepEqual(left, ["mcp.json"], "no temporary or lock file left behind");
		});
	});

	test("a link planted at the lock's name is refused, not followed or waited on", async () => {
		await withDirs(async (dirs) => {
			const victim = join(dirs.home, "victim.txt");
			await writeFile(victim, "untouched\n");
			await writeText(dirs.projectPath, '{ "mcpServers": {} }\n');
			await symlink(victim, `${dirs.projectPath}.lock`);
			await assert.rejects(addServer(place(dirs), "project", "two", { command: "node" }), /mcp\.json\.lock .*not a lock/);
			assert.equal(await readFile(victim, "utf8"), "untouched\n");
			assert.equal(await readFile(dirs.projectPath, "utf8"), '{ "mcpServers": {} }\n');
		});
	});

	test("the shell's enable/disable --scope project with links planted beside .pi/mcp.json (add: tests/edit-safety.test.ts)", async () => {
		await withDirs(async (dirs) => {
			const victim = join(dirs.home, ".bashrc");
			await writeFile(victim, "# mine\n");
			await writeText(dirs.projectPath, '{ "mcpServers": { "srv": { "command": "node", "args": ["s.js"] } } }\n');
			// The old predictable name held the pid of the process editing: this one.
			const planted = ["mcp.json.tmp", ".mcp.json.tmp", "mcp.json.swp", `mcp.json.pi-mcp-${process.pid}.tmp`];
			for (const name of planted) await symlink(victim, join(dirs.cwd, ".pi", name));
			for (const argv of [
				["disable", "--scope", "project", "srv"],
				["enable", "--scope", "project", "srv"],
			]) {
				const run = await inProcess(dirs, argv);
				assert.equal(run.code, 0, run.stderr);
				assert.equal(await readFile(victim, "utf8"), "# mine\n", `${argv[0]} wrote through a planted link`);
			}
			for (const name of planted) assert.equal(await readlink(join(dirs.cwd, ".pi", name)), victim);
			assert.ok((await lstat(dirs.projectPath)).isFile());
			assert.deepEqual(JSON.parse(await readFile(dirs.projectPath, "utf8")).mcpServers.srv, {
				command: "node",
				args: ["s.js"],
			});
		});
	});

	test("forty quick toggles and adds in one process: valid JSON holding every change", async () => {
		await withDirs(async (dirs) => {
			const names = Array.from({ length: 10 }, (_, i) => `s${i}`);
			await writeText(
				dirs.userPath,
				JSON.stringify({ mcpServers: Object.fromEntries(names.map((n) => [n, { command: "node" }])) }),
			);
			await Promise.all([
				...names.flatMap((name, i) => [
					setEnabled(place(dirs), name, false, "user"),
					setEnabled(place(dirs), name, i % 2 === 0, "user"),
				]),
				...names.map((name) => addServer(place(dirs), "user", `new-${name}`, { command: "node" })),
				...names.map((name) => setEnabled(place(dirs), name, false, "project")),
			]);
			const servers = JSON.parse(await readFile(dirs.userPath, "utf8")).mcpServers;
			// Enabling removes the key disabling wrote.
			for (const [i, name] of names.entries()) assert.equal(servers[name].enabled, i % 2 === 0 ? undefined : false, name);
			for (const name of names) assert.deepEqual(servers[`new-${name}`], { command: "node" });
			const project = JSON.parse(await readFile(dirs.projectPath, "utf8")).mcpServers;
			assert.deepEqual(Object.keys(project).sort(), [...names].sort());
		});
	});
});

describe("a symlinked mcp.json and an abandoned lock", () => {
	test("a symlinked user file (dotfiles) is edited at its target and stays a link; a dangling link is refused", async () => {
		await withDirs(async (dirs) => {
			const target = join(dirs.home, "dotfiles", "mcp.json");
			await writeText(target, '{ "mcpServers": {} }\n');
			await symlink(target, dirs.userPath);
			await addServer(place(dirs), "user", "one", { command: "node" });
			assert.ok((await lstat(dirs.userPath)).isSymbolicLink(), "still a link");
			assert.deepEqual(JSON.parse(await readFile(target, "utf8")).mcpServers.one, { command: "node" });
			const dangling = join(dirs.cwd, ".pi", "mcp.json");
			await mkdir(join(dirs.cwd, ".pi"));
			await symlink(join(dirs.home, "nowhere.json"), dangling);
			await assert.rejects(addServer(place(dirs), "project", "x", { command: "node" }), /symbolic link to .*nowhere\.json/);
			assert.ok((await lstat(dangling)).isSymbolicLink());
		});
	});

	test("a garbage mcp.json.lock older than a minute is abandoned: the shell's edit goes through and leaves no lock", async () => {
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, '{ "mcpServers": {} }\n');
			await writeFile(`${dirs.userPath}.lock`, "\u0000garbage, not JSON");
			const old = new Date(Date.now() - 120_000);
			await utimes(`${dirs.userPath}.lock`, old, old);
			const started = Date.now();
			const run = await inProcess(dirs, ["add", "x", "--", "node"]);
			assert.equal(run.code, 0, run.stderr);
			assert.ok(Date.now() - started < 20_000, "not the 30 s wait for a holder");
			assert.deepEqual(JSON.parse(await readFile(dirs.userPath, "utf8")).mcpServers.x, { command: "node" });
			assert.deepEqual(await readdir(dirs.agentDir).then((names) => names.filter((name) => name.includes("lock"))), []);
		});
	});
});

describe("what edits print and keep", () => {
	const webhook = "https://hooks.example.com/services/T0A1B2C3D/B0X9Y8Z7/q8Vd3kLm2PzR7tXw9YbN4cJf";

	test("one masking rule set: argument secrets, token-like URL path segments, userinfo; warnings name a project file", () => {
		const stdio = {
			command: "srv",
			args: ["--api-key", "sk-abc123", "--token=tok-xyz789", "--name", "plain", "--key", "${KEY}"],
		};
		assert.deepEqual(maskedEntry(stdio), {
			command: "srv",
			args: ["--api-key", MASK, `--token=${MASK}`, "--name", "plain", "--key", "${KEY}"],
		});
		assert.deepEqual(maskedEntry({ url: webhook }), { url: `https://hooks.example.com/services/T0A1B2C3D/B0X9Y8Z7/${MASK}` });
		assert.deepEqual(maskedEntry({ url: "https://example.com/mcp/v1/modelcontextprotocol" }), {
			url: "https://example.com/mcp/v1/modelcontextprotocol",
		});
		assert.deepEqual(secretHints(stdio, "project"), [
			'args[1] holds a literal value that looks like a secret (in the project file, which anyone with the repository can read): write "${API_KEY}" in its place and set API_KEY in the environment Pi runs in',
			'args[2] holds a literal value that looks like a secret (in the project file, which anyone with the repository can read): write "${TOKEN}" in its place and set TOKEN in the environment Pi runs in',
		]);
		assert.equal(secretHints({ url: webhook }).length, 1);
	});

	test("the runtime's redaction finds the same token in a URL's path", async () => {
		await withDirs(async (dirs) => {
			await writeText(
				dirs.userPath,
				JSON.stringify({ mcpServers: { hook: { url: webhook }, s: { command: "x", args: [webhook] } } }),
			);
			const loaded = await loadConfig({ ...place(dirs), trusted: false });
			for (const entry of loaded.servers) assert.ok(entry.config?.secretValues.includes("q8Vd3kLm2PzR7tXw9YbN4cJf"), entry.name);
		});
	});

	test("add, get, remove and import print no secret (text or --json); warnings come first and in both outputs", async () => {
		await withDirs(async (dirs) => {
			const secrets = ["sk-abc123", "tok-xyz789", "q8Vd3kLm2PzR7tXw9YbN4cJf"];
			const clean = (run: Run) => {
				for (const secret of secrets) assert.equal(`${run.stdout}${run.stderr}`.includes(secret), false, secret);
			};
			const added = await inProcess(dirs, [
				"add",
				"--scope",
				"project",
				"s",
				"--",
				"srv",
				"--api-key",
				"sk-abc123",
				"--token=tok-xyz789",
			]);
			assert.equal(added.code, 0, added.stderr);
			clean(added);
			assert.match(added.stderr, /^pi-mcp: warning: args\[1\] holds a literal value .*in the project file/);
			const json = await inProcess(dirs, ["add", "--json", "hook", "--url", webhook]);
			clean(json);
			assert.match(JSON.parse(json.stdout).warnings.join("\n"), /url holds a literal value that looks like a secret/);
			for (const argv of [
				["get", "--approve", "s"],
				["get", "--json", "hook"],
				["remove", "--json", "--scope", "project", "s"],
			]) {
				const run = await inProcess(dirs, argv);
				assert.equal(run.code, 0, run.stderr);
				clean(run);
			}
			for (const argv of [
				["add", "x", "-e", "sk-abc123", "--", "srv"],
				["add", "x", "--header", "tok-xyz789", "--url", "https://x/mcp"],
				["add", "x", "--api-key=sk-abc123", "--", "srv"],
			]) {
				const slip = await inProcess(dirs, argv);
				assert.equal(slip.code, 2);
				clean(slip);
			}
			const broken = join(dirs.home, "broken.json");
			await writeFile(broken, '{"mcpServers": {"x": {"command": "srv", "args": [--password sk-abc123]}}}');
			const toml = join(dirs.home, "broken.toml");
			await writeFile(toml, "[mcp_servers.x]\ncommand = sk-abc123\n");
			for (const [client, file] of [
				["cursor", broken],
				["codex", toml],
			] as const) {
				const refused = await inProcess(dirs, ["import", client, file]);
				assert.equal(refused.code, 2);
				assert.match(refused.stderr, /broken\.(json|toml): invalid (JSON|TOML) at line/);
				clean(refused);
			}
			const cursor = join(dirs.home, "cursor.json");
			await writeFile(
				cursor,
				JSON.stringify({
					mcpServers: {
						ok: { command: "srv", args: ["--password", "sk-abc123"] },
						bad: { url: "https://x/mcp", headers: { K: "${input:tok-xyz789}" } },
					},
				}),
			);
			const imported = await inProcess(dirs, ["import", "--json", "cursor", cursor]);
			clean(imported);
			const report = JSON.parse(imported.stdout);
			assert.equal(report.imported[0].runs, `srv --password ${MASK}`);
			assert.match(report.imported[0].warnings.join("\n"), /args\[1\] holds a literal value/);
			assert.deepEqual(report.skipped[0], {
				name: "bad",
				skipped: 'field "headers.K" uses a variable form pi-mcp cannot read',
			});
		});
	});

	test("adding and removing keep every other entry byte for byte; a one-line entry stays one line; text output is lines", async () => {
		await withDirs(async (dirs) => {
			const text =
				'{\n  "mcpServers": {\n    "one": { "command": "a", "args": ["x"] },\n    "two": {\n      "command": "b"\n    }\n  }\n}\n';
			await writeText(dirs.userPath, text);
			const added = await inProcess(dirs, ["add", "three", "--", "c", "y"]);
			assert.equal(added.code, 0, added.stderr);
			const after = await readFile(dirs.userPath, "utf8");
			assert.equal(
				after,
				'{\n  "mcpServers": {\n    "one": { "command": "a", "args": ["x"] },\n    "two": {\n      "command": "b"\n    },\n    "three": {\n      "command": "c",\n      "args": [\n        "y"\n      ]\n    }\n  }\n}\n',
			);
			assert.match(added.stdout, /:\n\{\n {2}"three": \{\n {4}"command": "c",/, "the entry as lines");
			assert.equal(added.stdout.includes("\\n"), false, "no literal \\n");
			await inProcess(dirs, ["remove", "three"]);
			assert.equal(await readFile(dirs.userPath, "utf8"), text);
			await inProcess(dirs, ["disable", "one"]);
			assert.match(
				await readFile(dirs.userPath, "utf8"),
				/"one": \{ "command": "a", "args": \["x"\], "enabled": false \},\n {4}"two": \{\n {6}"command": "b"\n {4}\}/,
			);
			await inProcess(dirs, ["remove", "one"]);
			assert.equal(
				await readFile(dirs.userPath, "utf8"),
				'{\n  "mcpServers": {\n    "two": {\n      "command": "b"\n    }\n  }\n}\n',
			);
			const got = await inProcess(dirs, ["get", "two"]);
			assert.equal(got.stdout, `two (user file ${dirs.userPath}):\n{\n  "two": {\n    "command": "b"\n  }\n}\nstate: enabled\n`);
		});
	});

	test("get and add's note never parse an untrusted project file; --approve reads it", async () => {
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, JSON.stringify({ mcpServers: { mine: { command: "node" } } }));
			await writeText(dirs.projectPath, '{ "mcpServers": { "mine": { "command": "evil" } }, broken');
			const got = await inProcess(dirs, ["get", "mine"]);
			assert.equal(got.code, 0, got.stderr);
			assert.equal(got.stdout.includes("evil"), false);
			assert.match(got.stderr, /note: the project file .* is read only with --approve/);
			const added = await inProcess(dirs, ["add", "other", "--", "node"]);
			assert.equal(added.code, 0, added.stderr);
			assert.equal(/project/.test(added.stderr), false, added.stderr);
			const approved = await inProcess(dirs, ["get", "--approve", "mine"]);
			assert.equal(approved.code, 2);
			assert.match(approved.stderr, /\.pi\/mcp\.json: invalid JSON/);
		});
	});

	test("import of the project's own .mcp.json goes to the project file unless --scope user, showing what each runs", async () => {
		await withDirs(async (dirs) => {
			await writeText(
				join(dirs.cwd, ".mcp.json"),
				JSON.stringify({ mcpServers: { repo: { command: "./run.sh", args: ["--fast"] } } }),
			);
			const run = await inProcess(dirs, ["import", "claude-code"]);
			assert.equal(run.code, 0, run.stderr);
			assert.match(run.stderr, /"repo" runs: \.\/run\.sh --fast/);
			assert.deepEqual(JSON.parse(await readFile(dirs.projectPath, "utf8")).mcpServers.repo, {
				command: "./run.sh",
				args: ["--fast"],
			});
			assert.equal((await lstat(dirs.userPath).catch(() => undefined)) === undefined, true, "the user file is not written");
			const user = await inProcess(dirs, ["import", "--scope", "user", "claude-code"]);
			assert.equal(user.code, 0, user.stderr);
			assert.ok(JSON.parse(await readFile(dirs.userPath, "utf8")).mcpServers.repo);
		});
	});
});

describe("the command line", () => {
	test("-- ends the options of every command", () => {
		assert.deepEqual(parseArgs(["search", "--", "--approve", "x"]).args, ["--approve", "x"]);
		assert.equal(parseArgs(["search", "--", "--approve", "x"]).flags.approve, false);
		assert.deepEqual(parseArgs(["call", "srv", "--", "--json", "{}"]).args, ["srv", "--json", "{}"]);
		assert.deepEqual(parseArgs(["get", "--", "--help"]).args, ["--help"]);
		assert.deepEqual(parseArgs(["--", "tools", "--approve"]).args, ["--approve"]);
		const add = parseArgs(["add", "x", "--", "cmd", "--token", "t"]);
		assert.deepEqual([add.args, add.rest], [["x"], ["cmd", "--token", "t"]]);
	});

	test("doctor escapes an invalid server name", async () => {
		const out: string[] = [];
		const name = "bad\u001b]0;owned\u0007\nFAKE ok";
		await runDoctor(
			{
				io: { out: (text) => out.push(text), err: (text) => out.push(text) },
				flags: { json: false },
				config: {
					servers: [{ name, source: { kind: "user", path: "/x" }, enabled: false, error: "invalid", ignoredKeys: [] }],
					files: [],
				},
				runtime: { tools: async () => [], status: () => [] },
				signal: new AbortController().signal,
			},
			async () => new Map(),
		);
		const text = out.join("");
		assert.equal(text.includes("\u001b"), false);
		assert.equal(/^FAKE/m.test(text), false);
		assert.match(text, /FAIL bad\\u001b\]0;owned\\u0007\\nFAKE ok: invalid/);
	});
});

test("a project file that leads outside the project (a linked .pi directory or mcp.json) is never edited", async () => {
	await withDirs(async (dirs) => {
		await writeText(dirs.userPath, '{ "mcpServers": {} }\n');
		await symlink(dirs.agentDir, join(dirs.cwd, ".pi"));
		await assert.rejects(
			addServer(place(dirs), "project", "x", { command: "node" }),
			/\.pi\/mcp\.json leads outside the project, to .*mcp\.json; edit that file itself; nothing was changed/,
		);
		assert.equal(await readFile(dirs.userPath, "utf8"), '{ "mcpServers": {} }\n', "the user's own file is untouched");
	});
	await withDirs(async (dirs) => {
		await writeText(dirs.userPath, '{ "mcpServers": { "u": { "command": "node" } } }\n');
		await mkdir(join(dirs.cwd, ".pi"));
		await symlink(dirs.userPath, dirs.projectPath);
		await assert.rejects(setEnabled(place(dirs), "u", false, "project"), /leads outside the project/);
		assert.equal(await readFile(dirs.userPath, "utf8"), '{ "mcpServers": { "u": { "command": "node" } } }\n');
	});
});
