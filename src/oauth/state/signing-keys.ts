import { createHash, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import type { Log } from '../../core/log.ts';
import type { RecordStore } from './record-store.ts';

/**
 * The authorization server's token-signing keys, kept in the RecordStore so that a restart and every
 * replica sign and verify with the same keys. Time is cut into rotation periods; the first instance to
 * need a period's key writes it (`putIfAbsent`, so replicas agree). The next period's key is written
 * with the current one, so every verifier knows it before it signs (a replica whose clock runs ahead
 * signs with a key the others already hold), and a key is kept for `retainSeconds` after its period
 * ends, so that the tokens it signed still verify until they expire.
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
  /** The rotation period it signs in (epoch time ÷ the period's length). */
  period: number;
}

const INDEX = 'signing-keys';

/** RFC 7638: the SHA-256 of the key's required members in lexical order, base64url. */
function ecThumbprint(jwk: JsonWebKey): string {
  const members = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash('sha256').update(members).digest('base64url');
}

function newKey(now: number, period: number): SigningKey {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  return { jwk: { ...jwk, kid: ecThumbprint(jwk), alg: 'ES256', use: 'sig' }, createdAt: now, period };
}

const isSigningKey = (value: unknown): value is SigningKey =>
  value !== null &&
  typeof value === 'object' &&
  typeof (value as SigningKey).createdAt === 'number' &&
  typeof (value as SigningKey).period === 'number' &&
  typeof (value as SigningKey).jwk?.kid === 'string';

/**
 * The keys in force: the current period's first (it signs), then the others, newest first (they
 * verify: the next period's and those still retained). Makes the current and next periods' keys when
 * no instance has yet.
 */
export async function signingKeys(
  store: RecordStore,
  policy: SigningKeyPolicy,
  now = Date.now(),
): Promise<SigningKey[]> {
  const current = Math.floor(now / (policy.rotateAfterSeconds * 1000));
  for (const period of [current, current + 1]) {
    const slot = `signing-key:${period}`;
    // Kept from now until its period is over and the retention after it.
    const lifetime = (period + 1 - current) * policy.rotateAfterSeconds + policy.retainSeconds;
    await store.putIfAbsent(slot, newKey(now, period), lifetime);
    await store.addToSet(INDEX, slot, lifetime);
  }
  const keys = (await Promise.all((await store.members(INDEX)).map((key) => store.get(key)))).filter(
    isSigningKey,
  );
  const rank = (key: SigningKey) => (key.period === current ? Number.POSITIVE_INFINITY : key.period);
  return keys.sort((a, b) => rank(b) - rank(a));
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

/**
 * Reads the keys again just after each period starts and hands them to `onKeys` (each instance on its
 * own timer; the store makes them agree). Returns the function that stops it.
 */
export function rotateSigningKeys(
  store: RecordStore,
  policy: SigningKeyPolicy,
  log: Log,
  onKeys: (keys: SigningKey[]) => void,
): () => void {
  const period = policy.rotateAfterSeconds * 1000;
  // Just after the period starts, so that Date.now() is already in it when the keys are read.
  const settle = Math.min(1_000, period / 10);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const schedule = (delayMs: number) => {
    timer = setTimeout(() => {
      signingKeys(store, policy).then(
        (keys) => {
          if (stopped) return;
          onKeys(keys);
          schedule(period - (Date.now() % period) + settle);
        },
        (error: Error) => {
          log.error(
            { error: error.message },
            'the signing keys could not be read to rotate; retrying in a minute',
          );
          if (!stopped) schedule(60_000);
        },
      );
    }, delayMs);
    timer.unref();
  };
  schedule(period - (Date.now() % period) + settle);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
