import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { Log } from '../core/log.ts';
import type { GatewayMetrics, RateLimitReason } from '../metrics/metrics.ts';
import { createRateWindows, type RateWindows } from './rate-windows.ts';
import { auditRefusal, type RefusalAudit, refuse } from './refusals.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The route preHandler that meters `tools/call`, `resources/read` and `completion/complete`: the
     * per-caller rate, the per-caller concurrency cap and the in-flight gauge; answers 429 itself.
     */
    meterCalls: preHandlerHookHandler;
  }
}

/** Whom a metered request counts against, as the route's authentication established it. */
export interface MeteredCaller {
  /** One rate and concurrency bucket per key (`identityKey`). */
  key: string;
  /** For the audit record of a refusal. */
  identity: string;
  identityKind: 'api_key' | 'jwt' | 'anonymous';
}

export interface CallMeteringOptions {
  ratePerMinute: number;
  maxConcurrent: number;
  /** Counts the rate in Redis, shared by every replica (owned by this plugin); absent, in-process. */
  redisUrl?: string | undefined;
  /** The caller of an authenticated request; undefined meters nothing (no caller, no bucket). */
  caller(request: FastifyRequest): MeteredCaller | undefined;
  log: Log;
  metrics?: Pick<GatewayMetrics, 'rateLimited' | 'inflight' | 'rateLimitStore' | 'rateLimitStoreFallback'>;
  audit?: RefusalAudit;
}

/** Only these JSON-RPC methods are metered (they read Dagu): initialize, lists and pings never are. */
const METERED_METHODS = new Set(['tools/call', 'resources/read', 'completion/complete']);

interface RpcMessage {
  method?: unknown;
  params?: { name?: unknown };
}

const isMetered = (message: unknown): message is RpcMessage =>
  typeof message === 'object' &&
  message !== null &&
  METERED_METHODS.has((message as RpcMessage).method as string);

const meteredMessages = (body: unknown): RpcMessage[] =>
  (Array.isArray(body) ? body : [body]).filter(isMetered);

/** The number of metered JSON-RPC requests in a parsed body (a batch counts each one); no array made. */
export function countMeteredCalls(body: unknown): number {
  if (!Array.isArray(body)) return isMetered(body) ? 1 : 0;
  let count = 0;
  for (const message of body) if (isMetered(message)) count += 1;
  return count;
}

/** The rate limit's window: tool calls per minute. */
const RATE_WINDOW_MS = 60_000;

/**
 * The Redis-backed rate store when REDIS_URL is set (closed with the app), else undefined. Its module
 * (ioredis, @fastify/rate-limit) is loaded only then: a gateway without Redis never holds them.
 */
async function sharedStoreOf(app: FastifyInstance, options: CallMeteringOptions) {
  if (options.redisUrl === undefined) return undefined;
  const { metrics } = options;
  const { createSharedRateLimitStore } = await import('./rate-limit-store.ts');
  const shared = createSharedRateLimitStore({
    url: options.redisUrl,
    windowMs: RATE_WINDOW_MS,
    log: options.log,
    ...(metrics ? { onStoreChange: metrics.rateLimitStore, onFallback: metrics.rateLimitStoreFallback } : {}),
  });
  app.addHook('onClose', () => shared.close());
  return shared;
}

/** Keys the concurrency ledger holds before it drops the idle ones. */
export const IDLE_SWEEP_AT = 1024;

/**
 * Calls running per caller key: a slot is taken before anything awaits and given back once. A key whose
 * calls have all ended keeps its entry at 0 (a delete at every call's end made the Map rebuild its
 * table); the idle entries go together once the Map holds IDLE_SWEEP_AT keys.
 */
export function concurrencyLedger() {
  const active = new Map<string, number>();
  let sweepAt = IDLE_SWEEP_AT;
  return {
    running: (key: string) => active.get(key) ?? 0,
    take(key: string, calls: number) {
      if (active.size >= sweepAt) {
        for (const [idle, running] of active) if (running === 0) active.delete(idle);
        // Keys all busy: the next sweep waits until as many again have come.
        sweepAt = Math.max(IDLE_SWEEP_AT, active.size * 2);
      }
      active.set(key, (active.get(key) ?? 0) + calls);
    },
    release(key: string, calls: number) {
      active.set(key, Math.max(0, (active.get(key) ?? calls) - calls));
    },
    /** Keys held, busy or idle. */
    get size() {
      return active.size;
    },
  };
}

/** The 429 of a metered request: counted, audited with the first metered message, answered with Retry-After. */
function refuseTooMany(
  options: CallMeteringOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  caller: MeteredCaller,
  refusal: { reason: RateLimitReason; retryAfterSeconds: number; message: string },
) {
  options.metrics?.rateLimited(refusal.reason);
  const first = meteredMessages(request.body)[0];
  auditRefusal(options.audit, request, reply, {
    identity: caller.identity,
    identityKind: caller.identityKind,
    method: first?.method as string | undefined,
    tool: typeof first?.params?.name === 'string' ? first.params.name : undefined,
    outcome: 'rate_limited',
    reason: refusal.reason,
    httpStatus: 429,
  });
  return refuse(reply, 'rate_limited', {
    message: refusal.message,
    headers: { 'retry-after': String(Math.max(1, refusal.retryAfterSeconds)) },
  });
}

function concurrencyMessage(calls: number, running: number, max: number): string {
  if (calls === 1) return `Too many concurrent calls: at most ${max} at a time per caller.`;
  const free = Math.max(0, max - running);
  return `Too many concurrent calls: the batch holds ${calls} calls, ${free} of at most ${max} are free for this caller.`;
}

type RateVerdict = ReturnType<RateWindows['hit']>;
const ALLOWED: RateVerdict = { allowed: true };
/** Counts one call of a caller against its rate: at once in this process, or after Redis answers. */
type CountRate = (request: FastifyRequest, key: string) => RateVerdict | Promise<RateVerdict>;

/** The rate counted in this process (no REDIS_URL), synchronously. */
function localRate(app: FastifyInstance, options: CallMeteringOptions): CountRate {
  const windows = createRateWindows({ windowMs: RATE_WINDOW_MS });
  app.addHook('onClose', async () => windows.close());
  return (_request, key) => windows.hit(key, options.ratePerMinute);
}

/**
 * The rate counted in Redis, shared by the replicas: @fastify/rate-limit's store and window, driven
 * from our hook (createRateLimit) so that only tool calls are counted, the key is the caller, and the
 * 429 body is ours.
 */
async function sharedRate(
  app: FastifyInstance,
  options: CallMeteringOptions,
  shared: NonNullable<Awaited<ReturnType<typeof sharedStoreOf>>>,
): Promise<CountRate> {
  const { default: fastifyRateLimit } = await import('@fastify/rate-limit');
  await app.register(fastifyRateLimit, { global: false, store: shared.store });
  const rateLimit = app.createRateLimit({
    max: options.ratePerMinute,
    timeWindow: RATE_WINDOW_MS,
    keyGenerator: (request) => options.caller(request)?.key ?? `ip:${request.ip}`,
  });
  return async (request) => {
    const result = await rateLimit(request);
    return !result.isAllowed && result.isExceeded
      ? { allowed: false, retryAfterSeconds: result.ttlInSeconds }
      : { allowed: true };
  };
}

async function callMetering(app: FastifyInstance, options: CallMeteringOptions): Promise<void> {
  const { metrics } = options;
  const shared = await sharedStoreOf(app, options);
  const countRate = shared === undefined ? localRate(app, options) : await sharedRate(app, options, shared);
  const ledger = concurrencyLedger();

  /**
   * Counts every call of a batch against the rate, in order: synchronously while the counts answer at
   * once (in this process), after each answer when they come from Redis. Stops at the first refusal.
   */
  function countCalls(
    request: FastifyRequest,
    key: string,
    calls: number,
    from = 0,
  ): RateVerdict | Promise<RateVerdict> {
    for (let call = from; call < calls; call += 1) {
      const counted = countRate(request, key);
      if ('then' in counted) {
        return counted.then((verdict) =>
          verdict.allowed ? countCalls(request, key, calls, call + 1) : verdict,
        );
      }
      if (!counted.allowed) return counted;
    }
    return ALLOWED;
  }

  // A callback hook: an async one costs a promise and Fastify's continuation per request, and the rate
  // is counted synchronously unless Redis counts it.
  app.decorate('meterCalls', function meterCalls(request, reply, done) {
    const calls = countMeteredCalls(request.body);
    const caller = calls === 0 ? undefined : options.caller(request);
    if (caller === undefined) return done();
    // Every call of a batch takes a concurrency slot, reserved before anything awaits; a batch that
    // cannot run whole is refused before any call runs or spends rate budget.
    const { key } = caller;
    const running = ledger.running(key);
    if (running + calls > options.maxConcurrent) {
      const message = concurrencyMessage(calls, running, options.maxConcurrent);
      refuseTooMany(options, request, reply, caller, {
        reason: 'concurrency',
        retryAfterSeconds: 1,
        message,
      });
      return;
    }
    ledger.take(key, calls);
    metrics?.inflight(calls);
    const release = () => {
      ledger.release(key, calls);
      metrics?.inflight(-calls);
    };
    const admit = (verdict: RateVerdict) => {
      if (!verdict.allowed) {
        release();
        refuseTooMany(options, request, reply, caller, {
          reason: 'rate',
          retryAfterSeconds: verdict.retryAfterSeconds,
          message: `Rate limit exceeded: at most ${options.ratePerMinute} tool calls per minute per caller.`,
        });
        return;
      }
      // 'close' fires once the response ends or the client goes away, hijacked replies included; once
      // only, so `on` (once's wrapper is two objects per request).
      reply.raw.on('close', release);
      done();
    };
    const verdict = countCalls(request, key, calls);
    if (!('then' in verdict)) return admit(verdict);
    verdict
      .then(admit, (error: Error) => {
        release();
        done(error);
      })
      .catch(done);
  } satisfies preHandlerHookHandler);
}

/**
 * Decorates the app with `meterCalls`, the preHandler for the MCP route (it needs the parsed body):
 *
 *   await app.register(callMeteringPlugin, { ratePerMinute, maxConcurrent, caller, log });
 *   app.post(mcpPath, { onRequest: [app.authenticate], preHandler: [app.meterCalls] }, handler);
 */
export const callMeteringPlugin = fp(callMetering, { name: 'dagu-mcp-call-metering', fastify: '5.x' });
