// The alert and recording rules checked by the real promtool: syntax (`check rules`), the compose
// stack's scrape config (`check config`), and unit tests that fire every alert from synthetic series
// (`test rules`, deploy/prometheus/tests).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { skipUnlessCI } from '../../support/ci.ts';
import { deployTool, readRepoYaml, repoPath, run } from './tools.ts';

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

test('a broken threshold makes promtool test rules fail (the unit tests are not vacuous)', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'rules-mutant-'));
  mkdirSync(join(dir, 'rules'));
  mkdirSync(join(dir, 'tests'));
  // Every alert threshold raised a hundredfold: no unit test that expects an alert may still pass.
  const mutant = readFileSync(RULES, 'utf8').replace(
    /(\n {8}expr: [^\n]*> )([\d.]+)\n/g,
    (_all, head, value) => `${head}${Number(value) * 100 + 1}\n`,
  );
  assert.notEqual(mutant, readFileSync(RULES, 'utf8'));
  writeFileSync(join(dir, 'rules', 'dagu-mcp-gateway.rules.yml'), mutant);
  writeFileSync(join(dir, 'tests', 'unit.test.yml'), readFileSync(UNIT_TESTS, 'utf8'));
  const result = run(promtool.path!, ['test', 'rules', join(dir, 'tests', 'unit.test.yml')]);
  assert.notEqual(result.status, 0, 'the unit tests still pass with absurd thresholds');
});
