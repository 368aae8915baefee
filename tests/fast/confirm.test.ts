/**
 * `confirm`, fast: the field's values and errors, and the annotation rule (the dialog in a real Pi is in tests/confirm.test.ts).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { destructive, writes } from "../../src/schema/confirm.ts";
import { globMatch as globMatches } from "../../src/schema/tool-filter.ts";
import { expectBad, expectOk } from "../helpers/config.ts";

describe("the confirm field", () => {
	test("accepts none, writes, all and a list of patterns; anything else is a named error", async () => {
		assert.equal((await expectOk({ command: "x" })).confirm, "none");
		assert.equal((await expectOk({ command: "x", confirm: "writes" })).confirm, "writes");
		assert.equal((await expectOk({ command: "x", confirm: "destructive" })).confirm, "destructive");
		assert.deepEqual((await expectOk({ command: "x", confirm: ["delete_*", "drop?"] })).confirm, ["delete_*", "drop?"]);
		const message =
			'field "confirm" must be "none", "writes", "destructive", "all" or a list of tool name patterns (non-empty strings)';
		await expectBad({ command: "x", confirm: "sometimes" }, message);
		await expectBad({ command: "x", confirm: ["ok", ""] }, message);
		await expectBad({ command: "x", confirm: true }, message);
	});

	test("writes: every tool not marked read-only; destructive: Pi's documented rule; patterns match * and ? on the whole name", () => {
		assert.equal(writes({ readOnlyHint: true }), false);
		assert.equal(writes({ readOnlyHint: true, openWorldHint: true }), false);
		assert.equal(writes(undefined), true, "no hints: not read-only");
		assert.equal(writes({ readOnlyHint: false, destructiveHint: false, openWorldHint: false }), true, "a closed, harmless write");
		assert.equal(destructive({ readOnlyHint: true }), false);
		assert.equal(destructive({ readOnlyHint: true, destructiveHint: true }), true);
		assert.equal(destructive(undefined), true, "no hints: may destroy and reach out");
		assert.equal(destructive({ readOnlyHint: false, destructiveHint: false, openWorldHint: false }), false);
		assert.equal(destructive({ destructiveHint: false, openWorldHint: true }), true);
		assert.equal(destructive({ destructiveHint: false }), true, "openWorldHint missing counts as true");
		assert.equal(globMatches("delete_*", "delete_note"), true);
		assert.equal(globMatches("delete_*", "undelete_note"), false);
		assert.equal(globMatches("a?c", "abc"), true);
		assert.equal(globMatches("a?c", "abbc"), false);
		assert.equal(globMatches("a.c", "abc"), false, "other characters stand for themselves");
	});
});
