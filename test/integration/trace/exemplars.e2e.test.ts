// The dashboard's trace link end to end: a gateway tracing into a real Jaeger (run with the compose
// stack's deploy/jaeger/jaeger.yaml) and scraped by a real Prometheus started with the compose stack's
// feature flags (`--enable-feature=exemplar-storage`) and its scrape job. After a traced call,
// Prometheus's exemplar API holds the call's trace id under the label Grafana's Prometheus data
// source links to Jaeger (`exemplarTraceIdDestinations`), and Jaeger holds that trace: its gateway
// span is the call's (target, JSON-RPC id, request id), whether the host sent a trace or not.
import assert from 'node:assert/strict';
import { join } from 'node:path';
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
import { ROOT } from '../../support/bin.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { deployTool, readRepoYaml } from '../../support/deploy-tools.ts';
import {
  callsArrived,
  gatewaySpans,
  hostSpan,
  type JaegerSpan,
  jaegerBinary,
  parentOf,
  type RunningJaeger,
  startJaeger,
  tag,
} from '../../support/jaeger.ts';
import { type RunningPrometheus, startPrometheus } from '../../support/prometheus.ts';
import { tempDir } from '../../support/temp.ts';

const binary = jaegerBinary();
const prometheusTool = deployTool('prometheus');
const skip = skipUnlessCI(('missing' in binary ? binary.missing : false) || prometheusTool.reason);

const KEY = newApiKey('exemplar-key');

interface ScrapeConfigFile {
  global?: Record<string, unknown>;
  rule_files?: string[];
  scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }>;
}
interface Exemplars {
  status: string;
  data?: Array<{
    seriesLabels: Record<string, string>;
    exemplars: Array<{ labels: Record<string, string> }>;
  }>;
}

/** Polls `probe` every 250 ms until it gives a value (up to `timeoutMs`). */
async function eventually<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('a latency exemplar leads from Prometheus to the trace in Jaeger', { skip }, () => {
  let dagu: TestDagu;
  let jaeger: RunningJaeger;
  let gateway: CapturedGateway;
  let prometheus: RunningPrometheus | undefined;
  let home = '';
  let api = '';
  let job = '';

  before(async () => {
    dagu = await getTestDagu();
    jaeger = await startJaeger((binary as { path: string }).path, {
      configFile: join(ROOT, 'deploy', 'jaeger', 'jaeger.yaml'),
    });
    gateway = await startCapturedGateway({
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl,
      OTEL_BSP_SCHEDULE_DELAY: '20',
      AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'exemplars', key: KEY }]),
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
    });
    // The compose stack's scrape job, pointed at this gateway and run fast; its Prometheus flags.
    home = tempDir('prometheus-exemplars-');
    const shipped = readRepoYaml<ScrapeConfigFile>('deploy', 'prometheus', 'prometheus.yml');
    const scrapeJob = shipped.scrape_configs[0]!;
    job = scrapeJob.job_name;
    const compose = readRepoYaml<{ services: { prometheus: { command: string[] } } }>('docker-compose.yml');
    const features = compose.services.prometheus.command.filter((arg) => arg.startsWith('--enable-feature='));
    assert.deepEqual(features, ['--enable-feature=exemplar-storage']);
    prometheus = await startPrometheus(
      prometheusTool.path!,
      home,
      {
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        scrape_configs: [{ ...scrapeJob, static_configs: [{ targets: [new URL(gateway.baseUrl).host] }] }],
      },
      features,
    );
    api = prometheus.api;
  });
  after(async () => {
    await prometheus?.stop();
    await gateway?.close();
    await jaeger?.stop();
    await dagu?.stop();
  });

  /** The label Grafana's Prometheus data source turns into a link to the Jaeger data source. */
  const traceLabel = () => {
    const datasources = readRepoYaml<{
      datasources: Array<{ jsonData?: { exemplarTraceIdDestinations?: Array<{ name: string }> } }>;
    }>('deploy', 'grafana', 'provisioning', 'datasources', 'prometheus.yml');
    const label = datasources.datasources[0]?.jsonData?.exemplarTraceIdDestinations?.[0]?.name;
    assert.ok(label);
    return label;
  };

  /** The trace ids of the exemplars Prometheus keeps for one target's latency series, once there are any. */
  const exemplarTraceIds = (target: string, label: string) =>
    eventually(`an exemplar of target ${target} in Prometheus`, 30_000, async () => {
      if (prometheus?.exited()) throw new Error(`Prometheus exited:\n${prometheus.logTail(30)}`);
      const series = `mcp_server_operation_duration_seconds_bucket{job="${job}", dagu_read_target="${target}"}`;
      const now = Date.now() / 1000;
      const url = `${api}/api/v1/query_exemplars?query=${encodeURIComponent(series)}&start=${now - 600}&end=${now + 60}`;
      // Prometheus may still be starting: no answer yet is not an error.
      const body = (await fetch(url)
        .then((response) => response.json())
        .catch(() => ({ status: 'starting' }))) as Exemplars;
      const entries = (body.data ?? []).filter((entry) => entry.exemplars.length > 0);
      if (entries.length === 0) return undefined;
      for (const entry of entries) assert.equal(entry.seriesLabels.dagu_read_target, target);
      return [
        ...new Set(entries.flatMap((entry) => entry.exemplars.map((exemplar) => exemplar.labels[label]))),
      ];
    });

  /** The one gateway span of a trace, checked to be the `dagu_read` call of `target` with JSON-RPC id `rpcId`. */
  const callSpan = async (traceId: string, target: string, rpcId: number): Promise<JaegerSpan> => {
    const trace = await jaeger.waitForTrace(traceId, callsArrived(1));
    const spans = gatewaySpans(trace);
    assert.equal(spans.length, 1, `one gateway span in trace ${traceId}`);
    const span = spans[0]!;
    assert.equal(span.traceID, traceId);
    assert.equal(span.operationName, 'tools/call dagu_read');
    assert.equal(tag(span, 'gen_ai.tool.name'), 'dagu_read');
    assert.equal(tag(span, 'dagu_read.target'), target);
    assert.equal(tag(span, 'jsonrpc.request.id'), String(rpcId));
    return span;
  };

  test("with the host's traceparent: the exemplar names the host's trace, and Jaeger's span there is the call, child of the host's span", async () => {
    const host = hostSpan();
    const answer = await postMcp(
      gateway.mcpUrl,
      { ...bearer(KEY), traceparent: host.traceparent },
      toolCallBody({ target: 'dag', name: dagu.seed.dags.twoSteps }, 11),
    );
    assert.equal(answer.status, 200);
    assert.doesNotMatch(answer.text, /"isError":true/);
    const ids = await exemplarTraceIds('dag', traceLabel());
    // The only `dag` call of this gateway: its exemplar carries the host's trace id.
    assert.deepEqual(ids, [host.traceId]);
    const span = await callSpan(host.traceId, 'dag', 11);
    assert.equal(parentOf(span), host.spanId);
  });

  test('without one: the exemplar names the trace the gateway began, the one its audit record names, and Jaeger holds the call there', async () => {
    const answer = await postMcp(gateway.mcpUrl, bearer(KEY), toolCallBody({ target: 'dags' }, 12));
    assert.equal(answer.status, 200);
    assert.doesNotMatch(answer.text, /"isError":true/);
    const audited = gateway.auditLines().filter((line) => line.target === 'dags');
    assert.equal(audited.length, 1);
    const record = audited[0]!;
    assert.match(String(record.trace_id), /^[0-9a-f]{32}$/);
    // The trace id comes from /metrics alone: the test never chose it.
    const ids = await exemplarTraceIds('dags', traceLabel());
    assert.deepEqual(ids, [record.trace_id]);
    const span = await callSpan(ids[0]!, 'dags', 12);
    assert.equal(parentOf(span), undefined);
    assert.equal(tag(span, 'dagu_mcp.request_id'), record.request_id);
  });
});
