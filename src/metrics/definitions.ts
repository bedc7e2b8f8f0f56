import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { AUTH_FAILURE_REASONS } from '../core/auth-reasons.ts';
import { OAUTH_EVENTS } from '../core/oauth-events.ts';
import { REFUSAL_REASONS } from '../core/refusal-reasons.ts';

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

/** What the scraped gauges read at each scrape; `createMetrics` replaces them when watching starts. */
export interface ScrapeSources {
  cache: () => CacheGauge;
  workbookPool: () => WorkbookPoolGauge;
}

interface MetricDefinition {
  kind: 'counter' | 'gauge' | 'histogram';
  name: string;
  help: string;
  labelNames?: readonly string[];
  buckets?: readonly number[];
  /**
   * Label values whose series exist from the start at 0 (every combination): a series born at 1
   * shows no increase(), so the first event would raise no alert.
   */
  zero?: Readonly<Record<string, readonly string[]>>;
  /** A gauge whose value is read at each scrape. */
  read?: (sources: ScrapeSources) => number;
}

const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The gateway's metrics besides the MCP operation histogram (src/metrics/exemplars.ts), in the order
 * they are registered (and shown). Label values are bounded by the recording code in metrics.ts.
 */
export const METRIC_DEFINITIONS = {
  upstreamDuration: {
    kind: 'histogram',
    name: 'dagu_upstream_request_duration_seconds',
    help: 'Duration of the gateway’s requests to the Dagu REST API, by route template and HTTP status.',
    labelNames: ['route', 'status'],
    buckets: UPSTREAM_BUCKETS,
  },
  upstreamJoined: {
    kind: 'counter',
    name: 'dagu_upstream_requests_joined_total',
    help: 'Dagu GETs answered by an identical request that another read asked for in the same event-loop turn (coalesced: no request of their own), by route template.',
    labelNames: ['route'],
  },
  cacheLookups: {
    kind: 'counter',
    name: 'mcp_gateway_cache_lookups_total',
    help: 'Lookups in the shared in-memory cache, by use (`step_log`: finished step-log windows; `dagu_ttl`: any Dagu answer under CACHE_TTL_MS) and result (`hit`, `miss`).',
    labelNames: ['cache', 'result'],
    zero: { cache: CACHE_USES, result: ['hit', 'miss'] },
  },
  cacheEvictions: {
    kind: 'counter',
    name: 'mcp_gateway_cache_evictions_total',
    help: 'Entries the shared cache dropped to stay within CACHE_MAX_BYTES.',
  },
  cacheBytes: {
    kind: 'gauge',
    name: 'mcp_gateway_cache_bytes',
    help: 'Bytes held by the shared cache now.',
    read: (sources) => sources.cache().bytes,
  },
  cacheEntries: {
    kind: 'gauge',
    name: 'mcp_gateway_cache_entries',
    help: 'Entries held by the shared cache now.',
    read: (sources) => sources.cache().entries,
  },
  cacheMaxBytes: {
    kind: 'gauge',
    name: 'mcp_gateway_cache_max_bytes',
    help: 'Bytes the shared cache may hold (CACHE_MAX_BYTES; 0: off).',
    read: (sources) => sources.cache().maxBytes,
  },
  authFailures: {
    kind: 'counter',
    name: 'mcp_gateway_auth_failures_total',
    help: 'Requests refused by authentication (401) or by the API key surface rule (403), by reason.',
    labelNames: ['reason'],
    zero: { reason: AUTH_FAILURE_REASONS },
  },
  rateLimited: {
    kind: 'counter',
    name: 'mcp_gateway_rate_limited_total',
    help: 'Tool calls refused with 429: per-identity rate (`rate`) or concurrent calls (`concurrency`).',
    labelNames: ['reason'],
    zero: { reason: ['rate', 'concurrency'] },
  },
  inflight: {
    kind: 'gauge',
    name: 'mcp_gateway_inflight_calls',
    help: 'Tool calls and resource reads being served now.',
  },
  auditWriteFailures: {
    kind: 'counter',
    name: 'mcp_gateway_audit_write_failures_total',
    help: 'Audit records that could not be written (each one is also reported on /readyz).',
  },
  keyReloads: {
    kind: 'counter',
    name: 'mcp_gateway_api_keys_reloads_total',
    help: 'Reloads of the API key file (SIGHUP or file change), by result; on error the previous keys stay.',
    labelNames: ['result'],
    zero: { result: ['ok', 'error'] },
  },
  daguUp: {
    kind: 'gauge',
    name: 'dagu_up',
    help: 'Whether Dagu answered the last readiness probe of its health route (1) or not (0).',
  },
  daguBuildInfo: {
    kind: 'gauge',
    name: 'dagu_build_info',
    help: 'The version the connected Dagu reports on its health route (always 1; one series at a time).',
    labelNames: ['version'],
  },
  rateLimitStore: {
    kind: 'gauge',
    name: 'mcp_gateway_rate_limit_store',
    help: 'Where the per-caller rate limit is counted now: 1 for `redis` (shared by replicas) or `local` (this process alone), 0 for the other.',
    labelNames: ['store'],
  },
  rateLimitStoreFallbacks: {
    kind: 'counter',
    name: 'mcp_gateway_rate_limit_store_fallbacks_total',
    help: 'Calls counted in this process because the shared rate-limit store (Redis) did not answer.',
  },
  servedMessages: {
    kind: 'counter',
    name: 'mcp_gateway_served_messages_total',
    help: 'JSON-RPC messages answered on the MCP endpoint, by serving path: `lean` (dagu_read calls and resource reads in the shape clients send) or `sdk` (everything else).',
    labelNames: ['path'],
    zero: { path: ['lean', 'sdk'] },
  },
  workbookWorkers: {
    kind: 'gauge',
    name: 'mcp_gateway_workbook_workers',
    help: 'Workbook reader workers that may run at once (WORKBOOK_MAX_CONCURRENT).',
    read: (sources) => sources.workbookPool().size,
  },
  workbookWorkersBusy: {
    kind: 'gauge',
    name: 'mcp_gateway_workbook_workers_busy',
    help: 'Workbook reader workers reading now.',
    read: (sources) => sources.workbookPool().running,
  },
  workbookQueueLength: {
    kind: 'gauge',
    name: 'mcp_gateway_workbook_queue_length',
    help: 'Workbook reads waiting for a worker.',
    read: (sources) => sources.workbookPool().queued,
  },
  workbookRejected: {
    kind: 'counter',
    name: 'mcp_gateway_workbook_rejected_total',
    help: 'Workbook reads the pool refused: queue full (`queue_full`) or no worker free within WORKBOOK_QUEUE_WAIT_MS (`queue_timeout`).',
    labelNames: ['reason'],
    zero: { reason: WORKBOOK_REJECT_REASONS },
  },
  refusals: {
    kind: 'counter',
    name: 'mcp_gateway_refused_requests_total',
    help: 'Requests ended without being served: time bounds, oversized headers, malformed HTTP, unknown tools and methods, batches.',
    labelNames: ['reason'],
    zero: { reason: REFUSAL_REASONS },
  },
  oauthEvents: {
    kind: 'counter',
    name: 'mcp_gateway_oauth_events_total',
    help: 'Audited events of the built-in authorization server (AUTH_SERVER=builtin), by event and outcome (an OAuth error code, or ok).',
    labelNames: ['event', 'outcome'],
    zero: { event: OAUTH_EVENTS, outcome: ['ok'] },
  },
  lateReplies: {
    kind: 'counter',
    name: 'mcp_gateway_late_replies_total',
    help: 'Answers dropped because their request was already answered (a refusal sent before the body arrived, then the body reader failing), each logged at debug.',
  },
} as const satisfies Record<string, MetricDefinition>;

type LabelOf<D> = D extends { labelNames: readonly (infer L extends string)[] } ? L : string;
type Built<D> = D extends { kind: 'counter' }
  ? Counter<LabelOf<D>>
  : D extends { kind: 'histogram' }
    ? Histogram<LabelOf<D>>
    : Gauge<LabelOf<D>>;
type Definitions = typeof METRIC_DEFINITIONS;
export type RegisteredMetrics = { [K in keyof Definitions]: Built<Definitions[K]> };

/** Every label combination of a `zero` table, the first label varying slowest. */
function combinations(zero: Readonly<Record<string, readonly string[]>>): Record<string, string>[] {
  return Object.entries(zero).reduce<Record<string, string>[]>(
    (sets, [label, values]) => sets.flatMap((set) => values.map((value) => ({ ...set, [label]: value }))),
    [{}],
  );
}

function register(definition: MetricDefinition, registry: Registry, sources: ScrapeSources) {
  const { name, help, labelNames = [], buckets, read } = definition;
  const common = { name, help, labelNames, registers: [registry] };
  if (definition.kind === 'histogram')
    return new Histogram({ ...common, ...(buckets ? { buckets: [...buckets] } : {}) });
  if (definition.kind === 'gauge') {
    if (read === undefined) return new Gauge(common);
    return new Gauge({
      ...common,
      collect() {
        this.set(read(sources));
      },
    });
  }
  const counter = new Counter(common);
  if (definition.zero !== undefined)
    for (const labels of combinations(definition.zero)) counter.inc(labels, 0);
  return counter;
}

/** Registers every definition on `registry`, in the table's order; scraped gauges read `sources`. */
export function registerMetrics(registry: Registry, sources: ScrapeSources): RegisteredMetrics {
  const built: Record<string, Counter | Gauge | Histogram> = {};
  for (const [key, definition] of Object.entries(METRIC_DEFINITIONS)) {
    built[key] = register(definition, registry, sources);
  }
  // The table's kinds decide each class above; the mapped type states the same per key.
  return built as unknown as RegisteredMetrics;
}
