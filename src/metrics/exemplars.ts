import type { Histogram } from 'prom-client';
import { Registry, type RegistryContentType } from 'prom-client';

/**
 * Exemplars (tracing on): the call-duration histogram keeps, per bucket, the trace id of its latest
 * observation, and `/metrics` shows them in OpenMetrics, the exposition that carries exemplars, when
 * the scraper asks for it (`Accept: application/openmetrics-text`), so a latency panel links to a trace.
 */

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
    exemplarLabels: traceId === undefined ? {} : { trace_id: traceId },
  });
}

/** The exposition the scraper asked for: OpenMetrics with exemplars when they are on and asked for. */
export async function exposition(
  registry: Registry,
  exemplars: boolean,
  accept: string | undefined,
): Promise<{ contentType: string; body: string }> {
  if (!exemplars || accept?.includes('application/openmetrics-text') !== true) {
    return { contentType: registry.contentType, body: await registry.metrics() };
  }
  return { contentType: Registry.OPENMETRICS_CONTENT_TYPE, body: await openMetrics(registry) };
}

/** One OpenMetrics rendering at a time: prom-client renames counters while it renders one. */
let openMetricsTurn: Promise<unknown> = Promise.resolve();

/**
 * The registry as OpenMetrics text. prom-client renders OpenMetrics from the registry's content type and
 * strips `_total` from counter names in place while doing so; the type and the names are restored after,
 * so Prometheus-text scrapes (and the rules built on them) keep seeing `_total`.
 */
function openMetrics(registry: Registry): Promise<string> {
  const render = async () => {
    const switchable = registry as unknown as Registry<RegistryContentType>;
    const metrics = switchable.getMetricsAsArray() as unknown as Array<{ name: string }>;
    const names = metrics.map((metric) => metric.name);
    const saved = switchable.contentType;
    switchable.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    try {
      return await switchable.metrics();
    } finally {
      switchable.setContentType(saved);
      metrics.forEach((metric, index) => {
        metric.name = names[index]!;
      });
    }
  };
  const turn = openMetricsTurn.then(render, render);
  openMetricsTurn = turn.catch(() => undefined);
  return turn;
}
