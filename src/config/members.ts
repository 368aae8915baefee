/**
 * One member of a JSON object set or removed as a single text edit, so that every other byte of the
 * file stays as written. jsonc-parser's `modify` with formatting re-formats the neighbouring members
 * too (a one-line entry beside a new one comes out expanded); here only the member's own text (and
 * the comma and line break that join it) changes. A one-line object stays on one line; a new member
 * of a multi-line object takes the indentation of the member before it.
 */
import type { Node } from "jsonc-parser";

type Layout = Readonly<{ unit: string; eol: string }>;
type Edit = Readonly<{ offset: number; length: number; content: string }>;

/** The indentation and line ends the text already uses (two spaces and `\n` when it has none). */
function layoutOf(text: string): Layout {
	const eol = text.includes("\r\n") ? "\r\n" : "\n";
	const indent = /^([ \t]+)["{[]/m.exec(text)?.[1];
	if (indent?.startsWith("\t")) return { unit: "\t", eol };
	return { unit: " ".repeat(Math.min(indent?.length ?? 2, 10)), eol };
}

/** The whitespace that starts the line holding `offset`. */
function lineIndent(text: string, offset: number): string {
	const start = text.lastIndexOf("\n", offset - 1) + 1;
	return /^[ \t]*/.exec(text.slice(start, offset))?.[0] ?? "";
}

const isOneLine = (text: string, node: Node) => !text.slice(node.offset, node.offset + node.length).includes("\n");

/** `value` as JSON: on one line, or pretty-printed with each following line starting at `indent`. */
function render(value: unknown, layout: Layout, indent: string | undefined): string {
	if (indent === undefined) return JSON.stringify(value);
	return JSON.stringify(value, null, layout.unit).split("\n").join(`${layout.eol}${indent}`);
}

/** The edit that sets `key` of the object `node` to `value`, or removes it when `value` is undefined. */
function memberEdit(text: string, node: Node, key: string, value: unknown, layout: Layout): Edit | undefined {
	const members = node.children ?? [];
	const index = members.findIndex((member) => member.children?.[0]?.value === key);
	const member = members[index];
	const oneLine = isOneLine(text, node);
	const end = (each: Node) => each.offset + each.length;
	if (value === undefined) {
		if (!member) return undefined;
		const before = members[index - 1];
		const after = members[index + 1];
		if (before) return { offset: end(before), length: end(member) - end(before), content: "" };
		if (after) return { offset: member.offset, length: after.offset - member.offset, content: "" };
		return { offset: node.offset + 1, length: node.length - 2, content: "" };
	}
	const current = member?.children?.[1];
	if (member && current) {
		const indent = oneLine ? undefined : lineIndent(text, member.offset);
		return { offset: current.offset, length: current.length, content: render(value, layout, indent) };
	}
	const written = (indent: string | undefined) => `${JSON.stringify(key)}: ${render(value, layout, indent)}`;
	const last = members.at(-1);
	if (last && oneLine) return { offset: end(last), length: 0, content: `, ${written(undefined)}` };
	if (last) {
		const indent = lineIndent(text, last.offset);
		return { offset: end(last), length: 0, content: `,${layout.eol}${indent}${written(indent)}` };
	}
	const outer = lineIndent(text, node.offset);
	const inner = `${outer}${layout.unit}`;
	return {
		offset: node.offset + 1,
		length: node.length - 2,
		content: `${layout.eol}${inner}${written(inner)}${layout.eol}${outer}`,
	};
}

/**
 * `text` (strict JSON whose top level is an object) with the value at `path` set, or removed when
 * `value` is undefined. Missing objects on the way are created as one new member.
 */
export async function setAt(text: string, path: readonly string[], value: unknown): Promise<string> {
	const { parseTree, findNodeAtLocation } = await import("jsonc-parser");
	const root = parseTree(text);
	if (root?.type !== "object") throw new Error("the top level must be an object");
	const layout = layoutOf(text);
	for (const depth of path.keys()) {
		const parent = depth === 0 ? root : findNodeAtLocation(root, path.slice(0, depth) as string[]);
		const next = findNodeAtLocation(root, path.slice(0, depth + 1) as string[]);
		const last = depth === path.length - 1;
		if (parent?.type !== "object" || (next && !last)) continue;
		if (value === undefined && !next) return text;
		const nested = path.slice(depth + 1).reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
		const edit = memberEdit(text, parent, path[depth] ?? "", nested, layout);
		return edit ? `${text.slice(0, edit.offset)}${edit.content}${text.slice(edit.offset + edit.length)}` : text;
	}
	return text;
}
