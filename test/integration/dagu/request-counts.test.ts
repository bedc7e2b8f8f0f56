// How many requests each target makes to the real Dagu, counted by a recording proxy between the
// gateway and Dagu, and pinned per target: a change that adds an upstream request to a read must change
// this table on purpose. Counts are for the pinned Dagu generation; both are listed where they differ.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { metricSum, postMcp, scrape, toolCallBody } from '../../support/auth-fixtures.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { gatewayOnDagu } from '../../support/gateway-on-dagu.ts';

let dagu: TestDagu;
const on = gatewayOnDagu(async () => {
  dagu = await getTestDagu();
  return { dagu };
});
after(() => dagu?.stop());

interface Case {
  name: string;
  args: () => Record<string, unknown>;
  /** Upstream requests per generation (one number: the same for both). */
  requests: number | { 1: number; 2: number };
}

const stepLogArgs = (extra: Record<string, string> = {}) => ({
  target: 'step_log',
  name: dagu.seed.dags.twoSteps,
  dagRunId: dagu.seed.runs.twoStepsFirst,
  stepName: dagu.seed.facts.twoStepsStepNames[0],
  ...extra,
});

const subRunStepLogArgs = () => ({
  target: 'step_log',
  name: dagu.seed.dags.parent,
  dagRunId: dagu.seed.runs.parent,
  subRunId: dagu.seed.runs.childSub,
  stepName: 'inner step',
});

const CASES: Case[] = [
  { name: 'references', args: () => ({ target: 'references' }), requests: 0 },
  { name: 'reference', args: () => ({ target: 'reference', name: 'read-tool' }), requests: 0 },
  { name: 'dags', args: () => ({ target: 'dags' }), requests: 1 },
  { name: 'dag', args: () => ({ target: 'dag', name: dagu.seed.dags.twoSteps }), requests: 1 },
  { name: 'dag_spec', args: () => ({ target: 'dag_spec', name: dagu.seed.dags.twoSteps }), requests: 1 },
  { name: 'runs', args: () => ({ target: 'runs' }), requests: 1 },
  {
    name: 'runs of a DAG',
    args: () => ({ target: 'runs', query: `name=${dagu.seed.dags.twoSteps}` }),
    requests: 1,
  },
  {
    name: 'run',
    args: () => ({ target: 'run', name: dagu.seed.dags.twoSteps, dagRunId: dagu.seed.runs.twoStepsFirst }),
    requests: 1,
  },
  {
    name: 'run latest',
    args: () => ({ target: 'run', name: dagu.seed.dags.twoSteps, dagRunId: 'latest' }),
    requests: 1,
  },
  {
    name: 'run of a sub run',
    args: () => ({
      target: 'run',
      name: dagu.seed.dags.parent,
      dagRunId: dagu.seed.runs.parent,
      subRunId: dagu.seed.runs.childSub,
    }),
    requests: 1,
  },
  {
    name: 'run_logs',
    args: () => ({
      target: 'run_logs',
      name: dagu.seed.dags.twoSteps,
      dagRunId: dagu.seed.runs.twoStepsFirst,
    }),
    requests: 2,
  },
  {
    name: 'step_log',
    args: () => stepLogArgs(),
    // Dagu serves one stream per call: stdout and stderr are two requests, made in parallel. On 2.x a
    // finished step's first read also reads the run's details before and after them, to cache both
    // windows by the files they came from (src/read/upstream/finished-logs.ts).
    requests: { 1: 2, 2: 4 },
  },
  {
    name: 'step_log again',
    args: () => stepLogArgs(),
    // 2.x: the details say the files are still current; both windows come from the cache.
    requests: { 1: 2, 2: 1 },
  },
  {
    name: 'step_log, one stream',
    args: () => stepLogArgs({ query: 'stream=stderr' }),
    // 2.x: the stderr window was cached by the read above (same positioning: the default tail).
    requests: 1,
  },
  {
    name: 'step_log of a sub run',
    args: () => subRunStepLogArgs(),
    // 2.x: the child run's details (its own route) name the files, as for a root run.
    requests: { 1: 2, 2: 4 },
  },
  { name: 'step_log of a sub run again', args: () => subRunStepLogArgs(), requests: { 1: 2, 2: 1 } },
  { name: 'dag_search', args: () => ({ target: 'dag_search', search: 'step' }), requests: 1 },
  { name: 'wiki (2.x)', args: () => ({ target: 'wiki' }), requests: { 1: 0, 2: 1 } },
  {
    name: 'wiki_search (2.x)',
    args: () => ({ target: 'wiki_search', search: 'x' }),
    requests: { 1: 0, 2: 1 },
  },
  // The 404 is followed by the DAG list that feeds the "did you mean" suggestions.
  {
    name: 'a DAG that does not exist',
    args: () => ({ target: 'dag_spec', name: 'no-such-dag' }),
    requests: 2,
  },
  { name: 'invalid input', args: () => ({ target: 'run', name: 'x' }), requests: 0 },
];

test('each target makes the pinned number of Dagu requests', async () => {
  const generation = dagu.generation;
  // Counts are pinned; the routes only explain a failure (and are printed for the closing figures).
  const actual: Record<string, number> = {};
  const expected: Record<string, number> = {};
  const routes: string[] = [];
  for (const testCase of CASES) {
    const before = on.proxy.requests.length;
    const answer = await postMcp(on.gateway.mcpUrl, {}, toolCallBody(testCase.args()));
    assert.equal(answer.status, 200, testCase.name);
    // The readiness probe runs in the background; it is no read's request.
    const made = on.proxy.requests
      .slice(before)
      .map((request) => request.rawUrl.split('?')[0]!)
      .filter((path) => path !== `${dagu.apiBase}/health`);
    actual[testCase.name] = made.length;
    expected[testCase.name] =
      typeof testCase.requests === 'number' ? testCase.requests : testCase.requests[generation];
    routes.push(`  ${testCase.name.padEnd(28)} ${made.length}  ${made.join(' ')}`);
  }
  console.log(`Dagu requests per read (generation ${generation}):\n${routes.join('\n')}`);
  assert.deepEqual(actual, expected, routes.join('\n'));
});

test('identical reads asked for at once share one Dagu request, and every call is still audited', async () => {
  const args = { target: 'run', name: dagu.seed.dags.twoSteps, dagRunId: dagu.seed.runs.twoStepsFirst };
  const calls = 6;
  const joinedBefore = metricSum(
    (await scrape(on.gateway.baseUrl)).samples,
    'dagu_upstream_requests_joined_total',
  );
  const auditBefore = on.gateway.auditLines().length;
  const before = on.proxy.requests.length;
  // A batch (initialize era) starts all its calls in one event-loop turn: the one deterministic way to
  // have identical reads wait for the same request.
  const batch = Array.from({ length: calls }, (_, index) => toolCallBody(args, index + 1));
  const answer = await postMcp(on.gateway.mcpUrl, { 'mcp-protocol-version': '2025-03-26' }, batch);
  assert.equal(answer.status, 200);
  const results = JSON.parse(answer.text) as Array<{
    result: { isError?: boolean; structuredContent: { data: { dagRunId: string } } };
  }>;
  assert.equal(results.length, calls);
  for (const result of results) {
    assert.notEqual(result.result.isError, true);
    assert.equal(result.result.structuredContent.data.dagRunId, dagu.seed.runs.twoStepsFirst);
  }
  const made = on.proxy.requests.slice(before).filter((request) => !request.rawUrl.endsWith('/health'));
  assert.equal(made.length, 1, made.map((request) => request.rawUrl).join('\n'));
  const joined =
    metricSum((await scrape(on.gateway.baseUrl)).samples, 'dagu_upstream_requests_joined_total') -
    joinedBefore;
  assert.equal(joined, calls - 1);
  assert.equal(on.gateway.auditLines().length - auditBefore, calls);
});
