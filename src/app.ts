import type { McpServer } from '@modelcontextprotocol/server';
import Fastify, { type FastifyInstance } from 'fastify';
import { type AuditLog, createAuditLog } from './audit/audit-log.ts';
import { createAuthenticator } from './auth/authenticate.ts';
import { accessPolicyFor } from './auth/identity.ts';
import { authPlugin } from './auth/plugin.ts';
import { createSharedRateLimitStore } from './auth/rate-limit-store.ts';
import type { GatewayConfig } from './config.ts';
import { ByteLru, cacheSlice } from './core/byte-lru.ts';
import { createDaguClient } from './dagu/client.ts';
import type { Answer as DaguAnswer } from './dagu/coalesce.ts';
import type { DaguClient } from './dagu/types.ts';
import { installStrictJsonParser } from './http/body.ts';
import { installErrorHandlers } from './http/errors.ts';
import { createDaguReadiness, type DaguReadiness, healthRoutes } from './http/health.ts';
import { mcpRoute } from './http/mcp-route.ts';
import { advertisedAuthorizationServers, protectedResourceRoutes } from './http/protected-resource.ts';
import { hostOriginHook } from './http/security.ts';
import { tlsServerOptions } from './http/tls.ts';
import { createLeanPath } from './mcp/lean.ts';
import { createMcpEndpoint, createMcpServer, type McpServerOptions, serverInfo } from './mcp/server.ts';
import { type CacheUse, createMetrics, type GatewayMetrics } from './metrics/metrics.ts';
import { createOperationObserver } from './observe.ts';
import { createCompletionService } from './read/completion.ts';
import { createReadService } from './read/service.ts';
import { TARGET_HANDLERS } from './read/targets/index.ts';
import { FinishedLogCache } from './read/upstream/finished-logs.ts';
import type { LogPart } from './read/upstream/log.ts';
import { GATEWAY_VERSION } from './version.ts';
import { createWorkbookReader } from './workbook/index.ts';

export interface GatewayApp {
  app: FastifyInstance;
  metrics: GatewayMetrics;
  audit: AuditLog;
  dagu: DaguClient;
  /** A fresh MCP server on this gateway's read service and audit, for transports other than HTTP (`--stdio`). */
  createMcpServer(): McpServer;
  /** Stops serving and releases every resource (pool, audit file, watchers). */
  close(): Promise<void>;
}

export interface BuildOptions {
  /** `false` silences the application log; a `stream` receives its JSON lines (tests read them). */
  logger?: false | { level?: string; stream?: NodeJS.WritableStream };
  /**
   * `false` serves every request through the MCP SDK (the reference the lean path is tested against);
   * by default `dagu_read` calls and resource reads take the lean path.
   */
  leanPath?: boolean;
}

/**
 * Request log lines carry the path only: a query string may hold a credential someone sent where the
 * gateway never reads one, and it must not reach the log either.
 */
const LOG_SERIALIZERS = {
  req: (request: { method: string; url: string; ip?: string }) => ({
    method: request.method,
    url: request.url.split('?')[0],
    remoteAddress: request.ip,
  }),
};

/** Builds the whole gateway from its configuration: every expensive object is created here, once. */
export async function buildApp(config: GatewayConfig, options: BuildOptions = {}): Promise<GatewayApp> {
  const tls = tlsServerOptions(config);
  const app = Fastify({
    ...tls.serverOptions,
    // Forwarded headers count only from the listed proxies (TRUST_PROXY); none by default.
    ...(config.trustProxy.length > 0 ? { trustProxy: config.trustProxy } : {}),
    logger:
      options.logger === false
        ? false
        : {
            level: options.logger?.level ?? config.logLevel,
            serializers: LOG_SERIALIZERS,
            ...(options.logger?.stream ? { stream: options.logger.stream } : {}),
          },
    bodyLimit: config.limits.bodyLimitBytes,
    // A `__proto__` key in tool arguments must reach our validator (design §1b), not fail JSON parsing.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
    requestIdHeader: false,
  });
  tls.watch(app.server, app.log);
  const metrics = createMetrics();
  const audit = createAuditLog(config.auditLog, { metrics, log: app.log });
  const authenticator = await createAuthenticator(config, app.log, { keys: { onReload: metrics.keyReload } });
  let readiness: DaguReadiness | undefined;
  // One cache for every caller, bounded by CACHE_MAX_BYTES: finished step logs, and any answer under CACHE_TTL_MS.
  const cache =
    config.cache.maxBytes > 0
      ? new ByteLru<unknown>(config.cache.maxBytes, { evicted: metrics.cacheEvicted })
      : undefined;
  if (cache !== undefined) {
    metrics.watchCache(() => ({ bytes: cache.bytes, entries: cache.size, maxBytes: cache.maxBytes }));
  }
  const cacheUse = <V>(use: CacheUse) =>
    cache === undefined ? undefined : cacheSlice<V, CacheUse>(cache, use, metrics.cacheLookup);
  const dagu = createDaguClient(config.dagu, {
    onUpstream: (route, status, seconds) => {
      metrics.observeUpstream(route, status, seconds);
      readiness?.observe(status !== 'error');
    },
    onJoined: metrics.upstreamJoined,
    ...(config.cache.ttlMs > 0
      ? { answers: { cache: cacheUse<DaguAnswer>('dagu_ttl'), ttlMs: config.cache.ttlMs } }
      : {}),
  });
  readiness = createDaguReadiness({
    probe: (signal) => dagu.probe(signal),
    url: config.dagu.url,
    log: app.log,
    timeoutMs: config.readiness.probeTimeoutMs,
    intervalMs: config.readiness.probeIntervalMs,
    onProbe: (snapshot) => metrics.daguProbed(snapshot),
  });
  const workbook = createWorkbookReader(config.workbook, { onRefused: metrics.workbookRejected });
  metrics.watchWorkbookPool(() => workbook.load);
  if (workbook.hashRates)
    app.log.debug({ hashRoundsPerMs: workbook.hashRates }, 'workbook key derivation calibrated');
  const logWindows = cacheUse<LogPart>('step_log');
  const logCache = logWindows === undefined ? undefined : new FinishedLogCache(logWindows);
  const reads = createReadService({ dagu, workbook, ...(logCache ? { logCache } : {}) }, TARGET_HANDLERS);

  const observe = createOperationObserver({ metrics, audit, log: app.log });

  const serverOptions: McpServerOptions = {
    version: GATEWAY_VERSION,
    reads,
    completions: createCompletionService(reads),
    observe,
    toolText: config.toolText,
  };
  const endpoint = createMcpEndpoint({
    ...serverOptions,
    maxRequestBodySize: config.limits.bodyLimitBytes,
    onError: (error) => app.log.debug({ err: error }, 'mcp transport error'),
  });

  installErrorHandlers(app, config.mcpPath);
  installStrictJsonParser(app);
  // DNS-rebinding protection on every route, before anything else runs.
  app.addHook(
    'onRequest',
    hostOriginHook({
      allowedHosts: config.allowedHosts,
      allowedOrigins: config.allowedOrigins,
      loopbackOrigins: config.loopbackOrigins,
      audit,
    }),
  );
  await app.register(protectedResourceRoutes, {
    mcpPath: config.mcpPath,
    publicUrl: config.publicUrl,
    authorizationServers: advertisedAuthorizationServers(authenticator.jwtMode, config.auth.jwtIssuer),
  });
  const sharedRateLimit = config.rateLimitRedisUrl
    ? createSharedRateLimitStore({
        url: config.rateLimitRedisUrl,
        log: app.log,
        onStoreChange: metrics.rateLimitStore,
        onFallback: metrics.rateLimitStoreFallback,
      })
    : undefined;
  await app.register(authPlugin, {
    authenticator,
    mcpPath: config.mcpPath,
    publicUrl: config.publicUrl,
    metrics,
    audit,
    limits: {
      ratePerMinute: config.limits.rateLimitPerMinute,
      maxConcurrent: config.limits.maxConcurrentCallsPerIdentity,
      store: sharedRateLimit?.store,
    },
  });
  await app.register(healthRoutes, { dagu: readiness, checks: [audit.readiness] });
  app.get('/metrics', async (_request, reply) =>
    reply.type(metrics.contentType).send(await metrics.render()),
  );
  await app.register(mcpRoute, {
    path: config.mcpPath,
    handler: endpoint,
    bodyLimitBytes: config.limits.bodyLimitBytes,
    callDeadlineMs: config.limits.callDeadlineMs,
    // Auth answers 401/403 before the body is parsed; limits need the parsed JSON-RPC method.
    onRequest: [app.mcpAuth.onRequest],
    preHandler: app.mcpAuth.preHandler,
    ...(options.leanPath === false
      ? {}
      : {
          lean: createLeanPath({
            reads,
            observe,
            serverInfo: serverInfo(GATEWAY_VERSION),
            toolText: config.toolText,
          }),
        }),
    served: metrics.served,
    // Every call is in the audit log; the two request lines per POST /mcp appear only at debug level.
    logLevel: app.log.level === 'trace' ? 'trace' : app.log.level === 'debug' ? 'debug' : 'warn',
    caller: (request) => {
      const identity = request.identity!;
      return {
        identity: identity.id,
        identityKind: identity.kind,
        role: identity.role,
        access: accessPolicyFor(identity),
      };
    },
  });

  return {
    app,
    metrics,
    audit,
    dagu,
    createMcpServer: () => createMcpServer(serverOptions),
    close: async () => {
      readiness.close();
      tls.close();
      await app.close();
      await sharedRateLimit?.close();
      await endpoint.close();
      await authenticator.close();
      await workbook.close();
      await dagu.close();
      audit.close();
    },
  };
}
