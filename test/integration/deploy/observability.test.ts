// The alerts and the dashboard are built on metrics the gateway really exports: a gateway runs against
// the real test Dagu, takes a few calls, and its /metrics is compared with every metric name in every
// rule and dashboard expression (parsed with Prometheus's own PromQL grammar). Then a real Prometheus,
// configured from the compose stack's scrape config and loading the rules file, scrapes that gateway:
// the target is up, a query for a gateway metric answers what /metrics says, every rule evaluates
// without error and every dashboard query runs.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parser } from '@prometheus-io/lezer-promql';
import {
  bearer,
  metricSum,
  newApiKey,
  type Sample,
  scrape,
  writeKeysFile,
} from '../../support/auth-fixtures.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { deployTool, readRepoFile, readRepoYaml, repoPath } from '../../support/deploy-tools.ts';
import { connectModern, type RunningGateway, startGateway } from '../../support/gateway.ts';
import { type RunningPrometheus, startPrometheus } from '../../support/prometheus.ts';

const RULES_FILE = repoPath('deploy', 'prometheus', 'rules', 'dagu-mcp-gateway.rules.yml');
const DASHBOARDS = ['dagu-mcp-gateway.json'];
/** The one series name Prometheus itself makes for every target; the rules use it for "gateway down". */
const SCRAPE_SERIES = new Set(['up']);

interface RuleFile {
  groups: Array<{ name: string; rules: Array<{ alert?: string; record?: string; expr: string }> }>;
}
const rules = readRepoYaml<RuleFile>(
  'deploy',
  'prometheus',
  'rules',
  'dagu-mcp-gateway.rules.yml',
).groups.flatMap((group) => group.rules);
const recorded = new Set(rules.flatMap((rule) => (rule.record === undefined ? [] : [rule.record])));

interface Panel {
  title?: string;
  targets?: Array<{ expr?: string }>;
  panels?: Panel[];
}
interface Dashboard {
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query?: string | { query: string } }> };
}

/** Every PromQL expression of a dashboard, with where it comes from; template queries as label_values(...). */
function dashboardExpressions(file: string): Array<{ where: string; expr: string }> {
  const dashboard = JSON.parse(readRepoFile('deploy', 'grafana', 'dashboards', file)) as Dashboard;
  const found: Array<{ where: string; expr: string }> = [];
  const visit = (panels: Panel[]) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        if (target.expr !== undefined)
          found.push({ where: `${file}: panel "${panel.title}"`, expr: target.expr });
      }
      visit(panel.panels ?? []);
    }
  };
  visit(dashboard.panels);
  for (const variable of dashboard.templating.list) {
    if (variable.type !== 'query') continue;
    const query = typeof variable.query === 'string' ? variable.query : variable.query?.query;
    const selector = /^label_values\((.+),\s*[A-Za-z_]\w*\)$/.exec(query ?? '')?.[1];
    assert.ok(selector, `${file}: variable ${variable.name} is a label_values() query (got ${query})`);
    found.push({ where: `${file}: variable $${variable.name}`, expr: selector });
  }
  return found;
}

/** Grafana's variables, replaced by values PromQL accepts. */
const grafanaToPromql = (expr: string) =>
  expr
    .replaceAll('$__rate_interval', '1m')
    .replaceAll('$__range', '5m')
    .replaceAll('$__interval', '15s')
    .replace(/\$\{?job\}?/g, '.+');

interface Selector {
  metric: string;
  labels: string[];
}

/** The vector selectors of a PromQL expression: metric name and the label names matched on. */
function selectors(expr: string): Selector[] {
  const tree = parser.parse(expr);
  const found: Selector[] = [];
  const cursor = tree.cursor();
  do {
    assert.notEqual(cursor.type.isError, true, `PromQL does not parse at ${cursor.from}: ${expr}`);
    if (cursor.name !== 'VectorSelector') continue;
    const node = cursor.node;
    const identifier = node.getChild('Identifier');
    assert.ok(identifier, `a selector without a metric name (use the name, not {__name__=…}): ${expr}`);
    const labels = node
      .getChild('LabelMatchers')
      ?.getChildren('UnquotedLabelMatcher')
      .map((matcher) => {
        const name = matcher.getChild('LabelName');
        return name === null ? '' : expr.slice(name.from, name.to);
      });
    found.push({ metric: expr.slice(identifier.from, identifier.to), labels: labels ?? [] });
  } while (cursor.next());
  return found;
}

/** Sample names of every family /metrics declares (`# TYPE`), histograms as _bucket, _sum and _count. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = match as unknown as [string, string, string];
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    else if (type === 'summary') for (const suffix of ['', '_sum', '_count']) names.add(name + suffix);
    else names.add(name);
  }
  return names;
}

const KEY = newApiKey('observer');
let dagu: TestDagu;
let gateway: RunningGateway;
let exported: { text: string; samples: Sample[] };

before(async () => {
  dagu = await getTestDagu();
  gateway = await startGateway({
    DAGU_URL: dagu.url,
    DAGU_API_BASE: dagu.apiBase,
    AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'observer', key: KEY }]),
  });
  // A few calls of each kind: successes, a caller's error, a resource read, an authentication failure.
  const client = await connectModern(gateway.mcpUrl, bearer(KEY));
  try {
    const { dags, runs } = dagu.seed;
    for (const args of [
      { target: 'dags' },
      { target: 'run', name: dags.fails, dagRunId: runs.fails },
      { target: 'run_logs', name: dags.twoSteps, dagRunId: runs.twoStepsFirst },
      { target: 'no-such-target' },
    ]) {
      await client.callTool(args);
    }
    await client.readResource('dagu://dags');
  } finally {
    await client.close();
  }
  const refused = await fetch(gateway.mcpUrl, { method: 'POST', headers: bearer(newApiKey('stranger')) });
  assert.equal(refused.status, 401);
  exported = await scrape(gateway.baseUrl);
});
after(async () => {
  await gateway?.close();
  await dagu?.stop();
});

describe('every metric in the rules and the dashboard is one the gateway exports', () => {
  const expressions = [
    ...rules.map((rule) => ({ where: `rule ${rule.record ?? rule.alert}`, expr: rule.expr })),
    ...DASHBOARDS.flatMap(dashboardExpressions),
  ];

  test('the expressions exist and parse', () => {
    assert.ok(expressions.length >= 30, `only ${expressions.length} expressions found`);
    for (const { expr } of expressions) selectors(grafanaToPromql(expr));
  });

  test('metric names: exported by /metrics, recorded by the rules file, or `up`', () => {
    const names = exportedNames(exported.text);
    assert.ok(
      names.has('mcp_server_operation_duration_seconds_count'),
      'the scrape declares the gateway families',
    );
    const unknown: string[] = [];
    for (const { where, expr } of expressions) {
      for (const { metric } of selectors(grafanaToPromql(expr))) {
        if (!names.has(metric) && !recorded.has(metric) && !SCRAPE_SERIES.has(metric)) {
          unknown.push(`${where}: ${metric}`);
        }
      }
    }
    assert.deepEqual(unknown, [], 'metric names the gateway does not export');
  });

  test('label names matched on are labels those metrics carry (or job/instance, added by the scrape)', () => {
    const labelsOf = new Map<string, Set<string>>();
    for (const sample of exported.samples) {
      const set = labelsOf.get(sample.name) ?? new Set(['job', 'instance']);
      for (const label of Object.keys(sample.labels)) set.add(label);
      labelsOf.set(sample.name, set);
    }
    const wrong: string[] = [];
    let checked = 0;
    for (const { where, expr } of expressions) {
      for (const { metric, labels } of selectors(grafanaToPromql(expr))) {
        // A labelled family with no sample yet (e.g. key reloads) shows no label names to compare with.
        const known = labelsOf.get(metric);
        if (known === undefined) continue;
        for (const label of labels) {
          checked += 1;
          // Histogram series without an error carry no error_type label: matching error_type!="" is valid.
          if (!known.has(label) && !(label === 'error_type' && metric.startsWith('mcp_server_operation'))) {
            wrong.push(`${where}: ${metric}{${label}}`);
          }
        }
      }
    }
    assert.ok(checked > 20, `only ${checked} label matchers checked`);
    assert.deepEqual(wrong, [], 'label names the metric does not have');
  });

  test('a misspelt metric would be caught', () => {
    const names = exportedNames(exported.text);
    const [selector] = selectors('sum(rate(mcp_gateway_ratelimited_total[5m]))');
    assert.equal(selector?.metric, 'mcp_gateway_ratelimited_total');
    assert.equal(names.has(selector.metric), false);
  });
});

// ---- a real Prometheus scraping the gateway -----------------------------------------------------

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

interface ScrapeConfigFile {
  global?: Record<string, unknown>;
  rule_files?: string[];
  scrape_configs: Array<{
    job_name: string;
    metrics_path?: string;
    static_configs: Array<{ targets: string[] }>;
  }>;
}

describe('a real Prometheus scrapes the gateway with the shipped scrape job and rules', () => {
  const prometheusTool = deployTool('prometheus');
  const skip = skipUnlessCI(prometheusTool.reason);
  let prometheus: RunningPrometheus | undefined;
  let home: string | undefined;
  let api = '';
  let job = '';

  const query = async (promql: string) => {
    const response = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(promql)}`);
    return (await response.json()) as {
      status: string;
      error?: string;
      data?: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
    };
  };

  before(async () => {
    if (skip) return;
    home = mkdtempSync(join(tmpdir(), 'prometheus-test-'));
    const shipped = readRepoYaml<ScrapeConfigFile>('deploy', 'prometheus', 'prometheus.yml');
    const scrapeJob = shipped.scrape_configs.find((config) => config.job_name.includes('dagu-mcp-gateway'));
    assert.ok(scrapeJob, 'the compose scrape config has a dagu-mcp-gateway job');
    job = scrapeJob.job_name;
    // The shipped job as it is, pointed at the test gateway and run fast.
    const config: ScrapeConfigFile = {
      ...shipped,
      global: { ...shipped.global, scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [RULES_FILE],
      scrape_configs: [{ ...scrapeJob, static_configs: [{ targets: [new URL(gateway.baseUrl).host] }] }],
    };
    prometheus = await startPrometheus(prometheusTool.path!, home, config);
    api = prometheus.api;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const answer = await query(`mcp_gateway_inflight_calls{job="${job}"}`).catch(() => undefined);
      if (answer?.data?.result.length) break;
      if (prometheus.exited() || Date.now() > deadline) {
        throw new Error(`Prometheus did not scrape the gateway:\n${prometheus.logTail()}`);
      }
      await sleep(250);
    }
  });
  after(async () => {
    await prometheus?.stop();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  });

  test('the target is up and a gateway metric answers what /metrics says', { skip }, async () => {
    const targets = (await (await fetch(`${api}/api/v1/targets`)).json()) as {
      data: { activeTargets: Array<{ labels: Record<string, string>; health: string; lastError: string }> };
    };
    const target = targets.data.activeTargets.find((candidate) => candidate.labels.job === job);
    assert.equal(target?.health, 'up', target?.lastError);

    const up = await query(`up{job="${job}"}`);
    assert.equal(up.data?.result[0]?.value[1], '1');

    // No calls since the scrape above: Prometheus and /metrics agree on the number of `dags` calls.
    const promql = `sum(mcp_server_operation_duration_seconds_count{job="${job}", mcp_method_name="tools/call", dagu_read_target="dags"})`;
    const answer = await query(promql);
    assert.equal(answer.status, 'success', answer.error);
    const direct = metricSum(exported.samples, 'mcp_server_operation_duration_seconds_count', {
      mcp_method_name: 'tools/call',
      dagu_read_target: 'dags',
    });
    assert.ok(direct >= 1);
    assert.equal(Number(answer.data?.result[0]?.value[1]), direct);
  });

  test('every rule of the rules file is loaded and evaluates without error', { skip }, async () => {
    interface RuleState {
      name: string;
      health: string;
      lastError?: string;
      lastEvaluation: string;
    }
    const deadline = Date.now() + 30_000;
    let states: RuleState[] = [];
    for (;;) {
      const body = (await (await fetch(`${api}/api/v1/rules`)).json()) as {
        data: { groups: Array<{ rules: RuleState[] }> };
      };
      states = body.data.groups.flatMap((group) => group.rules);
      if (states.length > 0 && states.every((state) => !state.lastEvaluation.startsWith('0001-'))) break;
      if (Date.now() > deadline) break;
      await sleep(250);
    }
    assert.equal(states.length, rules.length, 'Prometheus loaded every rule');
    assert.deepEqual(
      states
        .filter((state) => state.health !== 'ok')
        .map((state) => `${state.name}: ${state.health} ${state.lastError ?? ''}`),
      [],
    );
  });

  test('every dashboard query runs on this Prometheus', { skip }, async () => {
    for (const { where, expr } of DASHBOARDS.flatMap(dashboardExpressions)) {
      const answer = await query(grafanaToPromql(expr));
      assert.equal(answer.status, 'success', `${where}: ${answer.error}`);
    }
    const calls = await query(
      grafanaToPromql(
        `sum(increase(mcp_server_operation_duration_seconds_count{job=~"$job", mcp_method_name="tools/call"}[5m]))`,
      ),
    );
    assert.equal(calls.status, 'success');
  });
});
