/**
 * Calls per caller key in fixed windows, counted in this process: a key's window opens at its first
 * call and lasts `windowMs` (the windows of @fastify/rate-limit's local store). One small record per
 * key, counted synchronously; closed windows are forgotten every `windowMs` (an unref'd timer, stopped
 * by close()). The rate limit's count without Redis, and its fallback while Redis is away.
 */
export interface RateWindows {
  /** Counts one call of `key`: allowed while its window holds at most `max`, else the seconds left (≥ 1). */
  hit(key: string, max: number): { allowed: true } | { allowed: false; retryAfterSeconds: number };
  /** Counts one call of `key`: the calls in its window, this one included, and the ms until it closes. */
  count(key: string): { calls: number; msLeft: number };
  /** Forgets the windows that have closed (so keys seen once do not accumulate). */
  sweep(): void;
  /** The keys held. */
  size(): number;
  /** Stops the sweeping. */
  close(): void;
}

interface Window {
  /** When the window closes (ms, the clock of `now`). */
  closesAt: number;
  calls: number;
}

const ALLOWED = { allowed: true } as const;

export function createRateWindows(options: { windowMs: number; now?: () => number }): RateWindows {
  const now = options.now ?? Date.now;
  const windows = new Map<string, Window>();
  /** The key's window, opened anew if it has closed, with this call counted. */
  const counted = (key: string, at: number): Window => {
    let window = windows.get(key);
    if (window === undefined || window.closesAt <= at) {
      window = { closesAt: at + options.windowMs, calls: 0 };
      windows.set(key, window);
    }
    window.calls += 1;
    return window;
  };
  const sweep = () => {
    const at = now();
    for (const [key, window] of windows) if (window.closesAt <= at) windows.delete(key);
  };
  const sweeper = setInterval(sweep, options.windowMs).unref();
  return {
    hit(key, max) {
      const at = now();
      const window = counted(key, at);
      if (window.calls <= max) return ALLOWED;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((window.closesAt - at) / 1000)) };
    },
    count(key) {
      const at = now();
      const window = counted(key, at);
      return { calls: window.calls, msLeft: window.closesAt - at };
    },
    sweep,
    size: () => windows.size,
    close: () => clearInterval(sweeper),
  };
}
