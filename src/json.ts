/** The one parse of JSON text that may not be JSON (a file, a stored record, a lock): the value, or nothing. */

/** The value of a JSON text, or undefined when it is not JSON (`JSON.parse` never gives undefined). */
export function parseJson(text: string): unknown {
	try {
		return JSON.parse(text) as unknown;
	} catch {
		return undefined;
	}
}
