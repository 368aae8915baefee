#!/usr/bin/env node
// `pi-mcp`: runs src/cli/main.ts through jiti, the TypeScript loader Pi itself loads extensions with.
// jiti is a dependency of Pi (a peer dependency of this package, so installed wherever pi-mcp is):
// no build step and no extra runtime dependency. tsx is only a devDependency here.
import { randomUUID } from "node:crypto";
import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
	process.stderr.write(`pi-mcp: needs Node >= 22.19, like Pi 1.6 (this is ${process.version}).\n`);
	process.exit(1);
}

// Every server process of this run carries the mark, so that none outlives the run (see sweep).
const mark = randomUUID();
const controller = new AbortController();
const loaded = { sweep: undefined };
// The first Ctrl+C (or SIGTERM, SIGHUP) cancels what is running and stops the servers; a second
// one exits at once, after killing every process that carries this run's mark.
for (const name of ["SIGINT", "SIGTERM", "SIGHUP"]) {
	process.on(name, () => {
		if (!controller.signal.aborted) {
			controller.abort();
			return;
		}
		loaded.sweep?.(mark);
		process.exit(130);
	});
}

const fromPi = createRequire(import.meta.resolve("@earendil-works/pi-coding-agent"));
const { createJiti } = fromPi("jiti");
const jiti = createJiti(import.meta.url, { moduleCache: true });
const { main, sweep } = await jiti.import(new URL("../src/cli/main.ts", import.meta.url).pathname);
loaded.sweep = sweep;

// `npm run pi-mcp` in this package runs in the package's directory; the user's is INIT_CWD (npm sets
// it). Only then: any other npm script (or a shell npm started) has its own reasons for its directory.
const real = (path) => {
	try {
		return realpathSync(path);
	} catch {
		return undefined;
	}
};
const { npm_lifecycle_event: event, npm_package_json: manifest, INIT_CWD: initCwd } = process.env;
const ownManifest = real(fileURLToPath(new URL("../package.json", import.meta.url)));
const fromOwnScript = event === "pi-mcp" && manifest !== undefined && real(manifest) === ownManifest && initCwd;
const cwd = fromOwnScript ? initCwd : process.cwd();
const code = await main(
	process.argv.slice(2),
	{
		out: (text) => process.stdout.write(text),
		err: (text) => process.stderr.write(text),
		stdin: process.stdin,
		env: process.env,
		cwd,
	},
	controller.signal,
	mark,
);
sweep(mark);
// Everything main started is stopped; exit without waiting for stdin or idle sockets.
process.exitCode = code;
process.stdout.write("", () => process.exit(code));
