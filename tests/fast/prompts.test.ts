/**
 * The words of `/mcp prompt`, fast: quoting and name=value arguments (the prompts in a real Pi and the shell are in tests/prompts.test.ts).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { namedArguments, splitWords } from "../../src/manager/conversation.ts";

describe("command words", () => {
	test("quotes group a value with spaces; name=value words become arguments", () => {
		assert.deepEqual(splitWords(`prompt notes review file=src/a.ts focus="error handling" 'x=a b'`), [
			"prompt",
			"notes",
			"review",
			"file=src/a.ts",
			"focus=error handling",
			"x=a b",
		]);
		assert.deepEqual(splitWords(`a "say \\"hi\\""`), ["a", 'say "hi"']);
		assert.deepEqual(namedArguments(["a=1", "b=x=y"]), { a: "1", b: "x=y" });
		assert.throws(() => namedArguments(["lonely"]), /"lonely" is not name=value/);
	});
});
