/**
 * Seeded randomness for tests that shuffle or jitter. The seed comes from PI_MCP_TEST_SEED or is
 * drawn at random; tests print it (`t.diagnostic`) so a failing order can be replayed with
 * `PI_MCP_TEST_SEED=<seed> npm test -- <file>`. (Timing still varies between runs; the seed fixes
 * the order and the jitter asked for.)
 */
import { randomInt } from "node:crypto";

export type Seeded = Readonly<{ seed: number; random: () => number; shuffle: <T>(items: readonly T[]) => T[] }>;

export function seeded(): Seeded {
	const given = process.env.PI_MCP_TEST_SEED;
	const seed = given !== undefined && /^\d+$/.test(given) ? Number(given) % 2 ** 32 : randomInt(2 ** 32 - 1);
	// mulberry32: small, fast, good enough to vary test orders.
	const state = { a: seed };
	const random = (): number => {
		state.a = (state.a + 0x6d2b79f5) | 0;
		const t1 = Math.imul(state.a ^ (state.a >>> 15), 1 | state.a);
		const t2 = (t1 + Math.imul(t1 ^ (t1 >>> 7), 61 | t1)) ^ t1;
		return ((t2 ^ (t2 >>> 14)) >>> 0) / 4294967296;
	};
	const shuffle = <T>(items: readonly T[]): T[] => {
		const copy = [...items];
		for (const i of copy.keys()) {
			const j = i + Math.floor(random() * (copy.length - i));
			[copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
		}
		return copy;
	};
	return { seed, random, shuffle };
}
