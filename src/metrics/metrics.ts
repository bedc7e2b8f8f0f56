import {
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  Registry,
  type RegistryContentType,
} from 'prom-client';
import { AUTH_FAILURE_REASONS, type AuthFailureReason } from '../core/auth-reasons.ts';
import { DEPRECATED_TARGET_ALIASES, ERROR_CODES, READ_TARGETS } from '../core/contract.ts';
import { MCP_METHODS } from '../core/mcp-methods.ts';
import { REFUSAL_REASONS, type RefusalReason } from '../core/refusal-reasons.ts';
import { exposition, observeWithTrace, operationHistogram } from './exemplars.ts';

/**
 * Prometheus metrics of the gateway, on a registry of its own (tests build many apps in one process).
 * Every label value goes through a bounded mapping: DAG names, run ids, URIs and free text never
 * become label values; anything unexpected is `other`.
 */

export const OTHER = 'other';

export const MCP_PROTOCOL_VERSIONS = [
  '2024-11-05',
  '2025-03-26',
  '2025-06-18',
  '2025-11-25',
  '2026-07-28',
] as const;

/** Besides the contract's codes: a JSON-RPC error code (`-32602`), a deadline, or an unexpected throw. */
const EXTRA_ERROR_TYPES = ['timeout', 'aborted', 'tool_error', 'rate_limited'] as const;

const oneOf = (allowed: readonly string[]) => {
  const set = new Set(allowed);
  return (value: string | undefined): string | undefined =>
    value === undefined || value === '' ? undefined : set.has(value) ? value : OTHER;
};

export const boundedMethod = oneOf(MCP_METHODS);
export const boundedProtocolVersion = oneOf(MCP_PROTOCOL_VERSIONS);
const knownTarget = oneOf([...READ_TARGETS]);
const knownErrorType = oneOf([...ERROR_CODES, ...EXTRA_ERROR_TYPES]);

/** A read target label: the contract's targets (deprecated aliases folded into their target), else `other`. */
export function boundedTarget(value: string | undefined): string | undefined {
  return knownTarget(value === undefined ? undefined : (DEPRECATED_TARGET_ALIASES[value] ?? value));
}

export function boundedErrorType(value: string | number | undefined): string | undefined {
  if (typeof value === 'number')
    return Number.isInteger(value) && value <= -32000 && value >= -32768 ? String(value) : OTHER;
  if (value !== undefined && /^-32[0-7]\d\d$/.test(value)) return value;
  return knownErrorType(value);
}

/** The upstream failure kinds (src/dagu/dispatch.ts `UpstreamOutcome`) a `status` label may carry. */
const UPSTREAM_FAILURES = ['timeout', 'network_error', 'aborted', 'bad_body'];

/** An HTTP status (`200`), or a transport failure kind; anything else is `other`. */
export function boundedStatus(value: number | string): string {
  const text = String(value);
  return /^[1-5]\d\d$/.test(text) || UPSTREAM_FAILURES.includes(text) ? text : OTHER;
}

/** Route templates come from code, but cap the distinct values anyway in case a raw path slips in. */
function templateGuard(limit: number) {
  const seen = new Set<string>();
  return (route: string): string => {
    if (!/^[A-Za-z0-9/{}_.:-]{1,128}$/.test(route)) return OTHER;
    if (seen.has(route)) return route;
    if (seen.size >= limit) return OTHER;
    seen.add(route);
    return route;
  };
}

export interface OperationObservation {
  /** The MCP method, e.g. `tools/call` (`mcp.method.name`). */
  method: string;
  /** The tool name for `tools/call` (`gen_ai.tool.name`). */
  tool?: string;
  /** The `dagu_read` target, when one was resolved. */
  target?: string;
  /** The contract error code, or a JSON-RPC error code; absent on success (`error.type`). */
  errorType?: string | number;
  /** The negotiated protocol revision (`mcp.protocol.version`). */
  protocolVersion?: string;
  durationSeconds: number;
  /** The operation's trace (tracing on): kept as the bucket's exemplar (`trace_id`). */
  traceId?: string;
}

export type RateLimitReason = 'rate' | 'concurrency';

/** `lean`: the gateway's own path for dagu_read calls and resource reads; `sdk`: the MCP SDK. */
export type ServingPath = 'lean' | 'sdk';
/** Why the workbook pool refused a read: its queue was full, or no worker was free in time. */
export const WORKBOOK_REJECT_REASONS = ['queue_full', 'queue_timeout'] as const;
export type WorkbookRejectReason = (typeof WORKBOOK_REJECT_REASONS)[number];

/** The uses of the shared cache: finished step-log windows, and any Dagu answer under CACHE_TTL_MS. */
export const CACHE_USES = ['step_log', 'dagu_ttl'] as const;
export type CacheUse = (typeof CACHE_USES)[number];

/** The shared cache as the metrics see it, read at each scrape. */
export interface CacheGauge {
  bytes: number;
  entries: number;
  maxBytes: number;
}

/** The workbook pool as the metrics see it, read at each scrape. */
export interface WorkbookPoolGauge {
  size: number;
  running: number;
  queued: number;
}

export interface GatewayMetrics {
  readonly registry: Registry;
  /** The Content-Type of `render()`'s output. */
  readonly contentType: string;
  observeOperation(observation: OperationObservation): void;
  observeUpstream(route: string, status: number | string, durationSeconds: number): void;
  /** One Dagu GET answered by an identical request another read had asked for (no request of its own). */
  upstreamJoined(route: string): void;
  /** One lookup in the shared cache, by its use (`step_log`, `dagu_ttl`). */
  cacheLookup(cache: CacheUse, result: 'hit' | 'miss'): void;
  /** Entries the shared cache dropped to stay within CACHE_MAX_BYTES. */
  cacheEvicted(count: number): void;
  /** Reports the shared cache's size from `load()` at every scrape. */
  watchCache(load: () => CacheGauge): void;
  authFailure(reason: AuthFailureReason): void;
  rateLimited(reason: RateLimitReason): void;
  /** Adds `delta` (the calls that start, negative when they end) to the in-flight gauge. */
  inflight(delta: number): void;
  auditWriteFailure(): void;
  keyReload(result: 'ok' | 'error'): void;
  /** The result of the last readiness probe of Dagu: `dagu_up` 1/0 and `dagu_build_info{version}` 1. */
  daguProbed(probe: { reachable: boolean; version?: string | undefined }): void;
  /** The rate-limit store now counting calls: `redis` (shared by replicas) or `local` (this process). */
  rateLimitStore(store: 'redis' | 'local'): void;
  /** One call counted in this process because the shared store failed. */
  rateLimitStoreFallback(): void;
  /** One JSON-RPC message answered on the MCP endpoint, by the path that served it. */
  served(path: ServingPath): void;
  /** Reports the workbook pool's size, busy workers and queue from `load()` at every scrape. */
  watchWorkbookPool(load: () => WorkbookPoolGauge): void;
  workbookRejected(reason: WorkbookRejectReason): void;
  refused(reason: RefusalReason): void;
  /** The exposition text for `GET /metrics`. */
  render(): Promise<string>;
  /**
   * The exposition a scraper asked for: OpenMetrics, with the call-duration exemplars, when exemplars
   * are on and `accept` names `application/openmetrics-text`; Prometheus text otherwise.
   */
  exposition(accept: string | undefined): Promise<{ contentType: string; body: string }>;
}

export interface MetricsOptions {
  /** Default process metrics (CPU, memory, event loop, GC). Default true. */
  defaultMetrics?: boolean;
  /** Tool names that may appear as `gen_ai_tool_name`. Default `['dagu_read']`. */
  toolNames?: readonly string[];
  /** Distinct upstream route templates kept before folding into `other`. Default 64. */
  maxUpstreamRoutes?: number;
  /** Exemplars (`trace_id`) on the call-duration histogram, shown in OpenMetrics scrapes (tracing on). Default false. */
  exemplars?: boolean;
}

const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(options: MetricsOptions = {}): GatewayMetrics {
  const registry = new Registry();
  // prom-client keeps exemplars only on an OpenMetrics registry; exposition() renders either format.
  if (options.exemplars === true) {
    (registry as unknown as Registry<RegistryContentType>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  }
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const tool = oneOf(options.toolNames ?? ['dagu_read']);
  const route = templateGuard(options.maxUpstreamRoutes ?? 64);

  const operationDuration = operationHistogram(registry, options.exemplars === true);
  const upstreamDuration = new Histogram({
    name: 'dagu_upstream_request_duration_seconds',
    help: 'Duration of the gateway’s requests to the Dagu REST API, by route template and HTTP status.',
    labelNames: ['route', 'status'],
    buckets: UPSTREAM_BUCKETS,
    registers: [registry],
  });
  const upstreamJoined = new Counter({
    name: 'dagu_upstream_requests_joined_total',
    help: 'Dagu GETs answered by an identical request that another read asked for in the same event-loop turn (coalesced: no request of their own), by route template.',
    labelNames: ['route'],
    registers: [registry],
  });
  const cacheLookups = new Counter({
    name: 'mcp_gateway_cache_lookups_total',
    help: 'Lookups in the shared in-memory cache, by use (`step_log`: finished step-log windows; `dagu_ttl`: any Dagu answer under CACHE_TTL_MS) and result (`hit`, `miss`).',
    labelNames: ['cache', 'result'],
    registers: [registry],
  });
  for (const cache of CACHE_USES)
    for (const result of ['hit', 'miss']) cacheLookups.inc({ cache, result }, 0);
  const cacheEvictions = new Counter({
    name: 'mcp_gateway_cache_evictions_total',
    help: 'Entries the shared cache dropped to stay within CACHE_MAX_BYTES.',
    registers: [registry],
  });
  /** A gauge whose value is read at each scrape. */
  const scrapedGauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  let cacheLoad: () => CacheGauge = () => ({ bytes: 0, entries: 0, maxBytes: 0 });
  scrapedGauge('mcp_gateway_cache_bytes', 'Bytes held by the shared cache now.', () => cacheLoad().bytes);
  scrapedGauge(
    'mcp_gateway_cache_entries',
    'Entries held by the shared cache now.',
    () => cacheLoad().entries,
  );
  scrapedGauge(
    'mcp_gateway_cache_max_bytes',
    'Bytes the shared cache may hold (CACHE_MAX_BYTES; 0: off).',
    () => cacheLoad().maxBytes,
  );
  const authFailures = new Counter({
    name: 'mcp_gateway_auth_failures_total',
    help: 'Requests refused by authentication (401) or by the API key surface rule (403), by reason.',
    labelNames: ['reason'],
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: 'mcp_gateway_rate_limited_total',
    help: 'Tool calls refused with 429: per-identity rate (`rate`) or concurrent calls (`concurrency`).',
    labelNames: ['reason'],
    registers: [registry],
  });
  const inflight = new Gauge({
    name: 'mcp_gateway_inflight_calls',
    help: 'Tool calls and resource reads being served now.',
    registers: [registry],
  });
  const auditWriteFailures = new Counter({
    name: 'mcp_gateway_audit_write_failures_total',
    help: 'Audit records that could not be written (each one is also reported on /readyz).',
    registers: [registry],
  });
  const keyReloads = new Counter({
    name: 'mcp_gateway_api_keys_reloads_total',
    help: 'Reloads of the API key file (SIGHUP or file change), by result; on error the previous keys stay.',
    labelNames: ['result'],
    registers: [registry],
  });
  const daguUp = new Gauge({
    name: 'dagu_up',
    help: 'Whether Dagu answered the last readiness probe of its health route (1) or not (0).',
    registers: [registry],
  });
  const daguBuildInfo = new Gauge({
    name: 'dagu_build_info',
    help: 'The version the connected Dagu reports on its health route (always 1; one series at a time).',
    labelNames: ['version'],
    registers: [registry],
  });
  let shownVersion: string | undefined;
  const rateLimitStore = new Gauge({
    name: 'mcp_gateway_rate_limit_store',
    help: 'Where the per-caller rate limit is counted now: 1 for `redis` (shared by replicas) or `local` (this process alone), 0 for the other.',
    labelNames: ['store'],
    registers: [registry],
  });
  const rateLimitStoreFallbacks = new Counter({
    name: 'mcp_gateway_rate_limit_store_fallbacks_total',
    help: 'Calls counted in this process because the shared rate-limit store (Redis) did not answer.',
    registers: [registry],
  });
  const useRateLimitStore = (store: 'redis' | 'local') => {
    rateLimitStore.set({ store }, 1);
    rateLimitStore.set({ store: store === 'redis' ? 'local' : 'redis' }, 0);
  };
  useRateLimitStore('local');
  const servedMessages = new Counter({
    name: 'mcp_gateway_served_messages_total',
    help: 'JSON-RPC messages answered on the MCP endpoint, by serving path: `lean` (dagu_read calls and resource reads in the shape clients send) or `sdk` (everything else).',
    labelNames: ['path'],
    registers: [registry],
  });
  for (const path of ['lean', 'sdk']) servedMessages.inc({ path }, 0);
  let workbookPool: () => WorkbookPoolGauge = () => ({ size: 0, running: 0, queued: 0 });
  scrapedGauge(
    'mcp_gateway_workbook_workers',
    'Workbook reader workers that may run at once (WORKBOOK_MAX_CONCURRENT).',
    () => workbookPool().size,
  );
  scrapedGauge(
    'mcp_gateway_workbook_workers_busy',
    'Workbook reader workers reading now.',
    () => workbookPool().running,
  );
  scrapedGauge(
    'mcp_gateway_workbook_queue_length',
    'Workbook reads waiting for a worker.',
    () => workbookPool().queued,
  );
  const workbookRejected = new Counter({
    name: 'mcp_gateway_workbook_rejected_total',
    help: 'Workbook reads the pool refused: queue full (`queue_full`) or no worker free within WORKBOOK_QUEUE_WAIT_MS (`queue_timeout`).',
    labelNames: ['reason'],
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'mcp_gateway_refused_requests_total',
    help: 'Requests ended without being served: time bounds, oversized headers, malformed HTTP, unknown tools and methods, batches.',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of REFUSAL_REASONS) refusals.inc({ reason }, 0);
  for (const reason of WORKBOOK_REJECT_REASONS) workbookRejected.inc({ reason }, 0);
  for (const reason of AUTH_FAILURE_REASONS) authFailures.inc({ reason }, 0);
  for (const reason of ['rate', 'concurrency']) rateLimited.inc({ reason }, 0);
  // From 0: a series born at 1 shows no increase(), and the first failed reload would raise no alert.
  for (const result of ['ok', 'error']) keyReloads.inc({ result }, 0);

  return {
    registry,
    contentType: Registry.PROMETHEUS_CONTENT_TYPE,
    observeOperation(observation) {
      const labels: Record<string, string> = { mcp_method_name: boundedMethod(observation.method) ?? OTHER };
      const toolName = tool(observation.tool);
      const target = boundedTarget(observation.target);
      const errorType = boundedErrorType(observation.errorType);
      const protocolVersion = boundedProtocolVersion(observation.protocolVersion);
      if (toolName !== undefined) labels.gen_ai_tool_name = toolName;
      if (target !== undefined) labels.dagu_read_target = target;
      if (errorType !== undefined) labels.error_type = errorType;
      if (protocolVersion !== undefined) labels.mcp_protocol_version = protocolVersion;
      if (options.exemplars === true) observeWithTrace(operationDuration, labels, observation);
      else operationDuration.observe(labels, observation.durationSeconds);
    },
    observeUpstream(routeTemplate, status, durationSeconds) {
      upstreamDuration.observe(
        { route: route(routeTemplate), status: boundedStatus(status) },
        durationSeconds,
      );
    },
    upstreamJoined: (routeTemplate) => upstreamJoined.inc({ route: route(routeTemplate) }),
    cacheLookup: (cache, result) => cacheLookups.inc({ cache, result }),
    cacheEvicted: (count) => cacheEvictions.inc(count),
    watchCache(load) {
      cacheLoad = load;
    },
    authFailure: (reason) => authFailures.inc({ reason }),
    rateLimited: (reason) => rateLimited.inc({ reason }),
    inflight: (delta) => inflight.inc(delta),
    auditWriteFailure: () => auditWriteFailures.inc(),
    keyReload: (result) => keyReloads.inc({ result }),
    daguProbed({ reachable, version }) {
      daguUp.set(reachable ? 1 : 0);
      // A version string is Dagu's, not the caller's, but still bounded: one series, replaced on change.
      const label = version !== undefined && /^[A-Za-z0-9._+-]{1,40}$/.test(version) ? version : undefined;
      if (label === undefined || label === shownVersion) return;
      daguBuildInfo.reset();
      daguBuildInfo.set({ version: label }, 1);
      shownVersion = label;
    },
    rateLimitStore: useRateLimitStore,
    rateLimitStoreFallback: () => rateLimitStoreFallbacks.inc(),
    served: (path) => servedMessages.inc({ path }),
    watchWorkbookPool: (load) => {
      workbookPool = load;
    },
    workbookRejected: (reason) => workbookRejected.inc({ reason }),
    refused: (reason) => refusals.inc({ reason }),
    render: async () => (await exposition(registry, options.exemplars === true, undefined)).body,
    exposition: (accept) => exposition(registry, options.exemplars === true, accept),
  };
}
