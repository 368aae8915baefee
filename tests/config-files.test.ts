// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in plain strings is the mcp.json syntax under test.
/**
 * Configuration files (issue 13) where real parts are the point: servers with problems known at session
 * start name a real fixture server that must never start, and a configuration file that cannot be read
 * (a directory, a FIFO made with `mkfifo`, the wrong root type) reaches the model. The rest of the
 * configuration-file checks run in one process: tests/fast/config-files.test.ts.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runAction } from "../src/catalog/actions.ts";
import { SessionOwner } from "../src/session.ts";
import { entryOf, load, textOf, withDirs, withSession, writeText, writeUser } from "./helpers/config.ts";
import { readWire, SERVER } from "./helpers/servers.ts";

describe("problems known at session start", () => {
	it("status shows such a server as invalid with the problem before any call; the call is a tool error and nothing runs", async () => {
		await withDirs(async (dirs) => {
			const log = join(dirs.home, "wire.log");
			const fixture = { command: process.execPath, args: [SERVER, "stdio"], env: { FIXTURE_LOG: log } };
			// A directory literally named `${NO_DIR}` exists: before, the server started in it.
			await mkdir(join(dirs.cwd, "${NO_DIR}"));
			await writeUser(dirs, {
				vars: { ...fixture, cwd: "${NO_DIR}" },
				bang: { ...fixture, cwd: "!pwd" },
				nul: { ...fixture, args: [SERVER, "stdio", "a\u0000b"] },
			});
			const config = await load(dirs);
			const owner = new SessionOwner({ config, env: {}, agentDir: dirs.home, overflowDir: dirs.home });
			const session = await owner.open();
			try {
				const status = await runAction(session, { action: "status" }, undefined, undefined);
				const text = status.content[0]?.type === "text" ? status.content[0].text : "";
				assert.match(
					text,
					/^vars: invalid\n {2}error: server "vars" \(.*\): environment variable NO_DIR is not set \(used in "cwd"\)$/m,
				);
				assert.match(text, /^bang: invalid\n {2}error: server "bang" \(.*\): field "cwd" starts with "!"/m);
				assert.match(text, /^nul: invalid\n {2}error: server "nul" \(.*\): field "args\[2\]" contains a NUL byte$/m);
				for (const server of ["vars", "bang", "nul"]) {
					await assert.rejects(
						runAction(session, { action: "call", server, tool: "echo", args: {} }, undefined, undefined),
						(error: Error) => error.message === entryOf(config, server).error,
					);
				}
				assert.deepEqual(readWire(log), [], "no server process was started");
			} finally {
				await owner.dispose();
			}
		});
	});
});

describe("unreadable files reach the model", () => {
	it("with no server at all, status still names the broken file (a directory, a FIFO, the wrong root type)", async () => {
		await withDirs(async (dirs) => {
			await mkdir(dirs.userPath, { recursive: true });
			await mkdir(join(dirs.cwd, ".pi"), { recursive: true });
			execFileSync("mkfifo", [dirs.projectPath]);
			await withSession(dirs, async (session) => {
				const status = textOf(await runAction(session, { action: "status" }, undefined, undefined));
				assert.equal(
					status,
					[
						"No MCP servers are configured.",
						"Configuration files that could not be read (their servers are missing):",
						`  ${dirs.userPath}: is a directory, not a file`,
						`  ${dirs.projectPath}: is a FIFO (named pipe), not a file`,
					].join("\n"),
				);
			});
		});
		await withDirs(async (dirs) => {
			await writeText(dirs.userPath, "[]");
			await withSession(dirs, async (session) => {
				await assert.rejects(runAction(session, { action: "tools", server: "x" }, undefined, undefined), {
					message: `unknown MCP server "x"; configured: none (add servers to mcp.json). A configuration file could not be read, so its servers are missing: ${dirs.userPath}: the top level must be an object`,
				});
			});
		});
	});
});
