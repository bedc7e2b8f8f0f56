import { collectDefaultMetrics, Registry, type RegistryContentType } from 'prom-client';
import type { AuthFailureReason } from '../core/auth-reasons.ts';
import { DEPRECATED_TARGET_ALIASES, ERROR_CODES, READ_TARGETS } from '../core/contract.ts';
import { MCP_METHODS } from '../core/mcp-methods.ts';
import type { OAuthEvent, OAuthOutcome } from '../core/oauth-events.ts';
import type { RefusalReason } from '../core/refusal-reasons.ts';
import {
  type CacheGauge,
  type CacheUse,
  type RegisteredMetrics,
  registerMetrics,
  type ScrapeSources,
  type WorkbookPoolGauge,
  type WorkbookRejectReason,
} from './definitions.ts';
import { exposition, OPERATION_LABELS, observeWithTrace, operationHistogram } from './exemplars.ts';
import { seriesCache } from './series.ts';

export {
  CACHE_USES,
  type CacheGauge,
  type CacheUse,
  WORKBOOK_REJECT_REASONS,
  type WorkbookPoolGauge,
  type WorkbookRejectReason,
} from './definitions.ts';

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
  /** Audit records lost to one failed write (default 1): a turn's queued records go in one write. */
  auditWriteFailure(records?: number): void;
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
  /** One audited event of the built-in authorization server. */
  oauthEvent(event: OAuthEvent, outcome: OAuthOutcome): void;
  /** One answer dropped because its request was already answered (src/http/late-reply.ts). */
  lateReply(): void;
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

/** Records a readiness probe: `dagu_up` 1/0, and `dagu_build_info{version}` when the version changes. */
function probeRecorder(
  daguUp: RegisteredMetrics['daguUp'],
  daguBuildInfo: RegisteredMetrics['daguBuildInfo'],
): GatewayMetrics['daguProbed'] {
  let shownVersion: string | undefined;
  return ({ reachable, version }) => {
    daguUp.set(reachable ? 1 : 0);
    // A version string is Dagu's, not the caller's, but still bounded: one series, replaced on change.
    const label = version !== undefined && /^[A-Za-z0-9._+-]{1,40}$/.test(version) ? version : undefined;
    if (label === undefined || label === shownVersion) return;
    daguBuildInfo.reset();
    daguBuildInfo.set({ version: label }, 1);
    shownVersion = label;
  };
}

/** Sets the store gauge: 1 for the store counting now, 0 for the other. */
function storeSwitch(gauge: RegisteredMetrics['rateLimitStore']) {
  return (store: 'redis' | 'local') => {
    gauge.set({ store }, 1);
    gauge.set({ store: store === 'redis' ? 'local' : 'redis' }, 0);
  };
}

export function createMetrics(options: MetricsOptions = {}): GatewayMetrics {
  const registry = new Registry();
  // prom-client keeps exemplars only on an OpenMetrics registry; exposition() renders either format.
  if (options.exemplars === true) {
    (registry as unknown as Registry<RegistryContentType>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  }
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const operationDuration = operationHistogram(registry, options.exemplars === true);
  const sources: ScrapeSources = {
    cache: () => ({ bytes: 0, entries: 0, maxBytes: 0 }),
    workbookPool: () => ({ size: 0, running: 0, queued: 0 }),
  };
  return recorder(options, registry, operationDuration, sources, registerMetrics(registry, sources));
}

/**
 * The operation histogram's observe: labels bounded, then recorded through the series bound once
 * per label set (series.ts); with exemplars on, through prom-client's observe, which carries them.
 */
function operationObserver(
  options: MetricsOptions,
  operationDuration: ReturnType<typeof operationHistogram>,
  tool: (name: string | undefined) => string | undefined,
): GatewayMetrics['observeOperation'] {
  const operationSeries = seriesCache(operationDuration, OPERATION_LABELS);
  return (observation) => {
    const method = boundedMethod(observation.method) ?? OTHER;
    const toolName = tool(observation.tool);
    const target = boundedTarget(observation.target);
    const errorType = boundedErrorType(observation.errorType);
    const protocolVersion = boundedProtocolVersion(observation.protocolVersion);
    if (options.exemplars !== true) {
      operationSeries(method, toolName, target, errorType, protocolVersion)(observation.durationSeconds);
      return;
    }
    const labels: Record<string, string> = { mcp_method_name: method };
    if (toolName !== undefined) labels.gen_ai_tool_name = toolName;
    if (target !== undefined) labels.dagu_read_target = target;
    if (errorType !== undefined) labels.error_type = errorType;
    if (protocolVersion !== undefined) labels.mcp_protocol_version = protocolVersion;
    observeWithTrace(operationDuration, labels, observation);
  };
}

/** What a histogram, counter or gauge records is bounded by the mappings above before it is recorded. */
function recorder(
  options: MetricsOptions,
  registry: Registry,
  operationDuration: ReturnType<typeof operationHistogram>,
  sources: ScrapeSources,
  metrics: RegisteredMetrics,
): GatewayMetrics {
  const route = templateGuard(options.maxUpstreamRoutes ?? 64);
  const {
    upstreamDuration,
    upstreamJoined,
    cacheLookups,
    cacheEvictions,
    authFailures,
    rateLimited,
    inflight,
    auditWriteFailures,
    keyReloads,
    daguUp,
    daguBuildInfo,
    rateLimitStore,
    rateLimitStoreFallbacks,
    servedMessages,
    workbookRejected,
    refusals,
    oauthEvents,
    lateReplies,
  } = metrics;
  // Each label set's series bound once (series.ts): the upstream histogram every call observes.
  const upstreamSeries = seriesCache(upstreamDuration, ['route', 'status']);
  const useRateLimitStore = storeSwitch(rateLimitStore);
  useRateLimitStore('local');

  return {
    registry,
    contentType: Registry.PROMETHEUS_CONTENT_TYPE,
    observeOperation: operationObserver(
      options,
      operationDuration,
      oneOf(options.toolNames ?? ['dagu_read']),
    ),
    observeUpstream(routeTemplate, status, durationSeconds) {
      upstreamSeries(route(routeTemplate), boundedStatus(status))(durationSeconds);
    },
    upstreamJoined: (routeTemplate) => upstreamJoined.inc({ route: route(routeTemplate) }),
    cacheLookup: (cache, result) => cacheLookups.inc({ cache, result }),
    cacheEvicted: (count) => cacheEvictions.inc(count),
    watchCache(load) {
      sources.cache = load;
    },
    authFailure: (reason) => authFailures.inc({ reason }),
    rateLimited: (reason) => rateLimited.inc({ reason }),
    inflight: (delta) => inflight.inc(delta),
    auditWriteFailure: (records = 1) => auditWriteFailures.inc(records),
    keyReload: (result) => keyReloads.inc({ result }),
    daguProbed: probeRecorder(daguUp, daguBuildInfo),
    rateLimitStore: useRateLimitStore,
    rateLimitStoreFallback: () => rateLimitStoreFallbacks.inc(),
    served: (path) => servedMessages.inc({ path }),
    watchWorkbookPool: (load) => {
      sources.workbookPool = load;
    },
    workbookRejected: (reason) => workbookRejected.inc({ reason }),
    refused: (reason) => refusals.inc({ reason }),
    oauthEvent: (event, outcome) => oauthEvents.inc({ event, outcome }),
    lateReply: () => lateReplies.inc(),
    render: async () => (await exposition(registry, options.exemplars === true, undefined)).body,
    exposition: (accept) => exposition(registry, options.exemplars === true, accept),
  };
}
