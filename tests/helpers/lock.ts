/** For the lock tests of both tiers: the `LockBusy` a promise must reject with. */
import assert from "node:assert/strict";
import { LockBusy } from "../../src/store.ts";

export async function busy(promise: Promise<unknown>): Promise<LockBusy> {
	const error = await promise.then(
		() => assert.fail("expected LockBusy"),
		(e: unknown) => e,
	);
	assert.ok(error instanceof LockBusy, String(error));
	return error;
}
