/**
 * Sign-in end to end in the real Pi 1.6 (RPC mode, faux model) with the real parts: oidc-provider
 * as authorization server, an SDK v2 protected MCP server, the loopback receiver, and the OS
 * keyring (Secret Service; run under scripts/with-keyring.sh). The model calls a tool, gets one
 * link, the test completes the flow as a browser would, the completion message arrives, and the
 * retried call succeeds. No browser is launched; no secret reaches Pi's output.
 */
import assert from "node:assert/strict";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
// @ts-expect-error -- plain ESM fixture without types
import { browse } from "./fixtures/oauth/as.mjs";
// @ts-expect-error -- plain ESM fixture without types
import { startProtectedMcp } from "./fixtures/oauth/rs.mjs";
import { makeSandbox, type Sandbox, startPiRpc } from "./helpers/pi.ts";

type Rs = { mcpUrl: URL; tokensSeen: string[]; close(): Promise<void> };

const EXTENSION = new URL("../index.ts", import.meta.url).pathname;
const LAUNCHERS = ["xdg-open", "open", "sensible-browser", "x-www-browser", "www-browser", "gio"];
const state: { rs?: Rs; sandbox?: Sandbox; launchDir?: string } = {};

before(async () => {
	state.rs = (await startProtectedMcp()) as Rs;
	state.launchDir = await mkdtemp(join(tmpdir(), "pi-mcp-launchers-"));
	for (const name of LAUNCHERS) {
		const file = join(state.launchDir, name);
		await writeFile(file, `#!/bin/sh\necho "${name} $*" >> "${join(state.launchDir, "calls.log")}"\n`);
		await chmod(file, 0o755);
	}
});
after(async () => {
	await state.rs?.close();
	await state.sandbox?.cleanup();
	if (state.launchDir) await rm(state.launchDir, { recursive: true, force: true });
});

test("call → one link → the flow completes → the completion message arrives → the retried call succeeds", async (t) => {
	if (!process.env.DBUS_SESSION_BUS_ADDRESS) {
		t.skip("needs a Secret Service: run under scripts/with-keyring.sh (npm test does)");
		return;
	}
	const rs = state.rs as Rs;
	const launchDir = state.launchDir as string;
	const sandbox = await makeSandbox({
		DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS,
		PATH: `${launchDir}:${process.env.PATH}`,
		BROWSER: join(launchDir, "xdg-open"),
	});
	state.sandbox = sandbox;
	// A unique server name: the keyring record is keyed by name + endpoint, and the keyring may be shared.
	const server = `secure${process.pid}`;
	await writeFile(
		join(sandbox.agentDir, "mcp.json"),
		JSON.stringify({ mcpServers: { [server]: { url: rs.mcpUrl.href, auth: "oauth" } } }),
	);
	const call = { tool: "mcp", args: { action: "call", server, tool: "whoami", args: {} } };
	const rpc = await startPiRpc({
		sandbox,
		extensions: [EXTENSION],
		script: [call, { text: "WAITING {{last}}" }, call, { text: "DONE {{last}}" }],
		timeoutMs: 90_000,
	});
	try {
		const first = await rpc.prompt("who am I on the secure server?");
		const firstText = JSON.stringify(first.events);
		assert.match(firstText, /authorization_required: MCP server \\"secure\d+\\" needs sign-in/);
		const links = [...new Set(firstText.match(/https?:\/\/127\.0\.0\.1:\d+\/[^\s"\\]*auth[^\s"\\]*/g) ?? [])];
		assert.equal(links.length, 1, `exactly one authorization link: ${links.join(" ")}`);
		assert.match(firstText, /Do not open the link yourself/);

		// The user opens the link: log in, consent, and the browser lands on our loopback receiver.
		const browsed = (await browse(links[0], { deliver: true })) as { redirect: URL; response?: { status: number; body: string } };
		assert.equal(browsed.response?.status, 200, browsed.response?.body);
		assert.match(browsed.redirect.href, /^http:\/\/127\.0\.0\.1:\d+\/callback\?/);

		// The completion message starts a turn in which the model retries the call.
		// Until the turn that answers "DONE …" has settled (its text streams in several records).
		const answered = { value: false };
		await rpc.until(
			"the retried call's answer",
			(record) => {
				answered.value ||= JSON.stringify(record).includes("DONE");
				return (answered.value && record.type === "agent_settled") || undefined;
			},
			30_000,
		);
		const all = JSON.stringify(rpc.records);
		assert.match(all, /Signed in to MCP server \\"secure\d+\\"/);
		assert.match(all, /DONE \{\\"clientId\\":/, "the retried call succeeded");
		assert.match(all, /\\"sub\\":\\"alice\\"/);
		for (const token of rs.tokensSeen) assert.equal(all.includes(token), false, "no access token in Pi's output");
	} finally {
		const closed = await rpc.close();
		assert.equal(closed.code, 0);
		assert.doesNotMatch(closed.stderr, /Extension error/);
		for (const token of rs.tokensSeen) assert.equal(closed.stderr.includes(token), false, "no access token on stderr");
	}
	const launched = await readFile(join(launchDir, "calls.log"), "utf8").catch(() => "");
	assert.equal(launched, "", "no browser launcher was called");
});
