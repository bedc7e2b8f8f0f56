import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { type Log, silentLog } from '../core/log.ts';

/** The asymmetric algorithms the gateway accepts; each key gets exactly one, from its type and curve. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'ES256'] as const;
export type AsymmetricAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number];

/** The algorithm a public key can verify, or why the gateway will not use it. */
export function algorithmForKey(key: KeyObject): AsymmetricAlgorithm | { unusable: string } {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa') {
    const bits = details.modulusLength ?? 0;
    return bits >= 2048 ? 'RS256' : { unusable: `RSA key of ${bits} bits (at least 2048 needed)` };
  }
  if (key.asymmetricKeyType === 'ec' && details.namedCurve === 'prime256v1') return 'ES256';
  const curve = details.namedCurve ? ` on ${details.namedCurve}` : '';
  return {
    unusable: `${key.asymmetricKeyType ?? 'unknown'} key${curve} (use RSA for RS256 or EC P-256 for ES256)`,
  };
}

export interface VerificationKey {
  kid: string | undefined;
  alg: AsymmetricAlgorithm;
  /** SPKI PEM, the form @fastify/jwt takes as a public key. */
  pem: string;
}

/** Why no key could be found for a token; `reason` becomes the auth failure reason. */
export class JwksKeyError extends Error {
  constructor(
    readonly reason: 'wrong_algorithm' | 'invalid_token',
    message: string,
  ) {
    super(message);
    this.name = 'JwksKeyError';
  }
}

export interface JwksOptions {
  log?: Log;
  /** Keys older than this are refreshed in the background while still served. Default 10 minutes. */
  ttlMs?: number;
  /** At most one fetch per this interval, so unknown `kid`s cannot flood the identity provider. Default 30 s. */
  cooldownMs?: number;
  timeoutMs?: number;
  maxBytes?: number;
  /** Called after each fetch that replaced the set, with the `kid`s it now publishes. */
  onRefresh?: (kids: ReadonlyArray<string | undefined>) => void;
}

export interface JwksCache {
  /** The key for a token header: fetches on first use, on an unknown `kid` (once per cooldown) and when stale. */
  keyFor(header: { kid?: unknown; alg?: unknown }): Promise<VerificationKey>;
  /**
   * Whether the set still publishes the key named `kid` (a stale set is refreshed in the background):
   * a verification cached for a token signed with that key holds only while it does.
   */
  publishes(kid: string): boolean;
  /** Fetches the set now (concurrent callers share one fetch); keeps the previous keys when it fails. */
  refresh(): Promise<void>;
  readonly size: number;
}

function toVerificationKey(jwk: Record<string, unknown>): VerificationKey | { skipped: string } {
  if (jwk.use !== undefined && jwk.use !== 'sig') return { skipped: `use "${String(jwk.use)}"` };
  if (jwk.kty !== 'RSA' && jwk.kty !== 'EC') return { skipped: `kty "${String(jwk.kty)}"` };
  let key: KeyObject;
  try {
    // Only the public members: a JWKS that leaks private parts must not make us hold a private key.
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicPart } = jwk;
    key = createPublicKey({ key: publicPart as JsonWebKey, format: 'jwk' });
  } catch (error) {
    return { skipped: `unreadable key (${(error as Error).message})` };
  }
  const alg = algorithmForKey(key);
  if (typeof alg !== 'string') return { skipped: alg.unusable };
  if (jwk.alg !== undefined && jwk.alg !== alg)
    return { skipped: `alg "${String(jwk.alg)}" is not accepted` };
  return {
    kid: typeof jwk.kid === 'string' ? jwk.kid : undefined,
    alg,
    pem: key.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** A JWKS held in-process (the built-in authorization server's keys), read instead of fetched. */
export type JwksLoader = () => Promise<unknown>;

/** Fetches a JWKS document; throws on failure. */
async function fetchJwks(url: string, timeoutMs: number, maxBytes: number): Promise<unknown> {
  const response = await fetch(url, {
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const text = await response.text();
  if (Buffer.byteLength(text) > maxBytes) throw new Error(`document larger than ${maxBytes} bytes`);
  return JSON.parse(text);
}

/** A JWKS document's usable verification keys (others logged at debug); throws when it has no key list. */
function readJwks(document: unknown, source: string, log: Log): VerificationKey[] {
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Error('no "keys" array');
  const next: VerificationKey[] = [];
  for (const jwk of keys) {
    if (typeof jwk !== 'object' || jwk === null) continue;
    const key = toVerificationKey(jwk as Record<string, unknown>);
    if ('skipped' in key)
      log.debug({ url: source, kid: (jwk as { kid?: unknown }).kid }, `JWKS key skipped: ${key.skipped}`);
    else next.push(key);
  }
  return next;
}

/** Logs the keys a fetched set no longer holds: tokens signed with them are refused from now on. */
function reportDropped(before: VerificationKey[], next: VerificationKey[], url: string, log: Log): void {
  const dropped = before.filter((key) => !next.some((kept) => kept.pem === key.pem));
  if (dropped.length === 0) return;
  log.info(
    { url, droppedKids: dropped.map((key) => key.kid ?? null) },
    'the JWKS no longer publishes some keys: tokens signed with them are refused from now on',
  );
}

function assertAsymmetric(alg: unknown): asserts alg is AsymmetricAlgorithm {
  if (typeof alg !== 'string' || !(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg)) {
    throw new JwksKeyError('wrong_algorithm', `algorithm ${String(alg)} is not accepted`);
  }
}

/**
 * A JWKS client on node:crypto alone: JWK → KeyObject → PEM, cached, refreshed, fetches coalesced. The
 * set is fetched from a URL, or read through a loader for keys this process can read itself.
 */
export function createJwksCache(source: string | JwksLoader, options: JwksOptions = {}): JwksCache {
  const url = typeof source === 'string' ? source : 'local key set';
  const log = options.log ?? silentLog;
  const ttlMs = options.ttlMs ?? 10 * 60_000;
  const cooldownMs = options.cooldownMs ?? 30_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const fetchSet = typeof source === 'string' ? () => fetchJwks(source, timeoutMs, maxBytes) : source;

  let keys: VerificationKey[] = [];
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let attemptedAt = Number.NEGATIVE_INFINITY;
  // Set synchronously by refresh(), so a caller can wait for the fetch it just started.
  let inFlight: Promise<void> | undefined;

  async function load(): Promise<void> {
    attemptedAt = Date.now();
    try {
      const next = readJwks(await fetchSet(), url, log);
      if (next.length === 0) log.warn({ url }, 'the JWKS holds no RS256 or ES256 signing key');
      reportDropped(keys, next, url, log);
      keys = next;
      fetchedAt = Date.now();
      log.debug({ url, keys: next.length }, 'JWKS fetched');
      options.onRefresh?.(next.map((key) => key.kid));
    } catch (error) {
      log.warn(
        { url, error: (error as Error).message, keptKeys: keys.length },
        'JWKS fetch failed; keeping the keys fetched before',
      );
    }
  }

  function refresh(): Promise<void> {
    inFlight ??= load().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  }

  const mayFetch = () => Date.now() - attemptedAt >= cooldownMs;
  /** Stale keys keep serving while a background fetch replaces them. */
  function refreshIfStale(): void {
    if (Date.now() - fetchedAt >= ttlMs && mayFetch()) void refresh();
  }

  function lookup(kid: unknown): VerificationKey | undefined {
    if (typeof kid === 'string') return keys.find((key) => key.kid === kid);
    return keys.length === 1 ? keys[0] : undefined;
  }

  return {
    async keyFor(header) {
      assertAsymmetric(header.alg);
      refreshIfStale();
      let key = lookup(header.kid);
      if (key === undefined) {
        // First use, or a kid not seen yet (key rotation): wait for a fetch, at most one per cooldown.
        if (inFlight === undefined && mayFetch()) void refresh();
        if (inFlight !== undefined) {
          await inFlight;
          key = lookup(header.kid);
        }
      }
      if (key === undefined) throw new JwksKeyError('invalid_token', 'no JWKS key matches the token');
      if (key.alg !== header.alg) {
        throw new JwksKeyError('wrong_algorithm', `the key is for ${key.alg}, the token says ${header.alg}`);
      }
      return key;
    },
    publishes(kid) {
      refreshIfStale();
      return keys.some((key) => key.kid === kid);
    },
    refresh,
    get size() {
      return keys.length;
    },
  };
}
