import { type Link, LinkedList } from './linked-list.ts';

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
  /** The entry's key in the order of use. */
  link: Link<string>;
}

export class ByteLru<V> {
  readonly #entries = new Map<string, Entry<V>>();
  /**
   * Least recently used first. A hit moves its link, not its Map entry: a Map deleted from and set
   * again on every hit keeps what it dropped alive (linked-list.ts), here whole log windows.
   */
  readonly #order = new LinkedList<string>();
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
    this.#order.moveToEnd(entry.link);
    return entry.value;
  }

  /** Keeps `value` (sized `bytes`, its key included) for `ttlMs` (default: until evicted). */
  set(key: string, value: V, bytes: number, ttlMs = Number.POSITIVE_INFINITY): void {
    const size = bytes + key.length * 2;
    // A value larger than a quarter of the budget would push out most of what is kept: not kept.
    if (size > this.maxBytes / 4) return;
    const previous = this.#entries.get(key);
    if (previous !== undefined) this.#remove(key, previous);
    const link = this.#order.push(key);
    this.#entries.set(key, { value, bytes: size, expiresAt: performance.now() + ttlMs, link });
    this.#bytes += size;
    let evicted = 0;
    while (this.#bytes > this.maxBytes) {
      const oldest = this.#order.first!.value!;
      this.#remove(oldest, this.#entries.get(oldest)!);
      evicted += 1;
    }
    if (evicted > 0) this.events.evicted?.(evicted);
  }

  clear(): void {
    this.#entries.clear();
    this.#order.clear();
    this.#bytes = 0;
  }

  #remove(key: string, entry: Entry<V>): void {
    this.#entries.delete(key);
    this.#order.remove(entry.link);
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
