// The dashboard's trace link end to end: a gateway tracing into a real Jaeger (run with the compose
// stack's deploy/jaeger/jaeger.yaml) and scraped by a real Prometheus started with the compose stack's
// feature flags (`--enable-feature=exemplar-storage`) and its scrape job. After a traced call,
// Prometheus's exemplar API holds the call's trace id under the label Grafana's Prometheus data
// source links to Jaeger (`exemplarTraceIdDestinations`), and Jaeger holds that trace.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
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
import { callsArrived, jaegerBinary, type RunningJaeger, startJaeger } from '../../support/jaeger.ts';
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

  test('the exemplar Prometheus keeps names the call’s trace, by the label Grafana links to Jaeger', async () => {
    const traceId = randomBytes(16).toString('hex');
    const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
    const answer = await postMcp(
      gateway.mcpUrl,
      { ...bearer(KEY), traceparent },
      toolCallBody({ target: 'dag', name: dagu.seed.dags.twoSteps }),
    );
    assert.equal(answer.status, 200);
    assert.doesNotMatch(answer.text, /"isError":true/);
    const trace = await jaeger.waitForTrace(traceId, callsArrived(1));
    // The label Grafana's Prometheus data source turns into a link to the Jaeger data source.
    const datasources = readRepoYaml<{
      datasources: Array<{ jsonData?: { exemplarTraceIdDestinations?: Array<{ name: string }> } }>;
    }>('deploy', 'grafana', 'provisioning', 'datasources', 'prometheus.yml');
    const label = datasources.datasources[0]?.jsonData?.exemplarTraceIdDestinations?.[0]?.name;
    assert.ok(label);
    const series = `mcp_server_operation_duration_seconds_bucket{job="${job}", dagu_read_target="dag"}`;
    const found = await eventually('the exemplar in Prometheus', 30_000, async () => {
      if (prometheus?.exited()) throw new Error(`Prometheus exited:\n${prometheus.logTail(30)}`);
      const now = Date.now() / 1000;
      const url = `${api}/api/v1/query_exemplars?query=${encodeURIComponent(series)}&start=${now - 600}&end=${now + 60}`;
      // Prometheus may still be starting: no answer yet is not an error.
      const body = (await fetch(url)
        .then((response) => response.json())
        .catch(() => ({ status: 'starting' }))) as Exemplars;
      return body.data?.find((entry) =>
        entry.exemplars.some((exemplar) => exemplar.labels[label] === traceId),
      );
    });
    assert.equal(found.seriesLabels.dagu_read_target, 'dag');
    // That trace id is the call's trace in Jaeger.
    assert.equal(trace.traceID, traceId);
  });
});
