/**
 * DPoP (RFC 9449, SEP-1932): tokens bound to a key. When the authorization server advertises
 * `dpop_signing_alg_values_supported`, a sign-in makes one key pair for the server's record; the SDK
 * signs a proof with it into every token request (the code exchange, each refresh) and, through the
 * transport's fetch (the SDK's `withDpop`), into every request to the MCP server, answering
 * `use_dpop_nonce` challenges from either. The private key is kept only in the keyring record, beside
 * the tokens it binds: a refresh in another process needs it, and a refresh token without its key is
 * worthless. In memory it is a non-extractable `CryptoKey`; its JWK's private part is one of the
 * secrets the sanitiser removes. Logout deletes the record, and the key with it.
 */
import { createHash, generateKeyPairSync } from "node:crypto";
import type { DpopKeyPair, DpopSession, StoredOAuthTokens } from "@modelcontextprotocol/client";

// Imports nothing of src/: record.ts, deep in the auth floors, reads keys with it.
const isObject = (value: unknown): value is Record<string, unknown> =>
	typeof value === "object" && value !== null && !Array.isArray(value);

/** The signing algorithms a key is made for, in the order preferred when the server offers several. */
const ALGS = ["ES256", "EdDSA", "ES384", "ES512"] as const;
export type DpopAlg = (typeof ALGS)[number];

const CURVES = { ES256: "P-256", ES384: "P-384", ES512: "P-521" } as const;

/** A record's key: the algorithm and the private JWK (`kty`, `crv`, `x`, `y` for EC, `d`). */
export type DpopKey = Readonly<{ alg: DpopAlg; jwk: Readonly<Record<string, string>> }>;

/** What the metadata offers that a key can be made for, if anything. */
export function dpopAlgOf(metadata: unknown): DpopAlg | undefined {
	const offered = isObject(metadata) ? metadata.dpop_signing_alg_values_supported : undefined;
	return Array.isArray(offered) ? ALGS.find((alg) => offered.includes(alg)) : undefined;
}

export function newDpopKey(alg: DpopAlg): DpopKey {
	const pair = alg === "EdDSA" ? generateKeyPairSync("ed25519") : generateKeyPairSync("ec", { namedCurve: CURVES[alg] });
	const jwk = pair.privateKey.export({ format: "jwk" });
	const fields = Object.entries(jwk).filter((entry): entry is [string, string] => typeof entry[1] === "string");
	return { alg, jwk: Object.fromEntries(fields) };
}

/** A stored key, if it is one (a record with a damaged key holds none). */
export function parseDpopKey(value: unknown): DpopKey | undefined {
	if (!isObject(value) || !isObject(value.jwk)) return undefined;
	const alg = ALGS.find((candidate) => candidate === value.alg);
	const jwk = value.jwk;
	const strings = Object.values(jwk).every((field) => typeof field === "string");
	if (alg === undefined || !strings || typeof jwk.d !== "string" || typeof jwk.x !== "string") return undefined;
	return { alg, jwk: jwk as Record<string, string> };
}

/** The members a JWK thumbprint (RFC 7638) and the proofs' `jwk` header take: the public ones. */
function publicJwk(key: DpopKey): Record<string, string> {
	const { kty = "", crv = "", x = "", y = "" } = key.jwk;
	return key.alg === "EdDSA" ? { crv, kty, x } : { crv, kty, x, y };
}

export const sameKey = (a: DpopKey | undefined, b: DpopKey | undefined) =>
	a !== undefined && b !== undefined && a.alg === b.alg && a.jwk.x === b.jwk.x && a.jwk.y === b.jwk.y;

/** The private part, for the sanitiser. */
export const dpopSecret = (key: DpopKey | undefined) => key?.jwk.d;

/** The SDK's signing session for a stored key (the private key imported as non-extractable). */
export async function openDpopSession(sessions: Pick<typeof DpopSession, "create">, key: DpopKey): Promise<DpopSession> {
	const algorithm = key.alg === "EdDSA" ? { name: "Ed25519" } : { name: "ECDSA", namedCurve: CURVES[key.alg] };
	const jwk = publicJwk(key);
	const [privateKey, publicKey] = await Promise.all([
		crypto.subtle.importKey("jwk", key.jwk, algorithm, false, ["sign"]),
		crypto.subtle.importKey("jwk", jwk, algorithm, true, ["verify"]),
	]);
	const canonical = JSON.stringify(Object.fromEntries(Object.entries(jwk).sort(([a], [b]) => (a < b ? -1 : 1))));
	const thumbprint = createHash("sha256").update(canonical).digest("base64url");
	const keyPair: DpopKeyPair = { privateKey, publicKey, publicJwk: jwk, thumbprint, alg: key.alg };
	return sessions.create({ keyPair });
}

/** Whether the authorization server bound these tokens to the key (`token_type: DPoP`, RFC 9449 §5). */
export const dpopBound = (tokens: StoredOAuthTokens | undefined) => tokens?.token_type?.toLowerCase() === "dpop";
