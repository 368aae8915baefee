/**
 * Preloaded into the fast tier's test files (`npm run test:fast`, scripts/test.mjs): any child process a
 * fast test starts, directly or through the SDK's stdio transport, fails at once naming the command.
 * Only in the test runner's children (NODE_TEST_CONTEXT), so the runner itself still starts them.
 */
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";

if (process.env.NODE_TEST_CONTEXT) {
	for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"]) {
		childProcess[name] = (command) => {
			throw new Error(`the fast tier starts no child process (${name} ${String(command)}): this test belongs in tests/`);
		};
	}
	syncBuiltinESMExports();
}
