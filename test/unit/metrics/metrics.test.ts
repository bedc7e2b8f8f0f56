import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  boundedErrorType,
  boundedMethod,
  boundedProtocolVersion,
  boundedStatus,
  boundedTarget,
  createMetrics,
  type GatewayMetrics,
} from '../../../src/metrics/metrics.ts';

const FAMILIES = [
  'mcp_server_operation_duration_seconds',
  'dagu_upstream_request_duration_seconds',
  'mcp_gateway_auth_failures_total',
  'mcp_gateway_rate_limited_total',
  'mcp_gateway_inflight_calls',
  'mcp_gateway_audit_write_failures_total',
  'mcp_gateway_api_keys_reloads_total',
  'dagu_up',
  'dagu_build_info',
  'mcp_gateway_served_messages_total',
  'mcp_gateway_workbook_workers',
  'mcp_gateway_workbook_workers_busy',
  'mcp_gateway_workbook_queue_length',
  'mcp_gateway_workbook_rejected_total',
];

/** `name{labels} value` lines of the exposition text, for one family. */
async function samples(metrics: GatewayMetrics, prefix: string): Promise<string[]> {
  return (await metrics.render()).split('\n').filter((line) => line.startsWith(prefix));
}

describe('metrics', () => {
  it('exposes every family and the default process metrics on its own registry', async () => {
    const metrics = createMetrics();
    const text = await metrics.render();
    for (const family of FAMILIES) assert.match(text, new RegExp(`^# TYPE ${family} `, 'm'), family);
    assert.match(text, /^process_cpu_user_seconds_total /m);
    assert.match(text, /^nodejs_eventloop_lag_seconds /m);
    assert.match(metrics.contentType, /^text\/plain; version=0\.0\.4/);
    const other = createMetrics();
    other.authFailure('expired');
    assert.deepEqual(await samples(metrics, 'mcp_gateway_auth_failures_total{reason="expired"}'), [
      'mcp_gateway_auth_failures_total{reason="expired"} 0',
    ]);
  });

  it('reports the workbook pool from start-up (0 before a pool is watched) and at each scrape', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    assert.deepEqual(await samples(metrics, 'mcp_gateway_workbook_'), [
      'mcp_gateway_workbook_workers 0',
      'mcp_gateway_workbook_workers_busy 0',
      'mcp_gateway_workbook_queue_length 0',
      'mcp_gateway_workbook_rejected_total{reason="queue_full"} 0',
      'mcp_gateway_workbook_rejected_total{reason="queue_timeout"} 0',
    ]);
    const load = { size: 2, running: 1, queued: 0 };
    metrics.watchWorkbookPool(() => load);
    load.queued = 3;
    metrics.workbookRejected('queue_timeout');
    assert.deepEqual(await samples(metrics, 'mcp_gateway_workbook_'), [
      'mcp_gateway_workbook_workers 2',
      'mcp_gateway_workbook_workers_busy 1',
      'mcp_gateway_workbook_queue_length 3',
      'mcp_gateway_workbook_rejected_total{reason="queue_full"} 0',
      'mcp_gateway_workbook_rejected_total{reason="queue_timeout"} 1',
    ]);
  });

  it('records operations with OpenTelemetry-style labels and moves the counters', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.observeOperation({
      method: 'tools/call',
      tool: 'dagu_read',
      target: 'run',
      protocolVersion: '2026-07-28',
      durationSeconds: 0.042,
    });
    metrics.observeOperation({
      method: 'tools/call',
      tool: 'dagu_read',
      target: 'dag',
      errorType: 'resource_not_found',
      durationSeconds: 0.3,
    });
    metrics.observeUpstream('/dags/{fileName}', 200, 0.01);
    metrics.authFailure('unknown_key');
    metrics.rateLimited('rate');
    metrics.inflight(1);
    metrics.inflight(1);
    metrics.inflight(-1);
    metrics.auditWriteFailure();
    metrics.auditWriteFailure(3);
    metrics.keyReload('ok');

    assert.deepEqual(await samples(metrics, 'mcp_server_operation_duration_seconds_count'), [
      'mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="dagu_read",dagu_read_target="run",mcp_protocol_version="2026-07-28"} 1',
      'mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="dagu_read",dagu_read_target="dag",error_type="resource_not_found"} 1',
    ]);
    assert.deepEqual(await samples(metrics, 'dagu_upstream_request_duration_seconds_count'), [
      'dagu_upstream_request_duration_seconds_count{route="/dags/{fileName}",status="200"} 1',
    ]);
    assert.ok(
      (await samples(metrics, 'mcp_gateway_auth_failures_total')).includes(
        'mcp_gateway_auth_failures_total{reason="unknown_key"} 1',
      ),
    );
    assert.ok(
      (await samples(metrics, 'mcp_gateway_rate_limited_total')).includes(
        'mcp_gateway_rate_limited_total{reason="rate"} 1',
      ),
    );
    assert.deepEqual(await samples(metrics, 'mcp_gateway_inflight_calls'), ['mcp_gateway_inflight_calls 1']);
    assert.deepEqual(await samples(metrics, 'mcp_gateway_audit_write_failures_total'), [
      'mcp_gateway_audit_write_failures_total 4',
    ]);
    // `error` is exported from 0, so the first failed reload is an increase() the alert sees.
    assert.deepEqual(await samples(metrics, 'mcp_gateway_api_keys_reloads_total'), [
      'mcp_gateway_api_keys_reloads_total{result="ok"} 1',
      'mcp_gateway_api_keys_reloads_total{result="error"} 0',
    ]);
  });

  it('never turns names, ids or free text into label values', async () => {
    const metrics = createMetrics({ defaultMetrics: false, maxUpstreamRoutes: 2 });
    metrics.observeOperation({
      method: 'tools/call; DROP',
      tool: 'nightly-etl',
      target: 'nightly-etl',
      errorType: 'customer 4711',
      protocolVersion: '2031-01-01',
      durationSeconds: 1,
    });
    for (const route of [
      '/dags/{fileName}',
      '/dag-runs/{name}/{dagRunId}',
      '/dags/nightly-etl',
      '/dags/a b',
    ]) {
      metrics.observeUpstream(route, 200, 0.01);
    }
    metrics.observeUpstream('/dags/{fileName}', 'ECONNRESET while reading', 0.01);
    const text = await metrics.render();
    assert.ok(!text.includes('nightly-etl'));
    assert.ok(!text.includes('4711'));
    assert.match(
      text,
      /mcp_server_operation_duration_seconds_count\{mcp_method_name="other",gen_ai_tool_name="other",dagu_read_target="other",error_type="other",mcp_protocol_version="other"\} 1/,
    );
    assert.match(text, /dagu_upstream_request_duration_seconds_count\{route="other",status="200"\} 2/);
    assert.match(
      text,
      /dagu_upstream_request_duration_seconds_count\{route="\/dags\/\{fileName\}",status="other"\} 1/,
    );
  });

  it('dagu_up follows the last probe; dagu_build_info keeps one series, the version last reported', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    assert.deepEqual(await samples(metrics, 'dagu_up '), ['dagu_up 0']);
    metrics.daguProbed({ reachable: true, version: '1.30.3' });
    metrics.daguProbed({ reachable: true, version: 'v2.15.1' });
    assert.deepEqual(await samples(metrics, 'dagu_up '), ['dagu_up 1']);
    assert.deepEqual(await samples(metrics, 'dagu_build_info{'), ['dagu_build_info{version="v2.15.1"} 1']);
    metrics.daguProbed({ reachable: false });
    metrics.daguProbed({ reachable: true, version: 'not a {version}' });
    assert.deepEqual(await samples(metrics, 'dagu_build_info{'), ['dagu_build_info{version="v2.15.1"} 1']);
  });

  it('maps label values through bounded sets', () => {
    assert.equal(boundedTarget('doc_search'), 'wiki_search', 'deprecated aliases fold into their target');
    assert.equal(boundedTarget('step_log'), 'step_log');
    assert.equal(boundedTarget(undefined), undefined);
    assert.equal(boundedMethod('resources/read'), 'resources/read');
    assert.equal(boundedProtocolVersion('2025-11-25'), '2025-11-25');
    assert.equal(boundedErrorType(-32602), '-32602');
    assert.equal(boundedErrorType('-32602'), '-32602');
    assert.equal(boundedErrorType(-1), 'other');
    assert.equal(boundedErrorType('unauthorized'), 'unauthorized');
    assert.equal(boundedErrorType('timeout'), 'timeout');
    assert.equal(boundedStatus(503), '503');
    assert.equal(boundedStatus('timeout'), 'timeout');
    for (const kind of ['network_error', 'aborted', 'bad_body']) assert.equal(boundedStatus(kind), kind);
    assert.equal(boundedStatus('error'), 'other');
    assert.equal(boundedStatus(600), 'other');
  });
});
