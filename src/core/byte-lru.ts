/**
 * A least-recently-used map bounded by the bytes its values take (as the caller sizes them), shared by
 * every caller of the gateway. A `maxBytes` of 0 keeps nothing. Entries may carry an expiry time.
 */
export interface ByteLruEvents {
  /** Entries dropped to make room (not expiries or replacements). */
  evicted?(count: number): void;
}

interface Entry<V> {
  value: V;
  bytes: number;
  /** `performance.now()` after which the entry is gone; Infinity for never. */
  expiresAt: number;
}

export class ByteLru<V> {
  readonly #entries = new Map<string, Entry<V>>();
  #bytes = 0;

  constructor(
    readonly maxBytes: number,
    private readonly events: ByteLruEvents = {},
  ) {}

  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.expiresAt <= performance.now()) {
      if (entry !== undefined) this.#remove(key, entry);
      return undefined;
    }
    // Map keeps insertion order: moving the entry to the end makes the first entry the least recent.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value` (sized `bytes`, its key included) for `ttlMs` (default: until evicted). */
  set(key: string, value: V, bytes: number, ttlMs = Number.POSITIVE_INFINITY): void {
    const size = bytes + key.length * 2;
    // A value larger than a quarter of the budget would push out most of what is kept: not kept.
    if (size > this.maxBytes / 4) return;
    const previous = this.#entries.get(key);
    if (previous !== undefined) this.#remove(key, previous);
    this.#entries.set(key, { value, bytes: size, expiresAt: performance.now() + ttlMs });
    this.#bytes += size;
    let evicted = 0;
    for (const [oldest, entry] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#remove(oldest, entry);
      evicted += 1;
    }
    if (evicted > 0) this.events.evicted?.(evicted);
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }

  #remove(key: string, entry: Entry<V>): void {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}

/** One use of a shared cache: its own key space and value type, its lookups counted under its name. */
export interface CacheSlice<V> {
  get(key: string): V | undefined;
  set(key: string, value: V, bytes: number, ttlMs?: number): void;
}

export function cacheSlice<V, Name extends string = string>(
  lru: ByteLru<unknown>,
  name: Name,
  onLookup?: (name: Name, result: 'hit' | 'miss') => void,
): CacheSlice<V> {
  const prefix = `${name}\u0000`;
  return {
    get(key) {
      const value = lru.get(prefix + key) as V | undefined;
      onLookup?.(name, value === undefined ? 'miss' : 'hit');
      return value;
    },
    set: (key, value, bytes, ttlMs) => lru.set(prefix + key, value, bytes, ttlMs),
  };
}
