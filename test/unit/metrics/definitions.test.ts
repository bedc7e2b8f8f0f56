import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { METRIC_DEFINITIONS, registerMetrics } from '../../../src/metrics/definitions.ts';

const sources = {
  cache: () => ({ bytes: 1024, entries: 3, maxBytes: 4096 }),
  workbookPool: () => ({ size: 2, running: 1, queued: 5 }),
};

test('names follow the Prometheus conventions: unique, snake_case, counters end in _total, durations in _seconds', () => {
  const definitions = Object.values(METRIC_DEFINITIONS);
  const names = definitions.map((definition) => definition.name);
  assert.equal(new Set(names).size, names.length);
  for (const definition of definitions) {
    assert.match(definition.name, /^(dagu|mcp_gateway)_[a-z0-9_]+$/, definition.name);
    assert.ok(definition.help.length > 10, definition.name);
    if (definition.kind === 'counter') assert.match(definition.name, /_total$/, definition.name);
    if (definition.kind === 'histogram') assert.match(definition.name, /_seconds$/, definition.name);
    if (definition.kind !== 'counter') assert.doesNotMatch(definition.name, /_total$/, definition.name);
  }
});

test('registerMetrics builds each definition as its kind, on the given registry, in the table order', async () => {
  const registry = new Registry();
  const metrics = registerMetrics(registry, sources);
  for (const [key, definition] of Object.entries(METRIC_DEFINITIONS)) {
    const built = metrics[key as keyof typeof metrics];
    const kind = { counter: Counter, gauge: Gauge, histogram: Histogram }[definition.kind];
    assert.ok(built instanceof kind, `${key} is a ${definition.kind}`);
  }
  const registered = (await registry.getMetricsAsJSON()).map((metric) => metric.name);
  assert.deepEqual(
    registered,
    Object.values(METRIC_DEFINITIONS).map((definition) => definition.name),
  );
});

test('a zero table makes every label combination exist at 0 before the first event', async () => {
  const registry = new Registry();
  registerMetrics(registry, sources);
  const text = await registry.metrics();
  for (const definition of Object.values(METRIC_DEFINITIONS)) {
    if (!('zero' in definition)) continue;
    const [first, ...rest] = Object.entries(definition.zero);
    const combinations = rest.reduce((count, [, values]) => count * values.length, first![1].length);
    const series = text.split('\n').filter((line) => line.startsWith(`${definition.name}{`));
    assert.equal(series.length, combinations, definition.name);
    assert.ok(
      series.every((line) => line.endsWith(' 0')),
      definition.name,
    );
  }
});

test('scraped gauges read their sources at each scrape', async () => {
  let queued = 5;
  const registry = new Registry();
  registerMetrics(registry, { ...sources, workbookPool: () => ({ size: 2, running: 1, queued }) });
  const scraped = Object.values(METRIC_DEFINITIONS).filter((definition) => 'read' in definition);
  assert.ok(scraped.length > 0);
  const before = await registry.metrics();
  queued = 9;
  const after = await registry.metrics();
  assert.notEqual(before, after, 'a scraped gauge changed with its source');
  assert.match(after, / 9\n/);
});
