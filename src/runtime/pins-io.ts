/**
 * The pins file's I/O (#47), written like configuration edits: in this process's turn, holding
 * `<file>.lock` across processes (the credential store's lock), re-read under it, through an exclusive
 * temporary file and a rename, mode 0600, never through a link. An unreadable file is never rewritten,
 * except by `resetPins`, which the user asks for: it moves the file aside first.
 */
import { rename } from "node:fs/promises";
import { exclusiveEdit, FileRefused, inTurn, readBounded, writeExclusive } from "../config/safe-file.ts";
import { applyChanges, EMPTY, MAX_PINS_BYTES, PinsUnreadable, parsePins } from "../pins/file.ts";
import type { PinsIo } from "../pins/pins.ts";
import { acquireLock } from "../store.ts";

async function read(path: string): Promise<string | undefined> {
	return readBounded(path, MAX_PINS_BYTES).catch((error: unknown) => {
		throw new PinsUnreadable(path, error instanceof FileRefused ? error.message.replace(`${path} `, "") : String(error));
	});
}

function edit<T>(path: string, work: () => Promise<T>): Promise<T> {
	return inTurn(() => exclusiveEdit(path, work, { lock: acquireLock }));
}

export const pinsIo: PinsIo = {
	read,
	update: (path, next) => edit(path, async () => writeExclusive(path, next(await read(path)), 0o600)),
};

/**
 * `pi-mcp trust --reset`: forgets one server's pins (the next connection pins afresh). An unreadable file
 * is moved aside (`<file>.unreadable-<time>`) and every server starts afresh; the result says which.
 */
export function resetPins(path: string, identity: string): Promise<"forgot" | "none" | "moved"> {
	return edit(path, async () => {
		const current = await read(path)
			.then((text) => parsePins(path, text))
			.catch(async (error: unknown) => {
				if (!(error instanceof PinsUnreadable)) throw error;
				await rename(path, `${path}.unreadable-${new Date().toISOString().replace(/[:.]/g, "-")}`);
				return undefined;
			});
		if (current === undefined) {
			await writeExclusive(path, `${JSON.stringify(EMPTY)}\n`, 0o600);
			return "moved" as const;
		}
		if (!current.servers[identity]) return "none" as const;
		await writeExclusive(path, `${JSON.stringify(applyChanges(current, [{ identity, server: "", forget: true }]))}\n`, 0o600);
		return "forgot" as const;
	});
}
