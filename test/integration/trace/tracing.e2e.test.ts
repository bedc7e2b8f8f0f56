// Tracing end to end: the gateway exports to a real Jaeger (OTLP/HTTP, in-memory storage, 127.0.0.1)
// and every assertion reads the trace back through Jaeger's query API: the host's parent span, the
// gateway's span per call with the MCP attributes, one child span per Dagu request with the route
// template, the contract error code, Dagu down, a batch, `_meta.traceparent`, no secret anywhere, and
// the spans sent with protobuf bodies (OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf) as well as JSON.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  bearer,
  type CapturedGateway,
  newApiKey,
  postMcp,
  startCapturedGateway,
  toolCallBody,
  writeKeysFile,
} from '../../support/auth-fixtures.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { freePort, getTestDagu, type TestDagu } from '../../support/dagu.ts';
import {
  callsArrived,
  childrenOf,
  gatewaySpans,
  hostSpan,
  jaegerBinary,
  parentOf,
  type RunningJaeger,
  spanTree,
  startJaeger,
  tag,
} from '../../support/jaeger.ts';
import { startRecordingServer } from '../../support/recording-server.ts';

const binary = jaegerBinary();
const skip = skipUnlessCI('missing' in binary ? binary.missing : false);

const KEY = newApiKey('tracer-key');
const COLLECTOR_SECRET = `collector-${randomBytes(12).toString('hex')}`;

describe('tracing into a real Jaeger', { skip }, () => {
  let dagu: TestDagu;
  let jaeger: RunningJaeger;
  let gateway: CapturedGateway;
  const env = () => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl,
    OTEL_EXPORTER_OTLP_HEADERS: `x-collector-token=${COLLECTOR_SECRET}`,
    OTEL_SERVICE_NAME: 'gateway-under-test',
    OTEL_TRACES_SAMPLER: 'always_on',
    OTEL_BSP_SCHEDULE_DELAY: '20',
    AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'tracer', key: KEY }]),
    RATE_LIMIT_PER_MINUTE: '10000',
  });
  before(async () => {
    dagu = await getTestDagu();
    jaeger = await startJaeger((binary as { path: string }).path);
    gateway = await startCapturedGateway({ ...env(), DAGU_URL: dagu.url, DAGU_API_BASE: dagu.apiBase });
  });
  after(async () => {
    await gateway?.close();
    await jaeger?.stop();
    await dagu?.stop();
  });

  const call = (args: unknown, headers: Record<string, string> = {}, id = 1) =>
    postMcp(gateway.mcpUrl, { ...bearer(KEY), ...headers }, toolCallBody(args, id));

  test("a step_log read continues the host's trace: gateway span, its Dagu request spans", async () => {
    const host = hostSpan();
    const { runs, facts, dags } = dagu.seed;
    const answer = await call(
      {
        target: 'step_log',
        name: dags.twoSteps,
        dagRunId: runs.twoStepsSecond,
        stepName: facts.twoStepsStepNames[0],
      },
      { traceparent: host.traceparent },
    );
    assert.equal(answer.status, 200);
    assert.doesNotMatch(answer.text, /"isError":true/);
    const found = await jaeger.waitForTrace(host.traceId, callsArrived(1));
    console.log(`step_log trace ${host.traceId} as Jaeger returned it:\n${spanTree(found)}`);
    const [span, ...others] = gatewaySpans(found);
    assert.ok(span !== undefined);
    assert.equal(others.length, 0);
    assert.equal(span.operationName, 'tools/call dagu_read');
    // The host's span is the parent (it lives in the host's process, so Jaeger has only the reference).
    assert.equal(parentOf(span), host.spanId);
    assert.equal(tag(span, 'span.kind'), 'server');
    assert.equal(tag(span, 'mcp.method.name'), 'tools/call');
    assert.equal(tag(span, 'gen_ai.tool.name'), 'dagu_read');
    assert.equal(tag(span, 'gen_ai.operation.name'), 'execute_tool');
    assert.equal(tag(span, 'jsonrpc.request.id'), '1');
    assert.equal(tag(span, 'dagu_read.target'), 'step_log');
    assert.equal(tag(span, 'enduser.id'), 'tracer');
    assert.equal(tag(span, 'dagu_mcp.identity.kind'), 'api_key');
    assert.equal(tag(span, 'error.type'), undefined);
    assert.equal(found.processes[span.processID]?.serviceName, 'gateway-under-test');
    const dagus = childrenOf(found, span);
    assert.ok(dagus.length >= 1, spanTree(found));
    for (const request of dagus) {
      assert.match(request.operationName, /^GET \/dag-runs\/\{name\}\/\{dagRunId\}/);
      assert.equal(tag(request, 'span.kind'), 'client');
      assert.equal(tag(request, 'url.template'), request.operationName.slice(4));
      assert.equal(tag(request, 'http.response.status_code'), 200);
      // The route template only: no DAG name, run id or step name in any Dagu span.
      const text = JSON.stringify(request);
      for (const name of [dags.twoSteps, runs.twoStepsSecond]) assert.ok(!text.includes(name), name);
    }
    // Correlation: the audit line and the call-duration exemplar carry the trace id.
    const line = gateway.auditLines().find((entry) => entry.trace_id === host.traceId);
    assert.equal(line?.target, 'step_log');
    const metrics = await fetch(`${gateway.baseUrl}/metrics`, {
      headers: { accept: 'application/openmetrics-text; version=1.0.0' },
    });
    assert.match(metrics.headers.get('content-type') ?? '', /^application\/openmetrics-text/);
    assert.match(
      await metrics.text(),
      new RegExp(
        `mcp_server_operation_duration_seconds_bucket\\{[^}]*dagu_read_target="step_log"[^}]*\\} \\d+ # \\{trace_id="${host.traceId}"\\}`,
      ),
    );
    // A Prometheus-text scrape is unchanged (counters keep `_total`, no exemplars).
    const plain = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    assert.match(plain, /^mcp_gateway_served_messages_total\{path="lean"\} /m);
    assert.doesNotMatch(plain, /# \{trace_id=/);
  });

  test('a contract error is the span status and error.type; secrets are nowhere in the trace', async () => {
    const host = hostSpan();
    const answer = await call(
      { target: 'step_log', name: 'no-such-dag', dagRunId: 'latest', stepName: 'x' },
      { traceparent: host.traceparent },
    );
    assert.match(answer.text, /resource_not_found/);
    const found = await jaeger.waitForTrace(host.traceId, callsArrived(1));
    const [span] = gatewaySpans(found);
    assert.equal(tag(span!, 'error.type'), 'resource_not_found');
    assert.equal(tag(span!, 'otel.status_code'), 'ERROR');
    const failed = childrenOf(found, span!).find((child) => tag(child, 'http.response.status_code') === 404);
    assert.ok(failed, spanTree(found));
    assert.equal(tag(failed, 'error.type'), '404');
    const text = JSON.stringify(found);
    for (const secret of [KEY, COLLECTOR_SECRET, 'Bearer'])
      assert.ok(!text.includes(secret), 'a secret reached the trace');
  });

  test('a batch gives one span per call under the same host parent', async () => {
    const host = hostSpan();
    const { dags } = dagu.seed;
    const answer = await postMcp(
      gateway.mcpUrl,
      { ...bearer(KEY), traceparent: host.traceparent, 'mcp-protocol-version': '2025-03-26' },
      [toolCallBody({ target: 'dag', name: dags.twoSteps }, 7), toolCallBody({ target: 'dags' }, 8)],
    );
    assert.equal(answer.status, 200);
    const found = await jaeger.waitForTrace(host.traceId, callsArrived(2));
    const spans = gatewaySpans(found);
    assert.equal(spans.length, 2, spanTree(found));
    assert.deepEqual(spans.map((span) => tag(span, 'jsonrpc.request.id')).sort(), ['7', '8']);
    assert.deepEqual(spans.map((span) => tag(span, 'dagu_read.target')).sort(), ['dag', 'dags']);
    for (const span of spans) {
      assert.equal(parentOf(span), host.spanId);
      assert.ok(childrenOf(found, span).length >= 1, spanTree(found));
    }
  });

  test("the MCP request's _meta.traceparent is the parent, before the HTTP header", async () => {
    const host = hostSpan();
    const other = hostSpan();
    const body = toolCallBody({ target: 'dags' }, 3) as { params: Record<string, unknown> };
    body.params._meta = { traceparent: host.traceparent };
    const answer = await postMcp(gateway.mcpUrl, { ...bearer(KEY), traceparent: other.traceparent }, body);
    assert.equal(answer.status, 200);
    const found = await jaeger.waitForTrace(host.traceId, callsArrived(1));
    const [span] = gatewaySpans(found);
    assert.equal(parentOf(span!), host.spanId);
    assert.equal(tag(span!, 'jsonrpc.request.id'), '3');
  });

  test('Dagu down: the call span has the contract code, its Dagu span the transport failure', async () => {
    const down = await startCapturedGateway({
      ...env(),
      DAGU_URL: `http://127.0.0.1:${await freePort()}`,
      DAGU_API_BASE: dagu.apiBase,
    });
    try {
      const host = hostSpan();
      const answer = await postMcp(
        down.mcpUrl,
        { ...bearer(KEY), traceparent: host.traceparent },
        toolCallBody({ target: 'dags' }),
      );
      assert.match(answer.text, /"isError":true/);
      const found = await jaeger.waitForTrace(host.traceId, callsArrived(1));
      const [span] = gatewaySpans(found);
      const code = tag(span!, 'error.type');
      assert.equal(code, down.auditLines().at(-1)?.outcome);
      assert.equal(tag(span!, 'otel.status_code'), 'ERROR');
      const [request] = childrenOf(found, span!);
      assert.equal(tag(request!, 'error.type'), 'unreachable');
      assert.equal(tag(request!, 'http.response.status_code'), undefined);
    } finally {
      await down.close();
    }
  });
  test('OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf: protobuf bodies, and Jaeger holds the same trace', async () => {
    // A recording hop in front of Jaeger's OTLP receiver shows what the gateway sends.
    const hop = await startRecordingServer({ forwardTo: jaeger.otlpUrl });
    const protobuf = await startCapturedGateway({
      ...env(),
      OTEL_EXPORTER_OTLP_ENDPOINT: hop.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
    });
    try {
      const host = hostSpan();
      const answer = await postMcp(
        protobuf.mcpUrl,
        { ...bearer(KEY), traceparent: host.traceparent },
        toolCallBody({ target: 'dags' }),
      );
      assert.equal(answer.status, 200);
      const found = await jaeger.waitForTrace(host.traceId, callsArrived(1));
      const [span] = gatewaySpans(found);
      assert.equal(parentOf(span!), host.spanId);
      assert.equal(tag(span!, 'dagu_read.target'), 'dags');
      assert.ok(hop.requests.length >= 1);
      for (const request of hop.requests) {
        assert.equal(request.method, 'POST');
        assert.equal(request.rawUrl, '/v1/traces');
        assert.equal(request.headers['content-type'], 'application/x-protobuf');
        assert.equal(request.headers['x-collector-token'], COLLECTOR_SECRET);
      }
    } finally {
      await protobuf.close();
      await hop.close();
    }
  });
});
