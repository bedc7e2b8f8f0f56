import type { McpServer } from '@modelcontextprotocol/server';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AuditLog } from './audit/audit-log.ts';
import { authenticationPlugin, meteredCaller } from './auth/authentication.ts';
import { accessPolicyFor, type Identity } from './auth/identity.ts';
import type { JwksLoader } from './auth/jwks.ts';
import { DAGU_CLAIMS } from './auth/jwt.ts';
import { DEFAULT_SCOPES, supportedScopes } from './auth/scopes.ts';
import type { GatewayConfig } from './config.ts';
import type { DaguClient } from './dagu/types.ts';
import { createGatewayCore, type GatewayCore, loadTracing } from './gateway-core.ts';
import { callMeteringPlugin } from './http/call-metering.ts';
import { corsPlugin } from './http/cors.ts';
import { drainPlugin } from './http/drain.ts';
import { httpAnswersPlugin } from './http/errors.ts';
import { healthPlugin } from './http/health.ts';
import { lateReplyLogHook } from './http/late-reply.ts';
import { type Caller, mcpPlugin } from './http/mcp-route.ts';
import { metricsRoutePlugin } from './http/metrics-route.ts';
import { protectedResourcePlugin } from './http/protected-resource.ts';
import { auditRefusal } from './http/refusals.ts';
import { hostOriginPlugin } from './http/security.ts';
import { timeBoundsPlugin } from './http/time-bounds.ts';
import { type GatewayTls, tlsServerOptions } from './http/tls.ts';
import type { GatewayMetrics } from './metrics/metrics.ts';
import type { GatewayTracing } from './trace/tracing.ts';

export interface GatewayApp {
  app: FastifyInstance;
  metrics: GatewayMetrics;
  audit: AuditLog;
  dagu: DaguClient;
  /** A fresh MCP server on this gateway's read service and audit. */
  createMcpServer(): McpServer;
  /** Stops serving and releases every resource (plugins' own, then the core's). */
  close(): Promise<void>;
  /** A planned stop (SIGTERM): `/readyz` 503 and still serving for DRAIN_MS, then close(). */
  drainAndClose(): Promise<void>;
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

function createFastify(
  config: GatewayConfig,
  options: BuildOptions,
  tls: GatewayTls,
  tracing: GatewayTracing | undefined,
  lateReply: () => void,
): FastifyInstance {
  return Fastify({
    ...tls.serverOptions,
    // Forwarded headers count only from the listed proxies (TRUST_PROXY); none by default.
    ...(config.trustProxy.length > 0 ? { trustProxy: config.trustProxy } : {}),
    logger:
      options.logger === false
        ? false
        : {
            level: options.logger?.level ?? config.logLevel,
            serializers: LOG_SERIALIZERS,
            // Fastify's warning with a stack for each late reply becomes one debug line and a count.
            hooks: { logMethod: lateReplyLogHook(lateReply) },
            // Lines written while a traced call is served carry its `trace_id` and `span_id`.
            ...(tracing === undefined ? {} : { mixin: tracing.logFields }),
            ...(options.logger?.stream ? { stream: options.logger.stream } : {}),
          },
    // A request's own lines carry the host's trace id from its `traceparent` header (src/trace/tracing.ts).
    ...(tracing === undefined
      ? {}
      : {
          childLoggerFactory: (logger, bindings, childOptions, raw) =>
            logger.child({ ...bindings, ...tracing.hostTraceFields(raw.headers.traceparent) }, childOptions),
        }),
    bodyLimit: config.limits.bodyLimitBytes,
    // A `__proto__` key in tool arguments must reach our validator (the contract answers it), not fail parsing.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
    requestIdHeader: false,
    // A request on a connection still open when closing begins is served, not refused with 503:
    // the drain (src/http/drain.ts) closes every connection as it falls idle.
    return503OnClosing: false,
  });
}

/** The MCP route's request log: every call is in the audit log, so its two lines appear only at debug. */
const mcpRouteLogLevel = (level: string) =>
  level === 'trace' ? 'trace' : level === 'debug' ? 'debug' : 'warn';

/**
 * The HTTP gateway: the core, and one plugin per concern around it, in the order requests meet them.
 * Each plugin owns what it creates and releases it on close; the core closes last.
 */
export async function buildApp(config: GatewayConfig, options: BuildOptions = {}): Promise<GatewayApp> {
  const tls = tlsServerOptions(config);
  const tracing = await loadTracing(config);
  // The log is made before the metrics, which need it: late replies are counted once both exist.
  let countLateReply = () => {};
  const app = createFastify(config, options, tls, tracing, () => countLateReply());
  // Renewed certificate files are read again and used for new connections (closed with the app).
  tls.watch(app.server, app.log);
  app.addHook('onClose', async () => tls.close());
  const core: GatewayCore = createGatewayCore(config, app.log, { tracing });
  countLateReply = core.metrics.lateReply;
  try {
    await registerPlugins(app, core, config, options);
    if (tracing !== undefined) {
      // Registered last, closed first: the spans of every finished call are exported before the core closes.
      const { tracingPlugin } = await import('./trace/plugin.ts');
      await app.register(tracingPlugin, { tracing });
    }
  } catch (error) {
    await core.close();
    await tracing?.shutdown();
    throw error;
  }
  return {
    app,
    metrics: core.metrics,
    audit: core.audit,
    dagu: core.dagu,
    createMcpServer: core.createMcpServer,
    close: () => app.close(),
    drainAndClose: async () => {
      await app.drain();
      await app.close();
    },
  };
}

/**
 * What every request meets before authentication, in this order: time bounds, drain, plain HTTP
 * answers, the Host/Origin check, CORS.
 */
async function registerGuards(app: FastifyInstance, config: GatewayConfig, core: GatewayCore): Promise<void> {
  // Every request's time bounds, and Node's own client errors answered in the gateway's shape.
  await app.register(timeBoundsPlugin, { ...config.http, metrics: core.metrics, audit: core.audit });
  // SIGTERM: not ready at once, still serving for DRAIN_MS, then every connection closed as it idles.
  await app.register(drainPlugin, { drainMs: config.http.drainMs });
  await app.register(httpAnswersPlugin, { mcpPath: config.mcpPath });
  // DNS-rebinding protection on every route, before anything else runs. The gateway's own pages
  // (the built-in server's consent form) post from PUBLIC_URL's origin: never a cross-origin call.
  const ownOrigin = config.publicUrl === undefined ? [] : [new URL(config.publicUrl).origin];
  await app.register(hostOriginPlugin, {
    allowedHosts: config.allowedHosts,
    allowedOrigins: [...config.allowedOrigins, ...ownOrigin],
    loopbackOrigins: config.loopbackOrigins,
    audit: core.audit,
  });
  // Browsers: CORS for the admitted origins on /mcp and its metadata; a preflight is answered here,
  // before authentication (it carries no credential), and later refusals keep the CORS headers.
  await app.register(corsPlugin, {
    mcpPath: config.mcpPath,
    allowedOrigins: config.allowedOrigins,
    loopbackOrigins: config.loopbackOrigins,
  });
}

/** The MCP route's caller per identity, made once (an API key's Identity lives as long as its key file). */
const callers = new WeakMap<Identity, Caller>();

function callerOf(identity: Identity): Caller {
  let caller = callers.get(identity);
  if (caller === undefined) {
    const { id, kind, role } = identity;
    caller = Object.freeze({ identity: id, identityKind: kind, role, access: accessPolicyFor(identity) });
    callers.set(identity, caller);
  }
  return caller;
}

/**
 * AUTH_SERVER=builtin: the gateway's own authorization server (src/oauth), loaded only then. Its tokens
 * are verified like any authorization server's, with its key set read in-process (the keys rotate and
 * replicas share them), and the returned configuration names this gateway as the issuer.
 */
async function registerAuthServer(
  app: FastifyInstance,
  config: GatewayConfig,
  core: GatewayCore,
): Promise<{ authConfig: GatewayConfig; jwksLoader?: JwksLoader }> {
  if (config.authServer === undefined || config.publicUrl === undefined) return { authConfig: config };
  const { createBuiltinAuthServer } = await import('./oauth/plugin.ts');
  const server = await createBuiltinAuthServer({
    config: config.authServer,
    publicUrl: config.publicUrl,
    mcpPath: config.mcpPath,
    scopes: config.auth.scopes ?? DEFAULT_SCOPES,
    claims: config.auth.claims ?? DAGU_CLAIMS,
    groupsFile: config.auth.groupsFile,
    behindProxy: config.trustProxy.length > 0,
    audit: core.audit,
    metrics: core.metrics,
    log: app.log,
  });
  app.addHook('onClose', () => server.close());
  await app.register(server.plugin);
  return {
    authConfig: { ...config, auth: { ...config.auth, jwtIssuer: server.issuer } },
    jwksLoader: server.publicJwks,
  };
}

async function registerPlugins(
  app: FastifyInstance,
  core: GatewayCore,
  config: GatewayConfig,
  options: BuildOptions,
): Promise<void> {
  // onClose hooks run last-registered first: the core, registered first, is released after every plugin.
  app.addHook('onClose', () => core.close());
  // No probe of Dagu once closing has begun.
  app.addHook('preClose', async () => core.readiness.close());
  const { metrics, audit } = core;

  await registerGuards(app, config, core);
  const { authConfig, jwksLoader } = await registerAuthServer(app, config, core);
  await app.register(authenticationPlugin, {
    authenticator: {
      config: authConfig,
      log: app.log,
      options: { keys: { onReload: metrics.keyReload }, ...(jwksLoader ? { jwt: { jwksLoader } } : {}) },
    },
    mcpPath: config.mcpPath,
    publicUrl: config.publicUrl,
    metrics,
    audit,
  });
  await app.register(protectedResourcePlugin, {
    mcpPath: config.mcpPath,
    publicUrl: config.publicUrl,
    authorizationServers: app.authenticator.authorizationServers,
    ...(app.authenticator.scopes ? { scopesSupported: supportedScopes(app.authenticator.scopes) } : {}),
  });
  await app.register(callMeteringPlugin, {
    ratePerMinute: config.limits.rateLimitPerMinute,
    maxConcurrent: config.limits.maxConcurrentCallsPerIdentity,
    redisUrl: config.rateLimitRedisUrl,
    caller: meteredCaller,
    log: app.log,
    metrics,
    audit,
  });
  await app.register(healthPlugin, { dagu: core.readiness, checks: [audit.readiness, app.drainReadiness] });
  await app.register(metricsRoutePlugin, { metrics });
  await app.register(mcpPlugin, {
    path: config.mcpPath,
    server: core.server,
    bodyLimitBytes: config.limits.bodyLimitBytes,
    callDeadlineMs: config.limits.callDeadlineMs,
    leanPath: options.leanPath !== false,
    // Auth answers 401/403 before the body is parsed; limits need the parsed JSON-RPC method.
    onRequest: [app.authenticate],
    preHandler: [app.checkCallScopes, app.meterCalls],
    served: metrics.served,
    unserved: (request, reply, reason, { httpStatus, method, tool }) => {
      metrics.refused(reason);
      auditRefusal(audit, request, reply, {
        outcome: reason,
        reason,
        httpStatus,
        ...(method === undefined ? {} : { method }),
        ...(tool === undefined ? {} : { tool }),
        ...(request.identity ? { identity: request.identity.id, identityKind: request.identity.kind } : {}),
      });
    },
    logLevel: mcpRouteLogLevel(app.log.level),
    traceContext: config.tracing !== undefined,
    auditWritten: audit.written,
    caller: (request) => callerOf(request.identity!),
  });
}
