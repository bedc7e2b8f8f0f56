// Every shipped alert proven on what the gateway really exports: real gateways are driven into each
// alert's condition (Dagu stopped, Dagu hung, the audit file unwritable, the rate limit hit, bad
// credentials, a broken key file, bad input, the workbook pool full, a gateway gone) and a real
// Prometheus scrapes them, evaluating the shipped rules file as it is. Each scenario is its own scrape
// job, so each alert is seen on the job driven into its condition: pending or firing (the `for:`
// duration aside), and none on a healthy gateway taking calls. `promtool test rules`
// (prometheus-rules.test.ts) keeps testing the thresholds and `for:` durations.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { calibrateHashRates } from '../../../src/workbook/key-derivation.ts';
import { bearer, newApiKey, postMcp, toolCallBody, writeKeysFile } from '../../support/auth-fixtures.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { DAGU_PIN, freePort, getTestDagu } from '../../support/dagu.ts';
import { deployTool, readRepoYaml, repoPath } from '../../support/deploy-tools.ts';
import { type RunningGateway, startGateway } from '../../support/gateway.ts';
import { type RunningPrometheus, startPrometheus } from '../../support/prometheus.ts';
import { RestartableDagu } from '../../support/restartable-dagu.ts';
import { fixtureDir, writeSmallWorkbook } from '../../support/workbook-fixtures.ts';
import { encryptAgile, withSpinCount } from '../../support/workbook-fixtures-crypto.ts';

const RULES_FILE = repoPath('deploy', 'prometheus', 'rules', 'dagu-mcp-gateway.rules.yml');
const ALERTS = readRepoYaml<{ groups: Array<{ rules: Array<{ alert?: string }> }> }>(
  'deploy',
  'prometheus',
  'rules',
  'dagu-mcp-gateway.rules.yml',
).groups.flatMap((group) => group.rules.flatMap((rule) => (rule.alert === undefined ? [] : [rule.alert])));

/** Which alerts each scenario's job must show (others may show too: a hung Dagu is also unreachable). */
const EXPECTED: Record<string, string[]> = {
  gone: ['DaguMcpGatewayDown'],
  'dagu-stopped': [
    'DaguMcpGatewayDaguUnreachable',
    'DaguMcpGatewayDaguRequestsFailing',
    'DaguMcpGatewayErrorRatioHigh',
  ],
  'dagu-hung': ['DaguMcpGatewayLatencyP99High', 'DaguMcpGatewayUpstreamLatencyP99High'],
  'audit-unwritable': ['DaguMcpGatewayAuditWriteFailures'],
  callers: ['DaguMcpGatewayRateLimited', 'DaguMcpGatewayAuthFailures', 'DaguMcpGatewayApiKeysReloadFailed'],
  'bad-input': ['DaguMcpGatewayCallerErrorRatioHigh', 'DaguMcpGatewayAccessDenied'],
  'workbook-pool': ['DaguMcpGatewayWorkbookPoolSaturated', 'DaguMcpGatewayWorkbookReadsRejected'],
  healthy: [],
};
const JOB = (scenario: string) => `dagu-mcp-gateway-${scenario}`;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

interface ActiveAlert {
  labels: Record<string, string>;
  state: string;
}

describe('every alert, on a real gateway driven into its condition and a real Prometheus', () => {
  const prometheusTool = deployTool('prometheus');
  const skip = skipUnlessCI(prometheusTool.reason);
  const gateways: RunningGateway[] = [];
  const loads: Array<() => Promise<void>> = [];
  const targets: Record<string, string> = {};
  let prometheus: RunningPrometheus | undefined;
  let hung: RestartableDagu | undefined;
  let home = '';
  let api = '';
  let cleanupWorkbooks: (() => Promise<void>) | undefined;
  let breakKeyFile = () => {};

  /** Calls `call` every `everyMs` without waiting for the previous one, until stopped. */
  const keepCalling = (everyMs: number, call: () => Promise<unknown>) => {
    const pending = new Set<Promise<unknown>>();
    const timer = setInterval(() => {
      const promise = call().catch(() => undefined);
      pending.add(promise);
      void promise.then(() => pending.delete(promise));
    }, everyMs);
    loads.push(async () => {
      clearInterval(timer);
    });
  };

  // Readiness probes are upstream requests too: on a loaded machine a short probe timeout would time
  // out against a healthy Dagu. The stopped and hung scenarios probe fast to be seen quickly.
  const gateway = async (scenario: string, env: Record<string, string>) => {
    const started = await startGateway({
      RATE_LIMIT_PER_MINUTE: '1000000',
      MAX_CONCURRENT_CALLS_PER_IDENTITY: '1000',
      ...env,
    });
    gateways.push(started);
    targets[scenario] = new URL(started.baseUrl).host;
    return started;
  };

  before(async () => {
    if (skip) return;
    home = mkdtempSync(join(tmpdir(), 'alerts-test-'));
    const dagu = await getTestDagu();
    const key = newApiKey('alerts');
    const keysFile = writeKeysFile([{ name: 'alerts', key }]);
    const auth = bearer(key);
    const read = (url: string, args: unknown = { target: 'dags' }) => postMcp(url, auth, toolCallBody(args));

    // Healthy: a real Dagu, calls that succeed.
    const healthy = await gateway('healthy', { DAGU_URL: dagu.url, AUTH_API_KEYS_FILE: keysFile });
    keepCalling(300, () => read(healthy.mcpUrl));

    // Gone: a target nothing listens on.
    targets.gone = `127.0.0.1:${await freePort()}`;

    // Dagu stopped: nothing listens at DAGU_URL.
    const stopped = await gateway('dagu-stopped', {
      DAGU_URL: `http://127.0.0.1:${await freePort()}`,
      DAGU_API_BASE: DAGU_PIN.apiBase,
      DAGU_PROBE_INTERVAL_MS: '500',
      AUTH_API_KEYS_FILE: keysFile,
    });
    keepCalling(300, () => read(stopped.mcpUrl));

    // Dagu hung: a real Dagu of its own, stopped with SIGSTOP after a first read.
    hung = new RestartableDagu(mkdtempSync(join(tmpdir(), 'alerts-dagu-')), await freePort());
    await hung.start();
    const slow = await gateway('dagu-hung', {
      DAGU_URL: hung.url,
      DAGU_API_BASE: DAGU_PIN.apiBase,
      DAGU_TIMEOUT_MS: '6000',
      CALL_DEADLINE_MS: '20000',
      DAGU_PROBE_INTERVAL_MS: '500',
      AUTH_API_KEYS_FILE: keysFile,
    });
    assert.equal((await read(slow.mcpUrl)).status, 200);
    hung.signal('SIGSTOP');
    keepCalling(1000, () => read(slow.mcpUrl));

    // The audit log cannot be written (root can write any file; nobody can write /dev/full).
    const unwritable = await gateway('audit-unwritable', {
      DAGU_URL: dagu.url,
      AUDIT_LOG: '/dev/full',
      AUTH_API_KEYS_FILE: keysFile,
    });
    keepCalling(500, () => read(unwritable.mcpUrl));

    // Callers: over the rate limit, with unknown keys, and a key file that becomes unreadable.
    const limitedFile = writeKeysFile([{ name: 'alerts', key }]);
    const callers = await gateway('callers', {
      DAGU_URL: dagu.url,
      AUTH_API_KEYS_FILE: limitedFile,
      RATE_LIMIT_PER_MINUTE: '2',
    });
    keepCalling(300, () => read(callers.mcpUrl));
    keepCalling(300, () => postMcp(callers.mcpUrl, bearer(newApiKey('stranger'))));
    // Broken once Prometheus watches (below): a counter's first sample must be from before the failure.
    breakKeyFile = () => writeFileSync(limitedFile, 'keys: [this is not a key file');

    // Bad input: unsupported targets, and workbook reads a gateway without WORKBOOK_ROOTS refuses.
    const badInput = await gateway('bad-input', { DAGU_URL: dagu.url, AUTH_API_KEYS_FILE: keysFile });
    let turn = 0;
    keepCalling(150, () => {
      turn += 1;
      return read(
        badInput.mcpUrl,
        turn % 10 < 6
          ? { target: 'no-such-target' }
          : turn % 10 < 9
            ? { target: 'workbook', path: 'a.xlsx' }
            : { target: 'dags' },
      );
    });

    // The workbook pool full: one worker busy with a slow encrypted read, one read waiting, more refused.
    const { dir, cleanup } = await fixtureDir('alerts-workbook');
    cleanupWorkbooks = cleanup;
    const small = await writeSmallWorkbook(join(dir, 'cities.xlsx'));
    const spinCount = Math.round((12_000 * calibrateHashRates().SHA512) / 2);
    writeFileSync(join(dir, 'slow.xlsx'), withSpinCount(encryptAgile(readFileSync(small), 'pw'), spinCount));
    const pool = await gateway('workbook-pool', {
      DAGU_URL: dagu.url,
      AUTH_API_KEYS_FILE: keysFile,
      WORKBOOK_ROOTS: dir,
      WORKBOOK_MAX_CONCURRENT: '1',
      WORKBOOK_MAX_PER_CALLER: '1',
      WORKBOOK_QUEUE_MAX: '2',
      WORKBOOK_MAX_SPIN_COUNT: '10000000',
      WORKBOOK_DEADLINE_MS: '120000',
      CALL_DEADLINE_MS: '120000',
    });
    const slowRead = { target: 'workbook', path: 'slow.xlsx', password: 'not the password' };
    keepCalling(500, () => read(pool.mcpUrl, slowRead));

    // Prometheus: the shipped rules file, one job per scenario, scraped and evaluated every second.
    prometheus = await startPrometheus(prometheusTool.path!, home, {
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [RULES_FILE],
      scrape_configs: Object.entries(targets).map(([scenario, target]) => ({
        job_name: JOB(scenario),
        static_configs: [{ targets: [target] }],
      })),
    });
    api = prometheus.api;
  });
  after(async () => {
    const closing = performance.now();
    await Promise.all(loads.map((stop) => stop()));
    await prometheus?.stop();
    hung?.signal('SIGCONT');
    await Promise.all(gateways.map((running) => running.close()));
    await hung?.stop();
    await cleanupWorkbooks?.();
    if (home !== '') rmSync(home, { recursive: true, force: true });
    process.stdout.write(`# closed in ${((performance.now() - closing) / 1000).toFixed(1)} s\n`);
  });

  test('the scenarios cover every alert of the rules file', () => {
    const covered = new Set(Object.values(EXPECTED).flat());
    assert.deepEqual(
      ALERTS.filter((alert) => !covered.has(alert)),
      [],
    );
    assert.equal(ALERTS.length, 14);
  });

  test('each alert is active on the job driven into its condition, and none on the healthy one', {
    skip,
  }, async () => {
    const seen = new Map<string, Set<string>>();
    const missing = () =>
      Object.entries(EXPECTED).flatMap(([scenario, alerts]) =>
        alerts
          .filter((alert) => !seen.get(JOB(scenario))?.has(alert))
          .map((alert) => `${scenario}: ${alert}`),
      );
    const started = performance.now();
    const query = (promql: string) =>
      fetch(`${api}/api/v1/query?query=${encodeURIComponent(promql)}`)
        .then((response) => response.json() as Promise<{ data: { result: unknown[] } }>)
        .catch(() => undefined);
    while (
      !(await query(`mcp_gateway_api_keys_reloads_total{job="${JOB('callers')}"}`))?.data.result.length
    ) {
      assert.ok(performance.now() - started < 60_000, 'Prometheus never scraped the gateways');
      await sleep(250);
    }
    breakKeyFile();
    let states: ActiveAlert[] = [];
    for (;;) {
      const answer = await fetch(`${api}/api/v1/alerts`)
        .then((response) => response.json() as Promise<{ data: { alerts: ActiveAlert[] } }>)
        .catch(() => undefined);
      states = answer?.data.alerts ?? [];
      for (const alert of states) {
        const job = alert.labels.job ?? '';
        const names = seen.get(job) ?? new Set<string>();
        names.add(alert.labels.alertname ?? '');
        seen.set(job, names);
      }
      if (missing().length === 0 || performance.now() - started > 90_000) break;
      await sleep(500);
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    process.stdout.write(
      `# alerts active after ${seconds} s:\n${[...seen]
        .map(([job, names]) => `#   ${job}: ${[...names].sort().join(', ')}`)
        .join('\n')}\n`,
    );
    assert.deepEqual(missing(), [], prometheus?.logTail(10));
    assert.deepEqual([...(seen.get(JOB('healthy')) ?? [])], [], 'no alert on the healthy gateway');
  });
});
