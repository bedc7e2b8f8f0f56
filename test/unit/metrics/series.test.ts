import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { seriesCache } from '../../../src/metrics/series.ts';

const LABELS = ['method', 'target', 'error'] as const;

function histogram() {
  const registry = new Registry();
  const metric = new Histogram({
    name: 'operation_seconds',
    help: 'test',
    labelNames: LABELS,
    buckets: [0.01, 0.1, 1, 10],
    registers: [registry],
  });
  return { registry, metric };
}

/** Label values, `undefined` for a label left out; the value observed. */
const OBSERVATIONS: Array<[[string, string | undefined, string | undefined], number]> = [
  [['tools/call', 'run', undefined], 0.004],
  [['tools/call', 'run', undefined], 0.01], // exactly a bound
  [['tools/call', 'run', 'timeout'], 0.5],
  [['tools/call', undefined, undefined], 400], // above the top bucket: sum and count only
  [['tools/call', 'run', undefined], 2],
  [['resources/read', 'dags', undefined], 0],
];

describe('seriesCache', () => {
  it("leaves the exposition exactly as prom-client's observe does, with labels left out, zeroed series and after reset", async () => {
    const plain = histogram();
    const bound = histogram();
    const series = seriesCache(bound.metric, LABELS);
    // A label set that exists before its first bound observation (metrics.ts zeroes some).
    plain.metric.zero({ method: 'resources/read', target: 'dags' });
    bound.metric.zero({ method: 'resources/read', target: 'dags' });
    const observeBoth = () => {
      for (const [[method, target, error], value] of OBSERVATIONS) {
        const labels: Partial<Record<(typeof LABELS)[number], string>> = { method };
        if (target !== undefined) labels.target = target;
        if (error !== undefined) labels.error = error;
        plain.metric.observe(labels, value);
        series(method, target, error)(value);
      }
    };
    observeBoth();
    observeBoth();
    const text = await plain.registry.metrics();
    assert.match(text, /operation_seconds_count\{method="tools\/call",target="run"\} 6/);
    assert.equal(await bound.registry.metrics(), text);
    plain.metric.reset();
    bound.metric.reset();
    observeBoth();
    assert.equal(await bound.registry.metrics(), await plain.registry.metrics());
  });

  it('returns the same recorder for the same label values, another for others', () => {
    const { metric } = histogram();
    const series = seriesCache(metric, LABELS);
    assert.equal(series('tools/call', 'run', undefined), series('tools/call', 'run', undefined));
    assert.notEqual(series('tools/call', 'run', undefined), series('tools/call', 'run', 'timeout'));
  });

  it('refuses a value that is not a finite number, as observe does', () => {
    const { metric } = histogram();
    const record = seriesCache(metric, LABELS)('tools/call', 'run', undefined);
    record(0.1);
    assert.throws(() => record(Number.NaN), TypeError);
  });
});
