// The alert and recording rules checked by the real promtool: syntax (`check rules`), the compose
// stack's scrape config (`check config`), and unit tests that fire every alert from synthetic series
// (`test rules`, deploy/prometheus/tests).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseDocument, type YAMLMap, type YAMLSeq } from 'yaml';
import { skipUnlessCI } from '../../support/ci.ts';
import { deployTool, type Run, readRepoYaml, repoPath, run } from '../../support/deploy-tools.ts';

const RULES = repoPath('deploy', 'prometheus', 'rules', 'dagu-mcp-gateway.rules.yml');
const UNIT_TESTS = repoPath('deploy', 'prometheus', 'tests', 'dagu-mcp-gateway.rules.test.yml');

interface RuleFile {
  groups: Array<{ name: string; rules: Array<{ alert?: string; record?: string; expr: string }> }>;
}
interface UnitTests {
  tests: Array<{ name: string; alert_rule_test?: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
}

const promtool = deployTool('promtool');
const skip = skipUnlessCI(promtool.reason);
const alerts = readRepoYaml<RuleFile>('deploy', 'prometheus', 'rules', 'dagu-mcp-gateway.rules.yml')
  .groups.flatMap((group) => group.rules)
  .flatMap((rule) => (rule.alert === undefined ? [] : [rule.alert]));

test('promtool check rules accepts the rules file', { skip }, () => {
  const result = run(promtool.path!, ['check', 'rules', RULES]);
  assert.equal(result.status, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /SUCCESS: \d+ rules found/);
});

test('promtool check config accepts the compose stack scrape config', { skip }, () => {
  const result = run(promtool.path!, ['check', 'config', repoPath('deploy', 'prometheus', 'prometheus.yml')]);
  assert.equal(result.status, 0, result.stdout + result.stderr);
});

test('promtool test rules: every unit test passes', { skip }, () => {
  const result = run(promtool.path!, ['test', 'rules', UNIT_TESTS]);
  assert.equal(result.status, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /SUCCESS/);
});

test('the alerts the operator needs exist, and each one is fired by a unit test', () => {
  for (const needed of [
    'DaguMcpGatewayDaguUnreachable',
    'DaguMcpGatewayDaguRequestsFailing',
    'DaguMcpGatewayErrorRatioHigh',
    'DaguMcpGatewayLatencyP99High',
    'DaguMcpGatewayRateLimited',
    'DaguMcpGatewayAuthFailures',
    'DaguMcpGatewayAccessDenied',
    'DaguMcpGatewayWorkbookPoolSaturated',
  ]) {
    assert.ok(alerts.includes(needed), `alert ${needed} is missing`);
  }
  const fired = new Set(
    readRepoYaml<UnitTests>('deploy', 'prometheus', 'tests', 'dagu-mcp-gateway.rules.test.yml')
      .tests.flatMap((unit) => unit.alert_rule_test ?? [])
      .filter((check) => check.exp_alerts.length > 0)
      .map((check) => check.alertname),
  );
  assert.deepEqual(
    alerts.filter((alert) => !fired.has(alert)),
    [],
    'alerts no unit test fires',
  );
});

/**
 * Every comparison of one alert's expression made impossible to meet: `> N` and `>= N` against a
 * thousandfold N (plus 1000, so `> 0` moves too), `== N` against N + 0.5 (the series are whole numbers).
 */
function unreachable(expr: string): string {
  return expr.replace(/(==|>=|>)\s*(-?\d+(?:\.\d+)?)(?![\w.])/g, (_all, op: string, value: string) =>
    op === '==' ? `== ${Number(value) + 0.5}` : `${op} ${Number(value) * 1000 + 1000}`,
  );
}

/** Runs the unit tests against the rules file with one alert's expression replaced. */
function testRulesWith(alert: string, mutate: (expr: string) => string): { mutated: boolean; result: Run } {
  const document = parseDocument(readFileSync(RULES, 'utf8'));
  let mutated = false;
  for (const group of (document.get('groups') as YAMLSeq<YAMLMap>).items) {
    for (const rule of (group.get('rules') as YAMLSeq<YAMLMap>).items) {
      if (rule.get('alert') !== alert) continue;
      const expr = String(rule.get('expr'));
      const mutant = mutate(expr);
      mutated = mutant !== expr;
      rule.set('expr', mutant);
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'rules-mutant-'));
  try {
    mkdirSync(join(dir, 'rules'));
    mkdirSync(join(dir, 'tests'));
    writeFileSync(join(dir, 'rules', 'dagu-mcp-gateway.rules.yml'), String(document));
    writeFileSync(join(dir, 'tests', 'unit.test.yml'), readFileSync(UNIT_TESTS, 'utf8'));
    return { mutated, result: run(promtool.path!, ['test', 'rules', join(dir, 'tests', 'unit.test.yml')]) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the mutation harness leaves the rules passing when it changes nothing', { skip }, () => {
  const { mutated, result } = testRulesWith(alerts[0]!, (expr) => expr);
  assert.equal(mutated, false);
  assert.equal(result.status, 0, result.stdout + result.stderr);
});

test('each alert’s own unit test fails when that alert’s threshold cannot be met (none is vacuous)', {
  skip,
}, () => {
  assert.equal(alerts.length, 14);
  for (const alert of alerts) {
    const { mutated, result } = testRulesWith(alert, unreachable);
    assert.ok(mutated, `${alert}: its expression has no threshold to move`);
    assert.notEqual(result.status, 0, `${alert}: the unit tests still pass with an unreachable threshold`);
    assert.match(
      result.stdout + result.stderr,
      new RegExp(`alertname: ${alert},`),
      `${alert}: promtool failed, but not on a test of this alert`,
    );
  }
});
