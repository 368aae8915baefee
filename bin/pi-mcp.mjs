#!/usr/bin/env node
// `pi-mcp`: runs src/cli.ts through jiti, the TypeScript loader Pi itself loads extensions with.
// jiti is a dependency of Pi (a peer dependency of this package, so installed wherever pi-mcp is):
// no build step and no extra runtime dependency. tsx is only a devDependency here.
import { createRequire } from "node:module";

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
	process.stderr.write(`pi-mcp: needs Node >= 22.19, like Pi 1.6 (this is ${process.version}).\n`);
	process.exit(1);
}

const fromPi = createRequire(import.meta.resolve("@earendil-works/pi-coding-agent"));
const { createJiti } = fromPi("jiti");
const jiti = createJiti(import.meta.url, { moduleCache: true });
const { main } = await jiti.import(new URL("../src/cli/main.ts", import.meta.url).pathname);

const controller = new AbortController();
// The first Ctrl+C cancels what is running (servers are stopped); a second one exits at once.
process.once("SIGINT", () => {
	controller.abort();
	process.once("SIGINT", () => process.exit(130));
});
const code = await main(
	process.argv.slice(2),
	{
		out: (text) => process.stdout.write(text),
		err: (text) => process.stderr.write(text),
		stdin: process.stdin,
		env: process.env,
		cwd: process.cwd(),
	},
	controller.signal,
);
// Everything main started is stopped; exit without waiting for stdin or idle sockets.
process.exitCode = code;
process.stdout.write("", () => process.exit(code));
