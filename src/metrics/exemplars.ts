import { Histogram, Registry, type RegistryContentType } from 'prom-client';

/**
 * Exemplars (tracing on): the call-duration histogram keeps, per bucket, the trace id of its latest
 * observation, and `/metrics` shows them in OpenMetrics, the exposition that carries exemplars, when
 * the scraper asks for it (`Accept: application/openmetrics-text`), so a latency panel links to a trace.
 */

/**
 * The exemplar label holding the trace id: Grafana's Prometheus data source links it to the trace
 * source by this name (`exemplarTraceIdDestinations` in deploy/grafana/provisioning/datasources).
 */
export const EXEMPLAR_TRACE_ID_LABEL = 'trace_id';

/** Seconds, 10 ms to 5 min: a tool call ranges from a cached reference read to a large workbook. */
const OPERATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** The labels of `mcp.server.operation.duration`, in the order metrics.ts passes their values. */
export const OPERATION_LABELS = [
  'mcp_method_name',
  'gen_ai_tool_name',
  'dagu_read_target',
  'error_type',
  'mcp_protocol_version',
] as const;

/** `mcp.server.operation.duration`, with a trace id per bucket when exemplars are on. */
export function operationHistogram(registry: Registry, exemplars: boolean) {
  return new Histogram({
    name: 'mcp_server_operation_duration_seconds',
    help: 'MCP request duration as observed by the server, from receipt until the result is sent (OpenTelemetry mcp.server.operation.duration).',
    labelNames: OPERATION_LABELS,
    buckets: OPERATION_BUCKETS,
    registers: [registry],
    enableExemplars: exemplars,
  });
}

interface ExemplarSample {
  labels: Record<string, string>;
  value: number;
  exemplarLabels: Record<string, string>;
}

/** One observation with its trace id as the exemplar (a histogram created with `enableExemplars`). */
export function observeWithTrace<T extends string>(
  histogram: Histogram<T>,
  labels: Record<string, string>,
  observation: { durationSeconds: number; traceId?: string },
): void {
  const { traceId } = observation;
  // With exemplars on, prom-client's observe takes one object (its exemplar form).
  (histogram.observe as unknown as (sample: ExemplarSample) => void)({
    labels,
    value: observation.durationSeconds,
    exemplarLabels: traceId === undefined ? {} : { [EXEMPLAR_TRACE_ID_LABEL]: traceId },
  });
}

/**
 * The exposition the scraper asked for. With exemplars on, the registry is an OpenMetrics one (prom-client
 * wants that for exemplars) and renders OpenMetrics, with the exemplars, when `accept` names
 * `application/openmetrics-text`, and Prometheus text otherwise.
 */
export async function exposition(
  registry: Registry,
  exemplars: boolean,
  accept: string | undefined,
): Promise<{ contentType: string; body: string }> {
  if (!exemplars) return { contentType: registry.contentType, body: await registry.metrics() };
  const contentType =
    accept?.includes('application/openmetrics-text') === true
      ? Registry.OPENMETRICS_CONTENT_TYPE
      : Registry.PROMETHEUS_CONTENT_TYPE;
  return { contentType, body: await renderAs(registry, contentType) };
}

/** One rendering at a time: prom-client renames counters while it renders OpenMetrics. */
let renderTurn: Promise<unknown> = Promise.resolve();

/**
 * The registry rendered as `contentType`. prom-client renders by the registry's content type and
 * strips `_total` from counter names in place while rendering OpenMetrics; the type and the names are
 * restored after, so Prometheus-text scrapes (and the rules built on them) keep seeing `_total`.
 */
function renderAs(registry: Registry, contentType: RegistryContentType): Promise<string> {
  const render = async () => {
    const switchable = registry as unknown as Registry<RegistryContentType>;
    const metrics = switchable.getMetricsAsArray() as unknown as Array<{ name: string }>;
    const names = metrics.map((metric) => metric.name);
    const saved = switchable.contentType;
    switchable.setContentType(contentType);
    try {
      return await switchable.metrics();
    } finally {
      switchable.setContentType(saved);
      metrics.forEach((metric, index) => {
        metric.name = names[index]!;
      });
    }
  };
  const turn = renderTurn.then(render, render);
  renderTurn = turn.catch(() => undefined);
  return turn;
}
