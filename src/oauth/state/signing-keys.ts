import { createHash, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import type { RecordStore } from './record-store.ts';

/**
 * The authorization server's token-signing keys, kept in the RecordStore so that a restart and every
 * replica sign and verify with the same keys. Time is cut into rotation periods; the first instance to
 * need a period's key writes it (`putIfAbsent`, so replicas agree), and a key is kept for
 * `retainSeconds` after its period ends, so that the tokens it signed still verify until they expire.
 */

export interface SigningKeyPolicy {
  /** How long one key signs, in seconds. */
  rotateAfterSeconds: number;
  /** How long a key still verifies after it stopped signing: at least the longest token lifetime. */
  retainSeconds: number;
}

export interface SigningKey {
  /** The private key as a JWK, with `kid`, `alg` (ES256) and `use` (sig). */
  jwk: JsonWebKey & { kid: string; alg: 'ES256'; use: 'sig' };
  /** When it was made, epoch milliseconds. */
  createdAt: number;
}

const INDEX = 'signing-keys';

/** RFC 7638: the SHA-256 of the key's required members in lexical order, base64url. */
function ecThumbprint(jwk: JsonWebKey): string {
  const members = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash('sha256').update(members).digest('base64url');
}

function newKey(now: number): SigningKey {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  return { jwk: { ...jwk, kid: ecThumbprint(jwk), alg: 'ES256', use: 'sig' }, createdAt: now };
}

const isSigningKey = (value: unknown): value is SigningKey =>
  value !== null &&
  typeof value === 'object' &&
  typeof (value as SigningKey).createdAt === 'number' &&
  typeof (value as SigningKey).jwk?.kid === 'string';

/**
 * The keys in force, newest first: the first signs, all verify. Makes the current period's key when no
 * instance has yet.
 */
export async function signingKeys(
  store: RecordStore,
  policy: SigningKeyPolicy,
  now = Date.now(),
): Promise<SigningKey[]> {
  const period = policy.rotateAfterSeconds * 1000;
  const slot = `signing-key:${Math.floor(now / period)}`;
  const lifetime = policy.rotateAfterSeconds + policy.retainSeconds;
  await store.putIfAbsent(slot, newKey(now), lifetime);
  await store.addToSet(INDEX, slot, lifetime);
  const keys = await Promise.all((await store.members(INDEX)).map((key) => store.get(key)));
  return keys.filter(isSigningKey).sort((a, b) => b.createdAt - a.createdAt);
}

/** The public half of the keys, for the JWKS document and for verifying in-process. */
export function publicJwks(keys: readonly SigningKey[]): { keys: JsonWebKey[] } {
  return {
    keys: keys.map(({ jwk }) => {
      const { d: _private, ...publicPart } = jwk;
      return publicPart;
    }),
  };
}
