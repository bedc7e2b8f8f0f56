/** Exemplars: trace ids on the call-duration histogram, shown in OpenMetrics when the scraper asks. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Counter, Registry, type RegistryContentType } from 'prom-client';
import { exposition, observeWithTrace, operationHistogram } from '../../../src/metrics/exemplars.ts';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const LABELS = {
  mcp_method_name: 'tools/call',
  gen_ai_tool_name: 'dagu_read',
  dagu_read_target: 'dags',
  error_type: '',
  mcp_protocol_version: '2025-06-18',
};

function openMetricsRegistry(): Registry {
  const registry = new Registry();
  (registry as unknown as Registry<RegistryContentType>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  return registry;
}

describe('with exemplars', () => {
  test('OpenMetrics on request carries the trace id; Prometheus text otherwise, with counters still named _total', async () => {
    const registry = openMetricsRegistry();
    const histogram = operationHistogram(registry, true);
    const counter = new Counter({ name: 'probe_calls_total', help: 'probe', registers: [registry] });
    counter.inc();
    observeWithTrace(histogram, LABELS, { durationSeconds: 0.03, traceId: TRACE });

    const open = await exposition(registry, true, 'application/openmetrics-text; version=1.0.0');
    assert.equal(open.contentType, Registry.OPENMETRICS_CONTENT_TYPE);
    assert.match(
      open.body,
      new RegExp(
        `mcp_server_operation_duration_seconds_bucket\\{[^}]*le="0.05"[^}]*\\} 1 # \\{trace_id="${TRACE}"\\}`,
      ),
    );

    const plain = await exposition(registry, true, 'text/plain');
    assert.equal(plain.contentType, Registry.PROMETHEUS_CONTENT_TYPE);
    assert.doesNotMatch(plain.body, /trace_id/);
    assert.match(plain.body, /^probe_calls_total 1$/m);
    // The OpenMetrics rendering did not leave the counter renamed or the registry switched.
    assert.match((await exposition(registry, true, undefined)).body, /^probe_calls_total 1$/m);
  });

  test('concurrent scrapes of both kinds each get their own format', async () => {
    const registry = openMetricsRegistry();
    new Counter({ name: 'c_total', help: 'c', registers: [registry] }).inc(2);
    const answers = await Promise.all(
      ['application/openmetrics-text', undefined, 'application/openmetrics-text', undefined].map((accept) =>
        exposition(registry, true, accept),
      ),
    );
    assert.match(answers[0]!.body, /# EOF/);
    assert.doesNotMatch(answers[1]!.body, /# EOF/);
    assert.match(answers[1]!.body, /^c_total 2$/m);
    assert.match(answers[2]!.body, /# EOF/);
    assert.match(answers[3]!.body, /^c_total 2$/m);
  });

  test('an observation without a trace id has no exemplar', async () => {
    const registry = openMetricsRegistry();
    observeWithTrace(operationHistogram(registry, true), LABELS, { durationSeconds: 2 });
    const open = await exposition(registry, true, 'application/openmetrics-text');
    assert.doesNotMatch(open.body, /trace_id/);
    assert.match(open.body, /mcp_server_operation_duration_seconds_count\{[^}]*\} 1/);
  });
});

describe('without exemplars', () => {
  test("the registry's own format, whatever the Accept header", async () => {
    const registry = new Registry();
    operationHistogram(registry, false).observe(LABELS, 0.5);
    const answer = await exposition(registry, false, 'application/openmetrics-text');
    assert.equal(answer.contentType, registry.contentType);
    assert.match(answer.body, /mcp_server_operation_duration_seconds_bucket\{le="0.5",[^}]*\} 1/);
  });
});
