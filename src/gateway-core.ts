import type { McpServer } from '@modelcontextprotocol/server';
import { type AuditLog, createAuditLog } from './audit/audit-log.ts';
import type { GatewayConfig } from './config.ts';
import { ByteLru, cacheSlice } from './core/byte-lru.ts';
import type { Log } from './core/log.ts';
import { createDaguClient } from './dagu/client.ts';
import type { Answer as DaguAnswer } from './dagu/coalesce.ts';
import { createDaguReadiness, type DaguReadiness } from './dagu/readiness.ts';
import type { DaguClient } from './dagu/types.ts';
import { createMcpServer, type McpServerOptions } from './mcp/server.ts';
import { type CacheUse, createMetrics, type GatewayMetrics } from './metrics/metrics.ts';
import { createOperationObserver } from './observe.ts';
import { createCompletionService } from './read/completion.ts';
import { createReadService } from './read/service.ts';
import { TARGET_HANDLERS } from './read/targets/index.ts';
import { FinishedLogCache } from './read/upstream/finished-logs.ts';
import type { LogPart } from './read/upstream/log.ts';
import type { GatewayTracing } from './trace/tracing.ts';
import { GATEWAY_VERSION } from './version.ts';
import { createWorkbookReader } from './workbook/index.ts';

/**
 * What the gateway is without a transport: the read service and everything it stands on, with the
 * metrics, audit and observer every transport reports to. HTTP adds its plugins around it (`app.ts`);
 * `--stdio` serves it as it is.
 */
export interface GatewayCore {
  readonly metrics: GatewayMetrics;
  readonly audit: AuditLog;
  readonly dagu: DaguClient;
  /** Dagu's readiness (background probe unless `readiness.probeIntervalMs` is 0). */
  readonly readiness: DaguReadiness;
  /** What every MCP server of this gateway serves. */
  readonly server: McpServerOptions;
  /** A fresh MCP server on this core (per HTTP request on the SDK path, once per stdio connection). */
  createMcpServer(): McpServer;
  /** Releases everything, in the reverse order of creation; a second call gets the first one's promise. */
  close(): Promise<void>;
}

/** Tracing from the `OTEL_*` settings; its modules are loaded only when they turn it on. */
export async function loadTracing(config: GatewayConfig): Promise<GatewayTracing | undefined> {
  if (config.tracing === undefined) return undefined;
  const { createTracing } = await import('./trace/tracing.ts');
  return createTracing(config.tracing, config.dagu.url);
}

/** What the transport adds to the core: tracing, when the `OTEL_*` variables turned it on (loaded by the caller). */
export interface CoreExtras {
  tracing?: GatewayTracing | undefined;
}

/** Builds the core from the configuration: every expensive object is created here, once. */
export function createGatewayCore(config: GatewayConfig, log: Log, extras: CoreExtras = {}): GatewayCore {
  const { tracing } = extras;
  // With tracing, the call-duration histogram keeps a trace id per bucket (exemplars).
  const metrics = createMetrics({ exemplars: tracing !== undefined });
  const audit = createAuditLog(config.auditLog, { metrics, log });
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
  // The client reports each answer to the readiness probe, which itself probes through the client.
  const answered = { observe: (_answered: boolean) => {} };
  const dagu = createDaguClient(config.dagu, {
    onUpstream: (route, outcome, seconds) => {
      metrics.observeUpstream(route, outcome, seconds);
      // Only a whole answer counts as Dagu answering (a body cut short does not).
      answered.observe(typeof outcome === 'number');
    },
    onJoined:
      tracing === undefined
        ? metrics.upstreamJoined
        : (route) => {
            metrics.upstreamJoined(route);
            tracing.joined(route);
          },
    ...(tracing === undefined ? {} : { traceRequest: tracing.traceRequest }),
    ...(config.cache.ttlMs > 0
      ? { answers: { cache: cacheUse<DaguAnswer>('dagu_ttl'), ttlMs: config.cache.ttlMs } }
      : {}),
  });
  const readiness = createDaguReadiness({
    probe: (signal) => dagu.probe(signal),
    url: config.dagu.url,
    log,
    timeoutMs: config.readiness.probeTimeoutMs,
    intervalMs: config.readiness.probeIntervalMs,
    onProbe: (snapshot) => metrics.daguProbed(snapshot),
  });
  answered.observe = readiness.observe;
  const workbook = createWorkbookReader(config.workbook, { onRefused: metrics.workbookRejected });
  metrics.watchWorkbookPool(() => workbook.load);
  if (workbook.hashRates)
    log.debug({ hashRoundsPerMs: workbook.hashRates }, 'workbook key derivation calibrated');
  const logWindows = cacheUse<LogPart>('step_log');
  const logCache = logWindows === undefined ? undefined : new FinishedLogCache(logWindows);
  const reads = createReadService({ dagu, workbook, ...(logCache ? { logCache } : {}) }, TARGET_HANDLERS);
  const server: McpServerOptions = {
    version: GATEWAY_VERSION,
    reads,
    completions: createCompletionService(reads),
    observe: createOperationObserver({ metrics, audit, log, tracer: tracing?.operations }),
    toolText: config.toolText,
  };

  // Closed once: a second close() (stdio's end and a signal, say) gets the first one's promise.
  let closing: Promise<void> | undefined;
  const closeAll = async () => {
    readiness.close();
    await workbook.close();
    await dagu.close();
    audit.close();
  };
  return {
    metrics,
    audit,
    dagu,
    readiness,
    server,
    createMcpServer: () => createMcpServer(server),
    close: () => {
      closing ??= closeAll();
      return closing;
    },
  };
}
