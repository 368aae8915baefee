/**
 * A fresh machine whose own `node` is older than Pi 1.6 needs (these machines start with Node 20):
 * the README's commands work with that `node` first on PATH, because the pinned `node` devDependency
 * is what npm puts first on PATH inside npm scripts. Also `npm start` and `pi-mcp` run on it.
 *
 * `npm ci` itself is not repeated here: `.ci/run` runs the real `npm ci` with the machine's Node
 * before this suite, and a second one costs about a minute on this machine (66 s measured, warm
 * cache) and would have to replace the checkout's node_modules. This test checks what `npm ci` left:
 * the pinned Node installed and linked, and the tree consistent for the old Node's npm.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";

const ROOT = new URL("..", import.meta.url).pathname;
const PINNED = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> })
	.devDependencies.node as string;

function versionOf(node: string): [number, number] | undefined {
	try {
		const [major = 0, minor = 0] = execFileSync(node, ["--version"], { encoding: "utf8" }).trim().slice(1).split(".").map(Number);
		return [major, minor];
	} catch {
		return undefined;
	}
}

/** A `node` older than 22.19 on this machine (outside node_modules), like `which -a node` finds. */
function oldNode(): string | undefined {
	const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/local/bin", "/usr/bin", "/bin"];
	return dirs
		.filter((dir) => dir && !dir.includes("node_modules"))
		.map((dir) => join(dir, "node"))
		.find((node) => {
			const version = existsSync(node) ? versionOf(node) : undefined;
			return version !== undefined && (version[0] < 22 || (version[0] === 22 && version[1] < 19));
		});
}

const OLD = oldNode();
const state: { home?: string } = {};
before(async () => {
	state.home = await mkdtemp(join(tmpdir(), "pi-mcp-fresh-"));
});
after(() => (state.home ? rm(state.home, { recursive: true, force: true }) : undefined));

/** A clean environment (no npm_* or NODE_OPTIONS from the outer `npm test`) with the old node first on PATH. */
function run(command: string, args: readonly string[]) {
	const env: Record<string, string> = {
		PATH: [dirname(OLD as string), "/usr/local/bin", "/usr/bin", "/bin"].join(delimiter),
		HOME: state.home as string,
		...(process.env.DBUS_SESSION_BUS_ADDRESS ? { DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS } : {}),
	};
	return spawnSync(command, args, { cwd: ROOT, env, encoding: "utf8", timeout: 180_000 });
}

describe("a machine whose node is older than 22.19", {
	skip: OLD === undefined && "no node older than 22.19 on this machine",
}, () => {
	test("that node is first on PATH; pi-mcp started directly with it names the Node it needs", () => {
		const version = run("node", ["--version"]);
		assert.match(version.stdout, /^v(1\d|20|21|22\.(1[0-8]|\d))\./, `the old node runs: ${version.stdout}`);
		const direct = run("node", [join(ROOT, "bin", "pi-mcp.mjs"), "list"]);
		assert.equal(direct.status, 1);
		assert.match(direct.stderr, /^pi-mcp: needs Node >= 22\.19, like Pi 1\.6 \(this is v/);
	});

	test("what npm ci installed: the pinned node, first on PATH inside npm", () => {
		const listed = run("npm", ["ls", "node", "--json"]);
		assert.equal(listed.status, 0, listed.stderr);
		const tree = JSON.parse(listed.stdout) as { dependencies?: { node?: { version?: string } } };
		assert.equal(tree.dependencies?.node?.version, PINNED);
		const inside = run("npm", ["exec", "--offline", "--", "node", "--version"]);
		assert.equal(inside.stdout.trim(), `v${PINNED}`);
	});

	test("npm run demo", () => {
		const demo = run("npm", ["run", "demo"]);
		assert.equal(demo.status, 0, `${demo.stdout}\n${demo.stderr}`);
		assert.doesNotMatch(demo.stderr, /needs Node/);
		assert.match(demo.stdout, /^ {4}hello-mcp-from-pi$/m);
		assert.match(demo.stdout, /^assistant> The example server turned the title into a slug and counted the words: 6 words/m);
	});

	test("npm test (one small file)", () => {
		const tested = run("npm", ["test", "--", "tests/fast/render.test.ts"]);
		assert.equal(tested.status, 0, `${tested.stdout}\n${tested.stderr}`);
		assert.match(tested.stdout, /^ℹ pass [1-9]\d*$/m);
		assert.match(tested.stdout, /^ℹ fail 0$/m);
	});

	test("npm start and pi-mcp run on the same pinned node", () => {
		const started = run("npm", ["start", "--silent", "--", "--version"]);
		assert.equal(started.status, 0, started.stderr);
		assert.match(started.stdout, /^1\.6\.\d+$/m);
		const doctor = run("npm", ["run", "--silent", "pi-mcp", "--", "doctor", "--json"]);
		const report = JSON.parse(doctor.stdout) as { environment: { name: string; ok: boolean; detail: string }[] };
		assert.deepEqual(report.environment[0], { name: "node", ok: true, detail: `v${PINNED}` });
	});
});
