/**
 * Preloaded into the fast tier's test files (`npm run test:fast`, scripts/test.mjs): any child process a
 * fast test starts, directly or through the SDK's stdio transport, fails at once naming the command.
 * Only where the tests run: the one process of `--experimental-test-isolation=none` (how scripts/test.mjs runs
 * the fast tier), or a test runner's child (NODE_TEST_CONTEXT), so a runner that runs files apart still starts them.
 */
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";

if (process.env.NODE_TEST_CONTEXT || process.execArgv.includes("--experimental-test-isolation=none")) {
	for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"]) {
		childProcess[name] = (command) => {
			throw new Error(`the fast tier starts no child process (${name} ${String(command)}): this test belongs in tests/`);
		};
	}
	syncBuiltinESMExports();
}
