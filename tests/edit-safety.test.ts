/**
 * Edits of mcp.json (#39, and #41's per-tool edit) where processes of their own are the point: the shell
 * writing beside links planted with its pid in their name, edits from several `pi-mcp` processes waiting
 * for one lock, SIGTERM while waiting, INIT_CWD, and a FIFO given to `import`. Everything one process can
 * show (links, concurrent edits in one process, masking, byte-for-byte entries, an abandoned lock, `--`,
 * doctor's names) is the fast tier's tests/fast/edit-safety.test.ts and tests/fast/tool-edit-safety.test.ts.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { lstat, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { main } from "../src/cli/main.ts";
import { acquireLock } from "../src/store.ts";
import { type Dirs, withDirs, writeText } from "./helpers/config.ts";
import { makeSandbox, type Sandbox } from "./helpers/pi.ts";

const BIN = new URL("../bin/pi-mcp.mjs", import.meta.url).pathname;

type Run = Readonly<{ code: number | null; stdout: string; stderr: string }>;

/** `pi-mcp` in its own process; `onStderr` sees stderr as it comes. */
function spawned(box: Sandbox, argv: readonly string[], env: Record<string, string> = {}, onStderr?: (text: string) => void) {
	const child = spawn(process.execPath, [BIN, ...argv], { cwd: box.cwd, env: { ...box.env, TMPDIR: box.root, ...env } });
	const out: Buffer[] = [];
	const err: Buffer[] = [];
	child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
	child.stderr.on("data", (chunk: Buffer) => {
		err.push(chunk);
		onStderr?.(Buffer.concat(err).toString("utf8"));
	});
	const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
	const done = new Promise<Run>((resolve) =>
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
		}),
	);
	return { child, done };
}

async function withBox(fn: (box: Sandbox) => Promise<void>): Promise<void> {
	const box = await makeSandbox();
	try {
		await fn(box);
	} finally {
		await box.cleanup();
	}
}

test("the shell's add --scope project beside links planted with its pid; INIT_CWD from another npm script is ignored", async () => {
	await withBox(async (box) => {
		const projectPath = join(box.cwd, ".pi", "mcp.json");
		const victim = join(box.home, ".bashrc");
		await writeFile(victim, "# mine\n");
		await writeText(projectPath, "{}\n");
		const planted = ["mcp.json.tmp", ".mcp.json.tmp", "mcp.json.swp"];
		for (const name of planted) await symlink(victim, join(box.cwd, ".pi", name));
		// INIT_CWD counts only when this package's own npm script started the command, not `npm test` elsewhere.
		const elsewhere = join(box.root, "elsewhere");
		const theirs = JSON.stringify({ mcpServers: { far: { command: "node" } } });
		await writeText(join(elsewhere, ".pi", "mcp.json"), theirs);
		const started = spawned(box, ["add", "--scope", "project", "srv", "--", "node", "s.js"], {
			npm_lifecycle_event: "test",
			INIT_CWD: elsewhere,
		});
		// The old predictable name holds the child's pid: planted before it has even loaded.
		const old = join(box.cwd, ".pi", `mcp.json.pi-mcp-${started.child.pid}.tmp`);
		await symlink(victim, old);
		const run = await started.done;
		assert.equal(run.code, 0, run.stderr);
		assert.equal(await readFile(victim, "utf8"), "# mine\n", "add wrote through a planted link");
		assert.equal(await readlink(old), victim);
		assert.ok((await lstat(projectPath)).isFile());
		assert.deepEqual(JSON.parse(await readFile(projectPath, "utf8")).mcpServers.srv, { command: "node", args: ["s.js"] });
		assert.equal(await readFile(join(elsewhere, ".pi", "mcp.json"), "utf8"), theirs, "not the project INIT_CWD names");
	});
});

test("pi-mcp edits wait for another's lock: a SIGTERMed add and tool disable exit 130 having written nothing; three adds released at once all land", async () => {
	await withBox(async (box) => {
		const user = join(box.agentDir, "mcp.json");
		const before = '{ "mcpServers": { "s": { "command": "node" } } }\n';
		await writeFile(user, before);
		const lock = await acquireLock(`${user}.lock`);
		/** Starts `argv`s at once; `waiting` resolves when each has said it waits for the lock (then `onWait`). */
		const waitingOnes = (argvs: readonly (readonly string[])[], onWait: (child: ChildProcess) => void) => {
			const said = new Set<number>();
			let everyoneWaits!: () => void;
			const waiting = new Promise<void>((resolve) => {
				everyoneWaits = resolve;
			});
			const runs = argvs.map((argv) => {
				const started = spawned(box, argv, {}, (text) => {
					if (!/waiting for another edit/.test(text) || said.has(started.child.pid as number)) return;
					said.add(started.child.pid as number);
					onWait(started.child);
					if (said.size === argvs.length) everyoneWaits();
				});
				return started.done;
			});
			return { waiting, runs };
		};
		const names = ["a1", "a2", "a3"];
		try {
			const stopped = waitingOnes(
				[
					["add", "x", "--", "node"],
					["disable", "s", "delete_file", "--force"],
				],
				(child) => child.kill("SIGTERM"),
			);
			await stopped.waiting;
			for (const run of await Promise.all(stopped.runs)) {
				assert.equal(run.code, 130, run.stderr);
				assert.match(run.stderr, /interrupted/);
			}
			assert.equal(await readFile(user, "utf8"), before, "nothing written");
			// Three edits wait for the lock, then race for it the moment it is released.
			const adds = waitingOnes(
				names.map((name) => ["add", name, "--", "node", `${name}.js`]),
				() => undefined,
			);
			await adds.waiting;
			await lock.release();
			for (const run of await Promise.all(adds.runs)) assert.equal(run.code, 0, run.stderr);
		} finally {
			await lock.release();
		}
		const servers = JSON.parse(await readFile(user, "utf8")).mcpServers;
		assert.deepEqual(Object.keys(servers).sort(), [...names, "s"]);
		assert.deepEqual(servers.s, { command: "node" }, "the stopped disable wrote no excludeTools");
	});
});

test("import from a FIFO is refused at once (no hang); a file over 1 MiB too", async () => {
	await withDirs(async (dirs: Dirs) => {
		const fifo = join(dirs.home, "fifo.json");
		execFileSync("mkfifo", [fifo]);
		const io = (err: string[]) => ({
			out: () => undefined,
			err: (text: string) => void err.push(text),
			stdin: process.stdin,
			env: { PI_CODING_AGENT_DIR: dirs.agentDir, HOME: dirs.home },
			cwd: dirs.cwd,
		});
		const err: string[] = [];
		assert.equal(await main(["import", "cursor", fifo], io(err)), 2, err.join(""));
		assert.match(err.join(""), /fifo\.json is a FIFO \(named pipe\), not a file/);
		const big = join(dirs.home, "big.json");
		await writeFile(big, `{"mcpServers":{},"pad":"${"x".repeat(1024 * 1024)}"}`);
		const large: string[] = [];
		assert.equal(await main(["import", "cursor", big], io(large)), 2);
		assert.match(large.join(""), /big\.json is larger than 1048576 bytes/);
	});
});
