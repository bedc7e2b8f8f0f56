// Every shipped alert proven on what the gateway really exports: real gateways are driven into each
// alert's condition (Dagu stopped, Dagu hung, the audit file unwritable, the rate limit hit, bad
// credentials, a broken key file, bad input, the workbook pool full, a gateway gone) and a real
// Prometheus scrapes them, evaluating the shipped rules file as it is. Each scenario is its own scrape
// job, so each alert is seen on the job driven into its condition: pending or firing (the `for:`
// duration aside), and none on a healthy gateway taking calls. The wait for them ends on events, not
// a wall-clock window: every load answered enough calls, then scraped and evaluated (conditionsDue).
// `promtool test rules` (prometheus-rules.test.ts) keeps testing the thresholds and `for:` durations.
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
/**
 * Calls each load must have answered, once Prometheus watches, before its scenario's condition counts
 * as in place: the rules' rates run over 5 m, so a rate passes the highest threshold (0.1/s, auth
 * failures) only after 30 events in the range; half as many again for the counter's first sample.
 */
const ANSWERS_BEFORE_DUE = 45;
/** Scrapes of a job that begin after its condition is in place: rates need two samples that moved. */
const SCRAPES_BEFORE_DUE = 3;
/** Only against a hang: the wait ends on the events above, long before this. */
const SAFETY_CAP_MS = 10 * 60_000;

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

  /** When (epoch ms) each load (`<scenario>` or `<scenario>:<what>`) was answered a call. */
  const answeredAt = new Map<string, number[]>();

  /** Calls `call` every `everyMs` without waiting for the previous one, until stopped. */
  const keepCalling = (load: string, everyMs: number, call: () => Promise<unknown>) => {
    const pending = new Set<Promise<unknown>>();
    const answered: number[] = [];
    answeredAt.set(load, answered);
    const timer = setInterval(() => {
      const promise = call().then(
        () => answered.push(Date.now()),
        () => undefined,
      );
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
    keepCalling('healthy', 300, () => read(healthy.mcpUrl));

    // Gone: a target nothing listens on.
    targets.gone = `127.0.0.1:${await freePort()}`;

    // Dagu stopped: nothing listens at DAGU_URL.
    const stopped = await gateway('dagu-stopped', {
      DAGU_URL: `http://127.0.0.1:${await freePort()}`,
      DAGU_API_BASE: DAGU_PIN.apiBase,
      DAGU_PROBE_INTERVAL_MS: '500',
      AUTH_API_KEYS_FILE: keysFile,
    });
    keepCalling('dagu-stopped', 300, () => read(stopped.mcpUrl));

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
    keepCalling('dagu-hung', 1000, () => read(slow.mcpUrl));

    // The audit log cannot be written (root can write any file; nobody can write /dev/full).
    const unwritable = await gateway('audit-unwritable', {
      DAGU_URL: dagu.url,
      AUDIT_LOG: '/dev/full',
      AUTH_API_KEYS_FILE: keysFile,
    });
    keepCalling('audit-unwritable', 500, () => read(unwritable.mcpUrl));

    // Callers: over the rate limit, with unknown keys, and a key file that becomes unreadable.
    const limitedFile = writeKeysFile([{ name: 'alerts', key }]);
    const callers = await gateway('callers', {
      DAGU_URL: dagu.url,
      AUTH_API_KEYS_FILE: limitedFile,
      RATE_LIMIT_PER_MINUTE: '2',
    });
    keepCalling('callers', 300, () => read(callers.mcpUrl));
    keepCalling('callers:strangers', 300, () => postMcp(callers.mcpUrl, bearer(newApiKey('stranger'))));
    // Broken once Prometheus watches (below): a counter's first sample must be from before the failure.
    breakKeyFile = () => writeFileSync(limitedFile, 'keys: [this is not a key file');

    // Bad input: unsupported targets, and workbook reads a gateway without WORKBOOK_ROOTS refuses.
    const badInput = await gateway('bad-input', { DAGU_URL: dagu.url, AUTH_API_KEYS_FILE: keysFile });
    let turn = 0;
    keepCalling('bad-input', 150, () => {
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
    keepCalling('workbook-pool', 500, () => read(pool.mcpUrl, slowRead));

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

  /** Prometheus's JSON API, or undefined while it cannot answer. */
  const prometheusJson = <T>(path: string): Promise<T | undefined> =>
    fetch(`${api}${path}`)
      .then((response) => response.json() as Promise<{ data: T }>)
      .then((body) => body.data)
      .catch(() => undefined);

  /**
   * A check that turns true once every scenario's condition has had its chance to show as an alert:
   * each of its loads was answered ANSWERS_BEFORE_DUE calls since `from` (the key-file scenario: its
   * reload failure shows on its own /metrics too; `gone`, which has none: at once), Prometheus then began
   * SCRAPES_BEFORE_DUE scrapes of its job, and evaluated every rule group twice after the last of those.
   */
  const conditionsDue = (from: number) => {
    const inPlaceAt = new Map<string, number>();
    const scrapes = new Map<string, Set<number>>();
    const evaluations = new Map<string, Set<number>>();
    let waitingFor = 'scenario conditions';
    const reloadFailed = () =>
      fetch(`http://${targets.callers}/metrics`)
        .then((response) => response.text())
        .then((text) => /^mcp_gateway_api_keys_reloads_total\{[^}]*result="error"[^}]*\} [1-9]/m.test(text))
        .catch(() => false);
    const check = async (): Promise<boolean> => {
      for (const scenario of Object.keys(EXPECTED)) {
        if (inPlaceAt.has(scenario)) continue;
        if (scenario === 'gone') {
          inPlaceAt.set(scenario, from);
          continue;
        }
        const loads = [...answeredAt].filter(([load]) => load.split(':')[0] === scenario);
        const enoughAt = loads.map(
          ([, answered]) => answered.filter((at) => at >= from)[ANSWERS_BEFORE_DUE - 1],
        );
        if (enoughAt.some((at) => at === undefined)) continue;
        if (scenario === 'callers' && !(await reloadFailed())) continue;
        inPlaceAt.set(scenario, Math.max(...(enoughAt as number[]), scenario === 'callers' ? Date.now() : 0));
      }
      const targetList = await prometheusJson<{
        activeTargets: Array<{ labels: Record<string, string>; lastScrape: string }>;
      }>('/api/v1/targets');
      for (const target of targetList?.activeTargets ?? []) {
        const job = target.labels.job ?? '';
        scrapes.set(job, (scrapes.get(job) ?? new Set()).add(Date.parse(target.lastScrape)));
      }
      const notInPlace = Object.keys(EXPECTED).filter((scenario) => !inPlaceAt.has(scenario));
      if (notInPlace.length > 0) {
        waitingFor = `answered calls of ${notInPlace.join(', ')}`;
        return false;
      }
      let lastNeeded = 0;
      for (const [scenario, at] of inPlaceAt) {
        const after = [...(scrapes.get(JOB(scenario)) ?? [])]
          .filter((time) => time > at)
          .sort((a, b) => a - b);
        if (after.length < SCRAPES_BEFORE_DUE) {
          waitingFor = `scrapes of ${JOB(scenario)}`;
          return false;
        }
        lastNeeded = Math.max(lastNeeded, after[SCRAPES_BEFORE_DUE - 1]!);
      }
      const rules = await prometheusJson<{ groups: Array<{ name: string; lastEvaluation: string }> }>(
        '/api/v1/rules',
      );
      for (const group of rules?.groups ?? []) {
        const seenTimes = evaluations.get(group.name) ?? new Set<number>();
        evaluations.set(group.name, seenTimes.add(Date.parse(group.lastEvaluation)));
      }
      waitingFor = 'rule evaluations';
      return (
        evaluations.size > 0 &&
        [...evaluations.values()].every((times) => [...times].filter((time) => time > lastNeeded).length >= 2)
      );
    };
    return Object.assign(check, { waitingFor: () => waitingFor });
  };

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
    // No wall-clock window: the wait ends when every alert is seen, or when every scenario's condition
    // has had its chance (events, however slowly a loaded machine produces them; conditionsDue).
    const due = conditionsDue(Date.now());
    for (;;) {
      const wasDue = await due();
      const answer = await fetch(`${api}/api/v1/alerts`)
        .then((response) => response.json() as Promise<{ data: { alerts: ActiveAlert[] } }>)
        .catch(() => undefined);
      for (const alert of answer?.data.alerts ?? []) {
        const job = alert.labels.job ?? '';
        const names = seen.get(job) ?? new Set<string>();
        names.add(alert.labels.alertname ?? '');
        seen.set(job, names);
      }
      if (missing().length === 0 || wasDue) break;
      assert.ok(performance.now() - started < SAFETY_CAP_MS, `no progress: ${due.waitingFor()}`);
      await sleep(250);
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
