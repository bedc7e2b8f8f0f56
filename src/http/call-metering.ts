import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Log } from '../core/log.ts';
import type { GatewayMetrics, RateLimitReason } from '../metrics/metrics.ts';
import { createSharedRateLimitStore } from './rate-limit-store.ts';
import { auditRefusal, type RefusalAudit, refuse } from './refusals.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The route preHandler that meters `tools/call`, `resources/read` and `completion/complete`: the
     * per-caller rate, the per-caller concurrency cap and the in-flight gauge; answers 429 itself.
     */
    meterCalls(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
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

const meteredMessages = (body: unknown): RpcMessage[] =>
  (Array.isArray(body) ? body : [body]).filter(
    (message): message is RpcMessage =>
      typeof message === 'object' &&
      message !== null &&
      METERED_METHODS.has((message as RpcMessage).method as string),
  );

/** The number of metered JSON-RPC requests in a parsed body (a batch counts each one). */
export const countMeteredCalls = (body: unknown): number => meteredMessages(body).length;

async function callMetering(app: FastifyInstance, options: CallMeteringOptions): Promise<void> {
  const { metrics, audit } = options;
  const shared =
    options.redisUrl === undefined
      ? undefined
      : createSharedRateLimitStore({
          url: options.redisUrl,
          log: options.log,
          ...(metrics
            ? { onStoreChange: metrics.rateLimitStore, onFallback: metrics.rateLimitStoreFallback }
            : {}),
        });
  if (shared) app.addHook('onClose', () => shared.close());
  // @fastify/rate-limit's store and window, driven from our hook (createRateLimit) so that only
  // tool calls are counted, the key is the caller, and the 429 body is ours.
  await app.register(fastifyRateLimit, { global: false, ...(shared ? { store: shared.store } : {}) });
  const rateLimit = app.createRateLimit({
    max: options.ratePerMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => options.caller(request)?.key ?? `ip:${request.ip}`,
  });
  const active = new Map<string, number>();

  const tooMany = (
    request: FastifyRequest,
    reply: FastifyReply,
    caller: MeteredCaller,
    reason: RateLimitReason,
    retryAfterSeconds: number,
    message: string,
  ) => {
    metrics?.rateLimited(reason);
    const first = meteredMessages(request.body)[0];
    auditRefusal(audit, request, reply, {
      identity: caller.identity,
      identityKind: caller.identityKind,
      method: first?.method as string | undefined,
      tool: typeof first?.params?.name === 'string' ? first.params.name : undefined,
      outcome: 'rate_limited',
      reason,
      httpStatus: 429,
    });
    return refuse(reply, 'rate_limited', {
      message,
      headers: { 'retry-after': String(Math.max(1, retryAfterSeconds)) },
    });
  };

  const release = (key: string, calls: number) => {
    const left = (active.get(key) ?? calls) - calls;
    if (left > 0) active.set(key, left);
    else active.delete(key);
  };

  app.decorate('meterCalls', async function meterCalls(request: FastifyRequest, reply: FastifyReply) {
    const calls = countMeteredCalls(request.body);
    const caller = calls === 0 ? undefined : options.caller(request);
    if (caller === undefined) return;
    // Every call of a batch takes a concurrency slot, reserved before anything awaits; a batch that
    // cannot run whole is refused before any call runs or spends rate budget.
    const { key } = caller;
    const running = active.get(key) ?? 0;
    if (running + calls > options.maxConcurrent) {
      const free = Math.max(0, options.maxConcurrent - running);
      return tooMany(
        request,
        reply,
        caller,
        'concurrency',
        1,
        calls === 1
          ? `Too many concurrent calls: at most ${options.maxConcurrent} at a time per caller.`
          : `Too many concurrent calls: the batch holds ${calls} calls, ${free} of at most ${options.maxConcurrent} are free for this caller.`,
      );
    }
    active.set(key, running + calls);
    metrics?.inflight(calls);
    // Every call of a batch counts toward the rate.
    for (let call = 0; call < calls; call += 1) {
      const result = await rateLimit(request);
      if (!result.isAllowed && result.isExceeded) {
        release(key, calls);
        metrics?.inflight(-calls);
        return tooMany(
          request,
          reply,
          caller,
          'rate',
          result.ttlInSeconds,
          `Rate limit exceeded: at most ${options.ratePerMinute} tool calls per minute per caller.`,
        );
      }
    }
    // 'close' fires once the response ends or the client goes away, hijacked replies included.
    reply.raw.once('close', () => {
      release(key, calls);
      metrics?.inflight(-calls);
    });
  });
}

/**
 * Decorates the app with `meterCalls`, the preHandler for the MCP route (it needs the parsed body):
 *
 *   await app.register(callMeteringPlugin, { ratePerMinute, maxConcurrent, caller, log });
 *   app.post(mcpPath, { onRequest: [app.authenticate], preHandler: [app.meterCalls] }, handler);
 */
export const callMeteringPlugin = fp(callMetering, { name: 'dagu-mcp-call-metering', fastify: '5.x' });
