/**
 * Calls per caller key in fixed windows, counted in this process: a key's window opens at its first
 * call and lasts `windowMs`; within it the first `max` calls are allowed. The windows of
 * @fastify/rate-limit's local store, counted synchronously with one small record per key; the plugin's
 * path allocated 1.3 KB in 7 objects per call (its promise, callback and result objects).
 */
export interface RateWindows {
  /** Counts one call of `key`: allowed, or refused with the seconds until its window closes (≥ 1). */
  hit(key: string): { allowed: true } | { allowed: false; retryAfterSeconds: number };
  /** Forgets the windows that have closed (so keys seen once do not accumulate). */
  sweep(): void;
  /** The keys held. */
  size(): number;
}

interface Window {
  /** When the window closes (ms, the clock of `now`). */
  closesAt: number;
  calls: number;
}

const ALLOWED = { allowed: true } as const;

export function createRateWindows(options: {
  max: number;
  windowMs: number;
  now?: () => number;
}): RateWindows {
  const now = options.now ?? Date.now;
  const windows = new Map<string, Window>();
  return {
    hit(key) {
      const at = now();
      let window = windows.get(key);
      if (window === undefined || window.closesAt <= at) {
        window = { closesAt: at + options.windowMs, calls: 0 };
        windows.set(key, window);
      }
      window.calls += 1;
      if (window.calls <= options.max) return ALLOWED;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((window.closesAt - at) / 1000)) };
    },
    sweep() {
      const at = now();
      for (const [key, window] of windows) if (window.closesAt <= at) windows.delete(key);
    },
    size: () => windows.size,
  };
}
