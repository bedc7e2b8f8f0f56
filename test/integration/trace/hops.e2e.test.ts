// Tracing across the hops, each read back from a real Jaeger run with the compose stack's own
// configuration (deploy/jaeger/jaeger.yaml, its endpoints moved to free 127.0.0.1 ports): the
// `traceparent` each Dagu request carries (seen by a recording hop in front of the real Dagu) names
// the call's trace and its Dagu-request span; every log line of a traced call carries the trace id of
// its audit line and of Jaeger's trace; and `--stdio` exports its calls' spans, stdout staying protocol.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Stream } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  bearer,
  newApiKey,
  postMcp,
  startCapturedGateway,
  toolCallBody,
  writeKeysFile,
} from '../../support/auth-fixtures.ts';
import { BIN, baseEnv, ensureBuilt, folderWithoutDotEnv, ROOT } from '../../support/bin.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
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

const KEY = newApiKey('hops-key');

/** Polls `probe` every 20 ms until it gives a value (up to 10 s). */
async function eventually<T>(what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `traceparent` as W3C Trace Context writes it: version 00, trace id, parent span id, flags. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

describe('traces across the hops, into the compose stack’s Jaeger configuration', { skip }, () => {
  let dagu: TestDagu;
  let jaeger: RunningJaeger;
  const tracingEnv = () => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl,
    OTEL_TRACES_SAMPLER: 'always_on',
    OTEL_BSP_SCHEDULE_DELAY: '20',
  });
  before(async () => {
    dagu = await getTestDagu();
    jaeger = await startJaeger((binary as { path: string }).path, {
      configFile: join(ROOT, 'deploy', 'jaeger', 'jaeger.yaml'),
    });
  });
  after(async () => {
    await jaeger?.stop();
    await dagu?.stop();
  });

  const stepLogArgs = () => {
    const { runs, facts, dags } = dagu.seed;
    return {
      target: 'step_log',
      name: dags.twoSteps,
      dagRunId: runs.twoStepsSecond,
      stepName: facts.twoStepsStepNames[0],
    };
  };

  test('each Dagu request of a traced call carries a traceparent naming the call’s trace and its Dagu-request span', async () => {
    const recorder = await startRecordingServer({ forwardTo: dagu.url });
    const gateway = await startCapturedGateway({
      ...tracingEnv(),
      AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'hops', key: KEY }]),
      DAGU_URL: recorder.url,
      DAGU_API_BASE: dagu.apiBase,
      // No background readiness probe, only the one at start-up.
      DAGU_PROBE_INTERVAL_MS: '0',
    });
    try {
      // The start-up probe of Dagu has answered: every request the hop sees from now on is the call's.
      await eventually('Dagu found', async () =>
        (await fetch(`${gateway.baseUrl}/readyz`)).ok ? true : undefined,
      );
      const host = hostSpan();
      const before = recorder.requests.length;
      const answer = await postMcp(
        gateway.mcpUrl,
        { ...bearer(KEY), traceparent: host.traceparent },
        toolCallBody(stepLogArgs()),
      );
      assert.equal(answer.status, 200);
      assert.doesNotMatch(answer.text, /"isError":true/);
      const sent = recorder.requests.slice(before);
      assert.ok(sent.length >= 2, `${sent.length} Dagu requests`);
      const found = await jaeger.waitForTrace(host.traceId, callsArrived(1, sent.length));
      const [span, ...others] = gatewaySpans(found);
      assert.ok(span !== undefined && others.length === 0, spanTree(found));
      const daguSpans = new Map(childrenOf(found, span).map((child) => [child.spanID, child]));
      assert.equal(daguSpans.size, sent.length, spanTree(found));
      const parents = new Set<string>();
      for (const request of sent) {
        const match = TRACEPARENT.exec(String(request.headers.traceparent));
        assert.ok(match, `${request.rawUrl}: traceparent ${request.headers.traceparent}`);
        const [, traceId, parentId, flags] = match;
        assert.equal(traceId, host.traceId);
        assert.equal(flags, '01');
        // The parent Dagu sees is the span Jaeger holds for this very request (its route template).
        const daguSpan = daguSpans.get(parentId!);
        assert.ok(
          daguSpan,
          `${request.rawUrl}: parent ${parentId} is no Dagu-request span\n${spanTree(found)}`,
        );
        const template = String(tag(daguSpan, 'url.template'));
        const route = new RegExp(`^${dagu.apiBase}${template.replace(/\{[^}]+\}/g, '[^/?]+')}(\\?|$)`);
        assert.match(request.rawUrl, route);
        parents.add(parentId!);
      }
      // One request, one span: no span id is used twice.
      assert.equal(parents.size, sent.length);
    } finally {
      await gateway.close();
      await recorder.close();
    }
  });

  test('every log line of a traced call carries the trace id of its audit line and of Jaeger’s trace', async () => {
    const gateway = await startCapturedGateway(
      {
        ...tracingEnv(),
        AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'hops', key: KEY }]),
        DAGU_URL: dagu.url,
        DAGU_API_BASE: dagu.apiBase,
        DAGU_PROBE_INTERVAL_MS: '0',
      },
      { logLevel: 'debug' },
    );
    try {
      const host = hostSpan();
      const answer = await postMcp(
        gateway.mcpUrl,
        { ...bearer(KEY), traceparent: host.traceparent },
        toolCallBody(stepLogArgs()),
      );
      assert.equal(answer.status, 200);
      const found = await jaeger.waitForTrace(host.traceId, callsArrived(1));
      const [span] = gatewaySpans(found);
      assert.ok(span);
      // The audit line is written once the result is on its way: it may follow the answer.
      const audit = await eventually('the audit line', () =>
        gateway.auditLines().find((line) => line.trace_id === host.traceId),
      );
      assert.equal(audit.trace_id, span.traceID);
      // At debug the request's own lines are logged, the last once the answer is sent.
      const lines = await eventually('the request log lines', () => {
        const parsed = gateway
          .logText()
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        return parsed.some((line) => line.msg === 'request completed') ? parsed : undefined;
      });
      const ofCall = lines.filter((line) => line.reqId === audit.request_id || line.trace_id !== undefined);
      const messages = ofCall.map((line) => line.msg);
      for (const expected of ['incoming request', 'request completed'])
        assert.ok(messages.includes(expected), `${expected}: ${JSON.stringify(lines)}`);
      for (const line of ofCall) assert.equal(line.trace_id, span.traceID, JSON.stringify(line));
    } finally {
      await gateway.close();
    }
  });

  test('--stdio exports a span per call, under the host’s _meta.traceparent; stdout stays protocol', async () => {
    ensureBuilt();
    const transport = new StdioClientTransport({
      command: 'node',
      args: [BIN, '--stdio', '--dagu-url', dagu.url, '--dagu-api-base', dagu.apiBase],
      env: baseEnv({ LOG_LEVEL: 'info', ...tracingEnv(), OTEL_SERVICE_NAME: 'gateway-over-stdio' }),
      cwd: folderWithoutDotEnv(),
      stderr: 'pipe',
    });
    let stderr = '';
    (transport.stderr as Stream).on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: 'hops-stdio', version: '1.0.0' });
    // A line on stdout that is not JSON-RPC reaches the client as an error.
    const transportErrors: Error[] = [];
    client.onerror = (error) => transportErrors.push(error);
    await client.connect(transport);
    try {
      const host = hostSpan();
      const result = (await client.callTool({
        name: 'dagu_read',
        arguments: stepLogArgs(),
        _meta: { traceparent: host.traceparent },
      })) as { isError?: boolean };
      assert.notEqual(result.isError, true, JSON.stringify(result));
      const found = await jaeger.waitForTrace(host.traceId, callsArrived(1));
      const [span, ...others] = gatewaySpans(found);
      assert.ok(span !== undefined && others.length === 0, spanTree(found));
      assert.equal(parentOf(span), host.spanId);
      assert.equal(found.processes[span.processID]?.serviceName, 'gateway-over-stdio');
      assert.equal(tag(span, 'enduser.id'), 'stdio');
      assert.equal(tag(span, 'dagu_mcp.identity.kind'), 'local');
      assert.equal(tag(span, 'dagu_read.target'), 'step_log');
      const daguSpans = childrenOf(found, span);
      assert.ok(daguSpans.length >= 1, spanTree(found));
      for (const request of daguSpans) assert.match(request.operationName, /^GET \/dag-runs\//);
      // The audit line (stderr) names the trace; stdout carried nothing but the protocol.
      const audit = await eventually('the audit line on stderr', () =>
        stderr
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .find((line) => line.event === 'mcp.tool_call'),
      );
      assert.equal(audit?.trace_id, host.traceId);
      assert.deepEqual(transportErrors, []);
    } finally {
      await client.close();
    }
  });
});
