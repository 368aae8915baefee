#!/usr/bin/env node
// Fails when a module-level `let` or `var` appears in src/: state that outlives a call has one owner (a
// class with private fields, or a slot replaced whole), never a mutable module variable. `let` inside a
// function is fine. Uses the TypeScript AST, so strings and comments never count.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const root = new URL("..", import.meta.url).pathname;
const files = readdirSync(join(root, "src"), { recursive: true })
	.map(String)
	.filter((file) => file.endsWith(".ts"))
	.map((file) => join(root, "src", file));

const found = [];
for (const file of files) {
	const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
	for (const statement of source.statements) {
		if (!ts.isVariableStatement(statement)) continue;
		const flags = statement.declarationList.flags;
		if ((flags & (ts.NodeFlags.Const | ts.NodeFlags.Using | ts.NodeFlags.AwaitUsing)) !== 0) continue;
		const { line, character } = source.getLineAndCharacterOfPosition(statement.getStart(source));
		const kind = (flags & ts.NodeFlags.Let) !== 0 ? "let" : "var";
		found.push(`${relative(root, file)}:${line + 1}:${character + 1}: module-level \`${kind}\` (give the state one owner)`);
	}
}
if (found.length > 0) {
	console.error(found.join("\n"));
	process.exit(1);
}
console.log(`no-let: ${files.length} files checked, no module-level let or var`);
