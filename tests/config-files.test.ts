/**
 * A configuration file that cannot be read reaches the model (issue 13): a directory and a FIFO where a
 * file should be (the FIFO made with `mkfifo`, a process of its own), and the wrong root type. The rest
 * of the configuration-file checks run in one process: tests/fast/config-files.test.ts.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runAction } from "../src/catalog/actions.ts";
import type { Result } from "../src/catalog/listing.ts";
import type { Session } from "../src/contracts.ts";
import { SessionOwner } from "../src/session.ts";
import { type Dirs, load, withDirs, writeText } from "./helpers/config.ts";

describe("unreadable files reach the model", () => {
	async function withSession(dirs: Dirs, fn: (session: Session) => Promise<void>): Promise<void> {
		const config = await load(dirs);
		const owner = new SessionOwner({ config, env: {}, agentDir: dirs.home, overflowDir: dirs.home });
		try {
			await fn(await owner.open());
		} finally {
			await owner.dispose();
		}
	}
	const textOf = (result: Result) => (result.content[0]?.type === "text" ? result.content[0].text : "");

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
