/**
 * The canonical form of a definition as it came on the wire, and its hash (#47): every field counts,
 * keys no spec names included. Object keys are sorted; in text, leading and trailing ASCII whitespace is
 * ignored and runs of it inside count as one space; local `$ref`s are inlined and the schema's own
 * `$defs` / `definitions` dropped once inlined (a ref hoisted into `$defs` is no change). Every other
 * character counts, invisible ones included. An external `$ref` (http, https, file, any other URI) is
 * never fetched: the definition is marked as one that cannot be pinned.
 */
import { createHash } from "node:crypto";

export type Canonical = Readonly<{ hash: string; external?: string }>;

/** Nesting deeper than this is cut (a hostile schema cannot exhaust the stack). */
const MAX_DEPTH = 64;
const SCHEMA_KEYS = new Set(["inputSchema", "outputSchema"]);

/** ASCII whitespace only: other spaces (no-break, zero-width) are characters that count. */
export const normalText = (text: string): string =>
	text.replace(/^[\t\n\v\f\r ]+|[\t\n\v\f\r ]+$/g, "").replace(/[\t\n\v\f\r ]+/g, " ");

type Walk = { external?: string; cyclic: boolean };

const safeDecode = (text: string): string => {
	try {
		return decodeURIComponent(text);
	} catch {
		return text;
	}
};

/** The JSON value a local pointer (`#/a/b`) names inside `root`, if any. */
function resolvePointer(root: unknown, ref: string): unknown {
	if (ref === "#") return root;
	if (!ref.startsWith("#/")) return undefined;
	let node: unknown = root;
	for (const raw of ref.slice(2).split("/")) {
		const key = safeDecode(raw).replace(/~1/g, "/").replace(/~0/g, "~");
		if (node === null || typeof node !== "object" || !Object.hasOwn(node, key)) return undefined;
		node = (node as Record<string, unknown>)[key];
	}
	return node;
}

function canon(value: unknown, root: unknown, seen: readonly string[], depth: number, walk: Walk): unknown {
	if (typeof value === "string") return normalText(value);
	if (value === null || typeof value !== "object") return value;
	if (depth > MAX_DEPTH) return "[too deep]";
	if (Array.isArray(value)) return value.map((item) => canon(item, root, seen, depth + 1, walk));
	const record = value as Record<string, unknown>;
	const ref = record.$ref;
	if (typeof ref === "string" && root !== undefined) {
		if (!ref.startsWith("#")) walk.external ??= ref;
		else if (!seen.includes(ref)) {
			const target = resolvePointer(root, ref);
			if (target !== null && typeof target === "object" && !Array.isArray(target)) {
				const { $ref: _, ...siblings } = record;
				return canon({ ...(target as object), ...siblings }, root, [...seen, ref], depth + 1, walk);
			}
		} else walk.cyclic = true;
	}
	const out: Record<string, unknown> = {};
	for (const key of Object.keys(record).sort()) {
		const child = record[key];
		out[key] = SCHEMA_KEYS.has(key) && depth === 0 ? schema(child, walk) : canon(child, root, seen, depth + 1, walk);
	}
	return out;
}

/** A tool's input or output schema: refs resolve against it; its `$defs` go once every ref is inlined. */
function schema(value: unknown, walk: Walk): unknown {
	if (value === null || typeof value !== "object" || Array.isArray(value)) return canon(value, undefined, [], 1, walk);
	const inner: Walk = { cyclic: false };
	const out = canon(value, value, [], 1, inner) as Record<string, unknown>;
	walk.external ??= inner.external;
	if (inner.cyclic || inner.external !== undefined) return out;
	const { $defs: _defs, definitions: _definitions, ...rest } = out;
	return rest;
}

/** The canonical JSON text of a definition (a tool, prompt or template object, or instructions text). */
export function canonicalText(definition: unknown): Readonly<{ text: string; external?: string }> {
	const walk: Walk = { cyclic: false };
	const text = JSON.stringify(canon(definition, undefined, [], 0, walk)) ?? "null";
	return walk.external === undefined ? { text } : { text, external: walk.external };
}

/** The hash pins compare: sha256 of the canonical text. */
export function canonical(definition: unknown): Canonical {
	const { text, external } = canonicalText(definition);
	const hash = createHash("sha256").update(text).digest("base64url");
	return external === undefined ? { hash } : { hash, external };
}
