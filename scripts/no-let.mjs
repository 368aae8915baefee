#!/usr/bin/env node
// Fails when any `let` declaration appears in src/. Uses the TypeScript AST, so strings,
// comments and identifiers that merely contain "let" never count.
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
	const visit = (node) => {
		if (ts.isVariableDeclarationList(node) && (node.flags & ts.NodeFlags.Let) !== 0) {
			const { line, character } = source.getLineAndCharacterOfPosition(node.getStart(source));
			found.push(
				`${relative(root, file)}:${line + 1}:${character + 1}: \`let\` is not allowed in src/ (use const and replace records whole)`,
			);
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
}
if (found.length > 0) {
	console.error(found.join("\n"));
	process.exit(1);
}
console.log(`no-let: ${files.length} files checked, no let`);
