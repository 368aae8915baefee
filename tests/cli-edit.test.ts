/**
 * `src/config/edit.ts` against real files: entries added, replaced, removed, enabled and disabled in
 * place (the rest of the file byte for byte as written), results checked as loading checks them, and
 * nothing written when an edit is refused.
 */
import assert from "node:assert/strict";
import { readFile, stat } from "node:fs/promises";
import { test } from "node:test";
import {
	addServer,
	EditError,
	findDefiningFile,
	MASK,
	maskedEntry,
	removeServer,
	secretHints,
	setEnabled,
} from "../src/config/edit.ts";
import { loadConfig } from "../src/config.ts";
import { closeMatches } from "../src/schema.ts";
import { type Dirs, withDirs, writeText } from "./helpers/config.ts";

const place = (dirs: Dirs, env: Record<string, string> = {}) => ({
	agentDir: dirs.agentDir,
	cwd: dirs.cwd,
	home: dirs.home,
	env,
});

/** A user file written by hand: tabs, a top-level key before mcpServers, one-line entries, CRLF-free. */
const HAND_WRITTEN = `{
\t"autoEnableCodemode": false,
\t"mcpServers": {
\t\t"alpha": {
\t\t\t"command": "node",
\t\t\t"args": ["a.js"]
\t\t},
\t\t"beta": {
\t\t\t"url": "https://example.com/mcp",
\t\t\t"disabled": true
\t\t}
\t}
}
`;

const refused = (code: string, pattern: RegExp) => (error: unknown) =>
	error instanceof EditError && error.code === code && pattern.test(error.message);

test("add: a new entry goes last in mcpServers, the rest of the file is unchanged, and the result loads", async () => {
	await withDirs(async (dirs) => {
		await writeText(dirs.userPath, HAND_WRITTEN);
		const change = await addServer(place(dirs), "user", "gamma", { command: "node", args: ["g.js"], env: { A: "${A_VAR}" } });
		assert.equal(change.action, "added");
		assert.equal(change.path, dirs.userPath);
		assert.deepEqual(change.warnings, [
			"environment variable A_VAR is not set here; the entry keeps ${A_VAR} and Pi reads it at each session",
		]);
		const text = await readFile(dirs.userPath, "utf8");
		assert.ok(text.startsWith(HAND_WRITTEN.slice(0, HAND_WRITTEN.indexOf('\t\t"beta"'))), text);
		assert.match(text, /\t\t"gamma": \{\n\t\t\t"command": "node",/, "indented with the file's tabs");
		assert.deepEqual(Object.keys(JSON.parse(text).mcpServers), ["alpha", "beta", "gamma"]);
		assert.equal(JSON.parse(text).autoEnableCodemode, false);
		const loaded = await loadConfig({ ...place(dirs, { A_VAR: "x" }), trusted: false });
		assert.equal(loaded.servers.find((entry) => entry.name === "gamma")?.config?.env.A, "x");

		await assert.rejects(
			addServer(place(dirs), "user", "alpha", { command: "x" }),
			refused("exists", /already exists in .*pass --force/),
		);
		const forced = await addServer(place(dirs), "user", "alpha", { command: "other" }, { force: true });
		assert.equal(forced.action, "replaced");
		assert.deepEqual(forced.before, { command: "node", args: ["a.js"] });
		assert.deepEqual(JSON.parse(await readFile(dirs.userPath, "utf8")).mcpServers.alpha, { command: "other" });
	});
});

test("add: a new file is created 0600 with two-space indentation; an entry that would not load is refused and nothing written", async () => {
	await withDirs(async (dirs) => {
		await addServer(place(dirs), "user", "one", { url: "https://example.com/mcp" });
		assert.equal((await stat(dirs.userPath)).mode & 0o777, 0o600);
		assert.equal(
			await readFile(dirs.userPath, "utf8"),
			'{\n  "mcpServers": {\n    "one": {\n      "url": "https://example.com/mcp"\n    }\n  }\n}\n',
		);
		const before = await readFile(dirs.userPath, "utf8");
		await assert.rejects(
			addServer(place(dirs), "user", "two", { url: "http://example.com/mcp" }),
			refused(
				"invalid-entry",
				/server "two" \(.*mcp\.json\): field "url" uses http: to a non-loopback host; use https:.*; nothing was changed/,
			),
		);
		await assert.rejects(addServer(place(dirs), "user", "three", { cmd: "x" }), refused("invalid-entry", /"cmd"|command/));
		await assert.rejects(addServer(place(dirs), "user", "bad name", { command: "x" }), refused("invalid-name", /not allowed/));
		assert.equal(await readFile(dirs.userPath, "utf8"), before);
	});
});

test("a file with comments (which Pi's JSON.parse refuses) is never edited: the error names the line", async () => {
	await withDirs(async (dirs) => {
		const text = '{\n  // my servers\n  "mcpServers": {}\n}\n';
		await writeText(dirs.userPath, text);
		await assert.rejects(
			addServer(place(dirs), "user", "x", { command: "x" }),
			refused("invalid-file", /mcp\.json: invalid JSON at line 2, column 3: comments are not allowed.*fix the file first/),
		);
		assert.equal(await readFile(dirs.userPath, "utf8"), text);
	});
});

test("remove / enable / disable edit the defining file; both files → scope needed; unknown names get close matches", async () => {
	await withDirs(async (dirs) => {
		await writeText(dirs.userPath, HAND_WRITTEN);
		await writeText(
			dirs.projectPath,
			JSON.stringify({ mcpServers: { alpha: { command: "p" }, local: { command: "l" } } }, null, 2),
		);
		await assert.rejects(
			removeServer(place(dirs), "alpha"),
			refused("ambiguous", /defined in both .* --scope user or --scope project/),
		);
		await assert.rejects(
			removeServer(place(dirs), "alhpa"),
			refused("unknown", /no server "alhpa" in .*; did you mean "alpha"\?/),
		);
		const removed = await removeServer(place(dirs), "alpha", "project");
		assert.equal(removed.path, dirs.projectPath);
		assert.deepEqual(JSON.parse(await readFile(dirs.projectPath, "utf8")).mcpServers, { local: { command: "l" } });
		assert.equal(await readFile(dirs.userPath, "utf8"), HAND_WRITTEN, "the user file is untouched");

		const enabled = await setEnabled(place(dirs), "beta", true);
		assert.equal(enabled.action, "enabled");
		assert.equal(enabled.path, dirs.userPath);
		const beta = JSON.parse(await readFile(dirs.userPath, "utf8")).mcpServers.beta;
		assert.deepEqual(beta, { url: "https://example.com/mcp" }, "the contradicting disabled key goes; nothing is added");
		assert.equal((await setEnabled(place(dirs), "beta", true)).action, "unchanged");
		const on = await readFile(dirs.userPath, "utf8");
		const disabled = await setEnabled(place(dirs), "alpha", false);
		assert.deepEqual(disabled.after, { command: "node", args: ["a.js"], enabled: false });
		const reenabled = await setEnabled(place(dirs), "alpha", true, "user");
		assert.deepEqual(reenabled.after, { command: "node", args: ["a.js"] });
		assert.equal(await readFile(dirs.userPath, "utf8"), on, "enabling removes the key disabling wrote: the file is as it was");

		// A project-only switch of a user entry: an override entry in the project file.
		const override = await setEnabled(place(dirs), "alpha", true, "project");
		assert.equal(override.path, dirs.projectPath);
		assert.deepEqual(JSON.parse(await readFile(dirs.projectPath, "utf8")).mcpServers.alpha, { enabled: true });
		const loaded = await loadConfig({ ...place(dirs), trusted: true });
		assert.equal(loaded.servers.find((entry) => entry.name === "alpha")?.enabled, true);
	});
});

test("servers registered by an extension are not editable", async () => {
	await withDirs(async (dirs) => {
		const snapshot = await loadConfig({
			...place(dirs),
			trusted: false,
			extensionServers: [{ name: "ext", config: { command: "x" }, extensionPath: "/ext/index.ts" }],
		});
		await assert.rejects(
			findDefiningFile(place(dirs), "ext", undefined, snapshot),
			refused("extension", /registered by the extension \/ext\/index\.ts.*cannot be edited/),
		);
	});
});

test("masking shows ${VAR} references only; literal secrets get a hint", () => {
	const entry = {
		url: "https://example.com/mcp?token=abc",
		headers: { Authorization: "Bearer ${TOKEN}", "X-Api-Key": "literal-secret-value" },
		env: { PLAIN: "1", GITHUB_TOKEN: "ghp_123" },
	};
	assert.deepEqual(maskedEntry(entry), {
		url: `https://example.com/mcp?token=${MASK}`,
		headers: { Authorization: "Bearer ${TOKEN}", "X-Api-Key": MASK },
		env: { PLAIN: MASK, GITHUB_TOKEN: MASK },
	});
	assert.deepEqual(secretHints(entry), [
		'env.GITHUB_TOKEN holds a literal value that looks like a secret: store "${GITHUB_TOKEN}" instead and set GITHUB_TOKEN in the environment Pi runs in',
		'headers.X-Api-Key holds a literal value that looks like a secret: store "${X_API_KEY}" instead and set X_API_KEY in the environment Pi runs in',
		'url holds a literal value that looks like a secret (a credential, a query value or a token in its path): write "${VAR}" in its place and set VAR in the environment Pi runs in',
	]);
	assert.deepEqual(secretHints({ env: { AUTHOR: "me" } }), [], "AUTHOR is not AUTH");
});

test("closeMatches: typos and case slips, nearest first; unrelated words none", () => {
	assert.deepEqual(closeMatches("fixtrue", ["fixture", "broken", "off"]), ["fixture"]);
	assert.deepEqual(closeMatches("My_Server", ["my-server", "other"]), ["my-server"]);
	assert.deepEqual(closeMatches("zzz", ["fixture", "broken"]), []);
});

test("an entry nested 200,000 levels deep: an edit is refused by name and field, and the file is left as it was", async () => {
	await withDirs(async (dirs) => {
		const depth = 200_000;
		const text = `{"mcpServers": {"deep": {"command": "node", "args": ${"[".repeat(depth)}${"]".repeat(depth)}}, "ok": {"command": "node"}}}`;
		await writeText(dirs.userPath, text);
		await assert.rejects(
			setEnabled(place(dirs), "ok", false, "user"),
			refused("invalid-file", /server "deep" field "args" nests deeper than 64 levels/),
		);
		assert.equal(await readFile(dirs.userPath, "utf8"), text);
	});
});
