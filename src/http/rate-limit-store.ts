import { createRequire } from 'node:module';
import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import { displayUrl } from '../core/display-url.ts';
import type { Log } from '../core/log.ts';
import { createRateWindows, type RateWindows } from './rate-windows.ts';

/** Where the per-caller rate limit is counted: in Redis, shared by every replica, or in this process. */
export type RateLimitStoreKind = 'redis' | 'local';

type Counted = (error: Error | null, result?: { current: number; ttl: number }) => void;
interface PluginStore {
  incr(key: string, callback: Counted, timeWindow: number, max: number): void;
}
type PluginStoreCtor = new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  ...rest: unknown[]
) => PluginStore;

// @fastify/rate-limit's Redis store (it runs the atomic INCR + PEXPIRE script); the package ships it as
// a CommonJS file without type declarations.
const require = createRequire(import.meta.url);
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as PluginStoreCtor;

/** Keys in Redis: `dagu-mcp-gateway:rate:<identity key>`, one counter per caller for all replicas. */
const KEY_PREFIX = 'dagu-mcp-gateway:rate:';

export interface SharedRateLimitStoreOptions {
  url: string;
  /** The limiter's window (its `timeWindow`), for the count kept in this process while Redis is away. */
  windowMs: number;
  log: Log;
  /** Called on every switch of the store in use (and once at start with `local`, until Redis answers). */
  onStoreChange?: (store: RateLimitStoreKind) => void;
  /** Called for each call counted in this process because Redis failed. */
  onFallback?: () => void;
  /** How long one Redis command may take before the call is counted locally. Default 500 ms. */
  commandTimeoutMs?: number;
}

export interface SharedRateLimitStore {
  /** The store constructor for `@fastify/rate-limit`'s `store` option. */
  readonly store: FastifyRateLimitStoreCtor;
  /** The store counting calls now. */
  current(): RateLimitStoreKind;
  close(): Promise<void>;
}

interface StoreParams {
  continueExceeding?: boolean;
  exponentialBackoff?: boolean;
}

/** Which store counts now, and why it switched: the caller's own bookkeeping. */
type UseStore = (store: RateLimitStoreKind, error?: Error) => void;

/**
 * The store class handed to the plugin: counts in Redis while it answers, else in this process
 * (calling `use` on every outcome and `onFallback` for each call counted locally).
 */
function failoverStore(
  redis: Redis,
  local: RateWindows,
  use: UseStore,
  onFallback: (() => void) | undefined,
) {
  // The plugin builds the store from its settings and calls `child` with the merged limiter settings
  // (its type declarations say route options; the code passes the settings).
  class FailoverStore implements PluginStore {
    private readonly shared: PluginStore;
    constructor(private readonly params: StoreParams) {
      const continueExceeding = params.continueExceeding ?? false;
      const exponentialBackoff = params.exponentialBackoff ?? false;
      this.shared = new RedisStore(continueExceeding, exponentialBackoff, redis, KEY_PREFIX);
    }

    incr(key: string, callback: Counted, timeWindow: number, max: number): void {
      const countLocally = (error?: Error) => {
        use('local', error);
        onFallback?.();
        const { calls, msLeft } = local.count(key);
        callback(null, { current: calls, ttl: msLeft });
      };
      if (redis.status !== 'ready') {
        countLocally();
        return;
      }
      this.shared.incr(
        key,
        (error, result) => {
          if (error !== null || result === undefined) {
            countLocally(error ?? undefined);
            return;
          }
          use('redis');
          callback(null, result);
        },
        timeWindow,
        max,
      );
    }

    child(routeOptions: StoreParams): FailoverStore {
      return new FailoverStore({ ...this.params, ...routeOptions });
    }
  }
  return FailoverStore;
}

/**
 * The per-caller rate limit kept in Redis, so N replicas give a caller one budget, with a local
 * fallback: when Redis does not answer (down, unreachable, slower than the command timeout), the call
 * is counted in this process and served, the switch is logged once and shown in the metrics; when
 * Redis answers again the shared count takes over. Commands never queue while Redis is away
 * (`enableOfflineQueue: false`), so a dead Redis costs a call nothing but the local count.
 */
export function createSharedRateLimitStore(options: SharedRateLimitStoreOptions): SharedRateLimitStore {
  const redis = new Redis(options.url, {
    enableOfflineQueue: false,
    commandTimeout: options.commandTimeoutMs ?? 500,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    // Reconnect forever, at most every 2 s: the fallback serves meanwhile.
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
  });
  const target = displayUrl(options.url);
  let active: RateLimitStoreKind = 'local';
  let lastError: string | undefined;
  let closed = false;
  options.onStoreChange?.('local');

  const use: UseStore = (store, error) => {
    if (store === active || closed) return;
    active = store;
    options.onStoreChange?.(store);
    if (store === 'redis')
      options.log.info({ redis: target }, 'rate limit: counting in Redis (shared by replicas)');
    else
      options.log.warn(
        { redis: target, error: error?.message ?? lastError },
        'rate limit: Redis unavailable, counting in this process until it answers again',
      );
  };
  // ioredis emits an error per failed reconnect; without a listener that would crash the process.
  redis.on('error', (error: Error) => {
    lastError = error.message;
    options.log.debug({ redis: target, error: error.message }, 'rate limit: Redis connection error');
  });
  redis.on('ready', () => use('redis'));
  redis.on('close', () => use('local'));

  const local = createRateWindows({ windowMs: options.windowMs });
  const FailoverStore = failoverStore(redis, local, use, options.onFallback);

  return {
    store: FailoverStore as unknown as FastifyRateLimitStoreCtor,
    current: () => active,
    close: async () => {
      closed = true;
      local.close();
      redis.disconnect();
    },
  };
}
