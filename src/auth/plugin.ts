import fastifyRateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AuditEntry } from '../audit/audit-log.ts';
import { publicBaseUrl, resourceMetadataPath } from '../http/protected-resource.ts';
import type { GatewayMetrics, RateLimitReason } from '../metrics/metrics.ts';
import type { Authenticator, AuthFailure } from './authenticate.ts';
import type { Identity } from './identity.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on the routes it guards; null elsewhere. */
    identity: Identity | null;
  }
  interface FastifyInstance {
    /** The hooks to put on the MCP route: `onRequest` authenticates, `preHandler` meters tool calls. */
    mcpAuth: McpAuthHooks;
  }
}

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface McpAuthHooks {
  /** Authenticates from `Authorization: Bearer`; answers 401/403 itself. Runs before the body is read. */
  onRequest: Hook;
  /** Per-identity rate limit and concurrency cap for `tools/call` and `resources/read`; answers 429 itself. */
  preHandler: Hook[];
}

export interface AuthPluginOptions {
  authenticator: Authenticator;
  /** The MCP endpoint path, for the `resource_metadata` link of the 401 challenge. */
  mcpPath: string;
  publicUrl?: string | undefined;
  metrics?: Pick<GatewayMetrics, 'authFailure' | 'rateLimited' | 'inflight'>;
  audit?: { record(entry: AuditEntry): void };
  /** Omit to meter nothing. `store` counts the rate elsewhere (Redis, shared by replicas); default in-process. */
  limits?: { ratePerMinute: number; maxConcurrent: number; store?: FastifyRateLimitStoreCtor | undefined };
  realm?: string;
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

/** The rate-limit and concurrency key: one bucket per identity; anonymous callers are told apart by address. */
export function identityKey(identity: Identity, ip: string): string {
  return identity.kind === 'anonymous' ? `anonymous:${ip}` : `${identity.kind}:${identity.id}`;
}

const pathOf = (url: string) => url.split('?', 1)[0];

async function authPluginImpl(app: FastifyInstance, options: AuthPluginOptions): Promise<void> {
  const { authenticator, metrics, audit } = options;
  const realm = options.realm ?? 'dagu-mcp-gateway';
  app.decorateRequest('identity', null);

  function challenge(request: FastifyRequest, failure: AuthFailure): string {
    const metadataUrl = `${publicBaseUrl(request, options.publicUrl)}${resourceMetadataPath(options.mcpPath)}`;
    const parts = [`realm="${realm}"`, `resource_metadata="${metadataUrl}"`];
    // RFC 6750 §3.1: no error code when the request carried no credential at all.
    if (failure.reason === 'malformed_header') parts.push('error="invalid_request"');
    else if (failure.reason !== 'missing_credentials') parts.push('error="invalid_token"');
    return `Bearer ${parts.join(', ')}`;
  }

  function denied(
    request: FastifyRequest,
    reply: FastifyReply,
    fields: Partial<AuditEntry> & { outcome: string },
  ) {
    audit?.record({
      event: 'mcp.request_denied',
      requestId: String(request.id),
      clientName: request.headers['user-agent'],
      httpMethod: request.method,
      path: pathOf(request.url),
      durationMs: reply.elapsedTime,
      ...fields,
    });
  }

  const onRequest: Hook = async (request, reply) => {
    const outcome = await authenticator.authenticate(request.headers.authorization);
    if (outcome.ok) {
      request.identity = outcome.identity;
      return;
    }
    metrics?.authFailure(outcome.reason);
    denied(request, reply, {
      identity: outcome.identity?.id,
      identityKind: outcome.identity?.kind,
      outcome: outcome.code,
      reason: outcome.reason,
      httpStatus: outcome.status,
    });
    if (outcome.status === 401) reply.header('www-authenticate', challenge(request, outcome));
    return reply.code(outcome.status).send({ code: outcome.code, message: outcome.message });
  };

  const preHandler: Hook[] = [];
  const limits = options.limits;
  if (limits !== undefined) {
    // @fastify/rate-limit's store and window, driven from our hook (createRateLimit) so that only
    // tool calls are counted, the key is the identity, and the 429 body is ours.
    await app.register(fastifyRateLimit, { global: false, ...(limits.store ? { store: limits.store } : {}) });
    const rateLimit = app.createRateLimit({
      max: limits.ratePerMinute,
      timeWindow: 60_000,
      keyGenerator: (request) => identityKey(request.identity!, request.ip),
    });
    const active = new Map<string, number>();

    const refuse = (
      request: FastifyRequest,
      reply: FastifyReply,
      reason: RateLimitReason,
      retryAfterSeconds: number,
      message: string,
    ) => {
      metrics?.rateLimited(reason);
      const first = meteredMessages(request.body)[0];
      denied(request, reply, {
        identity: request.identity?.id,
        identityKind: request.identity?.kind,
        method: first?.method as string | undefined,
        tool: typeof first?.params?.name === 'string' ? first.params.name : undefined,
        outcome: 'rate_limited',
        reason,
        httpStatus: 429,
      });
      return reply
        .code(429)
        .header('retry-after', String(Math.max(1, retryAfterSeconds)))
        .send({ code: 'rate_limited', message });
    };

    const release = (key: string, calls: number) => {
      const left = (active.get(key) ?? calls) - calls;
      if (left > 0) active.set(key, left);
      else active.delete(key);
    };

    preHandler.push(async function limitToolCalls(request, reply) {
      const calls = countMeteredCalls(request.body);
      if (calls === 0 || request.identity === null) return;
      // Every call of a batch takes a concurrency slot, reserved before anything awaits; a batch that
      // cannot run whole is refused before any call runs or spends rate budget.
      const key = identityKey(request.identity, request.ip);
      const running = active.get(key) ?? 0;
      if (running + calls > limits.maxConcurrent) {
        const free = Math.max(0, limits.maxConcurrent - running);
        return refuse(
          request,
          reply,
          'concurrency',
          1,
          calls === 1
            ? `Too many concurrent calls: at most ${limits.maxConcurrent} at a time per caller.`
            : `Too many concurrent calls: the batch holds ${calls} calls, ${free} of at most ${limits.maxConcurrent} are free for this caller.`,
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
          return refuse(
            request,
            reply,
            'rate',
            result.ttlInSeconds,
            `Rate limit exceeded: at most ${limits.ratePerMinute} tool calls per minute per caller.`,
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

  app.decorate('mcpAuth', { onRequest, preHandler } satisfies McpAuthHooks);
}

/**
 * Registers on the app (or the MCP scope) and decorates it with `mcpAuth` hooks for the MCP route:
 *
 *   await app.register(authPlugin, { authenticator, mcpPath, metrics, audit, limits });
 *   app.post(mcpPath, { onRequest: [app.mcpAuth.onRequest], preHandler: app.mcpAuth.preHandler }, handler);
 *
 * The route-level onRequest runs after the app-level Host/Origin hook and before the body is parsed,
 * so an unauthenticated oversized body gets 401, not 413.
 */
export const authPlugin = fp(authPluginImpl, { name: 'dagu-mcp-auth', fastify: '5.x' });
