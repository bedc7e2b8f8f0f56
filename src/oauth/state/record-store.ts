/**
 * What the built-in authorization server keeps between requests, restarts and replicas: JSON records
 * by key, each with an optional lifetime, and sets of keys (a grant's tokens). Two stores implement it:
 * an embedded one for a single instance (LevelDB on disk: survives a restart) and Redis for a fleet
 * (the store the rate limits already share). `src/oauth/state/provider-adapter.ts` maps
 * `oidc-provider`'s models onto it.
 */
export interface RecordStore {
  readonly kind: 'embedded' | 'redis';
  /** The record, or `undefined` when there is none or its lifetime is over. */
  get(key: string): Promise<unknown>;
  /** Writes the record; `ttlSeconds` undefined keeps it until removed. */
  put(key: string, value: unknown, ttlSeconds?: number): Promise<void>;
  /** Writes the record only when the key holds none; true when it was written. */
  putIfAbsent(key: string, value: unknown, ttlSeconds?: number): Promise<boolean>;
  /** Replaces a record's value and keeps its lifetime; false when there was none. */
  replace(key: string, value: unknown): Promise<boolean>;
  remove(keys: readonly string[]): Promise<void>;
  /** The record, removed in the same step: of callers taking one key at once, one gets it. */
  take(key: string): Promise<unknown>;
  /** Adds a member to a set, whose lifetime grows to the longest of its members' (undefined: forever). */
  addToSet(key: string, member: string, ttlSeconds?: number): Promise<void>;
  members(key: string): Promise<string[]>;
  close(): Promise<void>;
}

/** A lifetime in seconds as an expiry time in milliseconds (`Infinity`: none). */
export function expiryOf(ttlSeconds: number | undefined, now = Date.now()): number {
  return ttlSeconds === undefined || !Number.isFinite(ttlSeconds)
    ? Number.POSITIVE_INFINITY
    : now + ttlSeconds * 1000;
}
