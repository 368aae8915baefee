// @ts-check
/**
 * The output-schema checking thread (`validate.ts`): compiles a server's `outputSchema` with the SDK's own
 * Ajv engine and checks structured results against it, one request at a time. Plain JavaScript (checked by
 * tsc through JSDoc): a worker thread has none of Pi's TypeScript loader, and Node strips no types under
 * `node_modules`, where an installed pi-mcp lives. `workerData`: `{ held, messageLimit }`.
 */
import { parentPort, workerData } from "node:worker_threads";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";

/** @typedef {{ id: number; key: number; schema: import("@modelcontextprotocol/client").JsonSchemaType; check: boolean; value?: unknown }} Request */
/** @typedef {{ outcome: "ok" | "invalid-schema" | "mismatch" | "failed"; message?: string }} Answer */
/** @typedef {import("@modelcontextprotocol/client").JsonSchemaValidator<unknown>} Validate */

/** @type {{ held: number; messageLimit: number }} */
const limits = workerData;
const engine = new AjvJsonSchemaValidator();
/** Compiled checks by schema key, oldest first (a Map keeps insertion order). @type {Map<number, Validate>} */
const held = new Map();

/** @param {unknown} error */
const text = (error) => String(error instanceof Error ? error.message : error).slice(0, limits.messageLimit);

/** @param {number} key @param {Request["schema"]} schema @returns {Validate} */
function compiled(key, schema) {
	const known = held.get(key);
	if (known) return known;
	const made = engine.getValidator(schema);
	const oldest = held.keys().next();
	if (held.size >= limits.held && !oldest.done) held.delete(oldest.value);
	held.set(key, made);
	return made;
}

/** @param {Request} request @returns {Answer} */
function answer({ key, schema, check, value }) {
	/** @type {Validate} */
	let validate;
	try {
		validate = compiled(key, schema);
	} catch (error) {
		return { outcome: "invalid-schema", message: text(error) };
	}
	if (!check) return { outcome: "ok" };
	try {
		const result = validate(value);
		return result.valid ? { outcome: "ok" } : { outcome: "mismatch", message: text(result.errorMessage) };
	} catch (error) {
		return { outcome: "failed", message: text(error) };
	}
}

parentPort?.on("message", (/** @type {Request} */ request) => parentPort?.postMessage({ id: request.id, ...answer(request) }));
