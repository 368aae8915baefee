/**
 * `includeTools` / `excludeTools`, fast: the globs and the field's errors (the actions, Pi and pi-mcp are in tests/filters.test.ts).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { globMatch } from "../../src/schema/tool-filter.ts";
import { expectBad, expectOk } from "../helpers/config.ts";

describe("includeTools / excludeTools in the configuration", () => {
	test("globs: * any run, ? one character, the whole name, case-sensitive", () => {
		assert.ok(globMatch("delete_*", "delete_file"));
		assert.ok(globMatch("*_file", "read_file"));
		assert.ok(globMatch("read_fil?", "read_file"));
		assert.ok(!globMatch("read", "read_file"), "the whole name, not a part");
		assert.ok(!globMatch("Read_*", "read_file"));
		assert.ok(globMatch("a.b(c)+", "a.b(c)+"), "other characters are literal");
		assert.ok(!globMatch("a.b", "axb"));
		assert.ok(globMatch("get-user", "get-user"), "a hyphen is literal (it threw before)");
		assert.ok(globMatch("files/read-*", "files/read-all") && !globMatch("a-b", "a_b"));
	});

	test("a value that is not a list of non-empty strings makes the entry invalid, named", async () => {
		const message = (field: string) =>
			`field "${field}" must be an array of non-empty strings (tool names; * and ? match any characters)`;
		await expectBad({ command: "x", excludeTools: "delete_*" }, message("excludeTools"));
		await expectBad({ command: "x", includeTools: ["read_*", ""] }, message("includeTools"));
		await expectBad({ command: "x", includeTools: [1] }, message("includeTools"));
		const ok = await expectOk({ command: "x", includeTools: [], excludeTools: ["a*"] });
		assert.deepEqual(ok.includeTools, []);
		assert.deepEqual(ok.excludeTools, ["a*"]);
		const none = await expectOk({ command: "x" });
		assert.equal(none.includeTools, undefined);
	});
});
