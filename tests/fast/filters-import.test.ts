/**
 * `pi-mcp import`, fast (main() in this process; an import starts no server): other clients' tool filters
 * come over as `includeTools` / `excludeTools`. The filters on real servers, in Pi and in the other shell
 * commands are in tests/filters.test.ts.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { withDirs } from "../helpers/config.ts";
import { shell } from "../helpers/shell.ts";

test("import carries Codex enabled_tools/disabled_tools and Gemini includeTools/excludeTools over", async () => {
	await withDirs(async (dirs) => {
		const place = { env: { PI_CODING_AGENT_DIR: dirs.agentDir, HOME: dirs.home }, cwd: dirs.cwd, root: dirs.home };
		const codex = join(dirs.home, "codex.toml");
		await writeFile(codex, '[mcp_servers.cx]\ncommand = "x"\nenabled_tools = ["read_*"]\ndisabled_tools = ["read_secret"]\n');
		const fromCodex = await shell(place, ["import", "codex", codex]);
		assert.equal(fromCodex.code, 0, fromCodex.stderr);
		const gemini = join(dirs.home, "settings.json");
		const servers = {
			gm: { command: "y", includeTools: ["a", "b"], excludeTools: ["b"], trust: true, timeout: 5000 },
			web: { httpUrl: "https://example.com/mcp" },
			old: { url: "https://example.com/sse" },
		};
		await writeFile(gemini, JSON.stringify({ mcpServers: servers }));
		const fromGemini = await shell(place, ["import", "gemini", gemini]);
		assert.match(fromGemini.stderr, /skipped "old": it uses the legacy SSE transport/);
		assert.match(fromGemini.stderr, /not imported: "trust"/);
		const written = JSON.parse(await readFile(join(dirs.agentDir, "mcp.json"), "utf8")).mcpServers;
		assert.deepEqual(written.cx, { command: "x", includeTools: ["read_*"], excludeTools: ["read_secret"] });
		assert.deepEqual(written.gm, { command: "y", includeTools: ["a", "b"], excludeTools: ["b"], requestTimeoutMs: 5000 });
		assert.deepEqual(written.web, { url: "https://example.com/mcp", type: "http" });
	});
});
