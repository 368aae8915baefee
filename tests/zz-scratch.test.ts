import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { makeSandbox, runPiPrint } from "./helpers/pi.ts";
import { FIXTURES } from "./helpers/servers.ts";
const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
test("scratch", async () => {
	const sandbox = await makeSandbox();
	const notes = { command: process.execPath, args: [join(FIXTURES, "user-server.mjs")] };
	await writeFile(join(sandbox.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { notes } }));
	for (const prompt of ["/mcp prompt notes hello", "/mcp prompt notse hello"]) {
		const r = await runPiPrint({ sandbox, extensions: [EXTENSION], script: [{ text: "MODEL SAW: {{user}}" }], prompt });
		console.log(JSON.stringify({ prompt, code: r.code, stdout: r.stdout, stderr: r.stderr }));
	}
	await sandbox.cleanup();
});
