#!/usr/bin/env node
// Fails on a module-level `let` or `var` in src/: state that outlives a call has one owner (a class with
// private fields, or a snapshot slot replaced whole), never a mutable binding of the module. A `let` inside
// a function is fine. Uses the TypeScript AST, so strings and comments never count.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const root = new URL("..", import.meta.url).pathname;
const files = readdirSync(join(root, "src"), { recursive: true })
	.map(String)
	.filter((file) => file.endsWith(".ts"))
	.map((file) => join(root, "src", file));

/** Whether a declaration list belongs to the module: outside every function, and for a `let`, every block or loop too. */
const moduleLevel = (node) => {
	const isVar = (node.flags & (ts.NodeFlags.Let | ts.NodeFlags.Const | ts.NodeFlags.Using)) === 0;
	for (let parent = node.parent; parent; parent = parent.parent) {
		if (ts.isFunctionLike(parent) || ts.isClassStaticBlockDeclaration(parent)) return false;
		if (!isVar && (ts.isBlock(parent) || ts.isIterationStatement(parent, false))) return false;
	}
	return true;
};

const found = [];
for (const file of files) {
	const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
	const visit = (node) => {
		const mutable = ts.isVariableDeclarationList(node) && (node.flags & (ts.NodeFlags.Const | ts.NodeFlags.Using)) === 0;
		if (mutable && moduleLevel(node)) {
			const { line, character } = source.getLineAndCharacterOfPosition(node.getStart(source));
			const keyword = (node.flags & ts.NodeFlags.Let) !== 0 ? "let" : "var";
			found.push(
				`${relative(root, file)}:${line + 1}:${character + 1}: a module-level \`${keyword}\` (give the state one owner: a class with private fields, or a slot replaced whole)`,
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
console.log(`module-state: ${files.length} files checked, no module-level let or var`);
