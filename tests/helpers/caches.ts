/**
 * A child given a TMPDIR of its own (so that what pi-mcp writes there is the test's to read) would also get empty
 * loader caches: jiti (bin/pi-mcp.mjs) and tsx keep the JavaScript they made from our TypeScript in `$TMPDIR/jiti`
 * and `$TMPDIR/tsx-<uid>`, and a cold cache costs a `pi-mcp` run ~1.7 s of CPU (0.15 s warm). Links to this
 * process's caches keep them warm. A walk over such a directory must not follow links (the caches are not the test's).
 */
import { mkdir, symlink } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

const uid = process.geteuid?.() ?? userInfo().username;
const CACHES = ["jiti", `tsx-${uid}`];

/** Links `dir/jiti` and `dir/tsx-<uid>` to this process's own caches (made if missing). */
export async function shareLoaderCaches(dir: string): Promise<void> {
	await Promise.all(
		CACHES.map(async (name) => {
			const shared = join(tmpdir(), name);
			await mkdir(shared, { recursive: true });
			await symlink(shared, join(dir, name));
		}),
	);
}
