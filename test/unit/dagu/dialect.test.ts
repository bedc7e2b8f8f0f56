import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyRunListPlan,
  approvalOf,
  CursorError,
  dagLabels,
  hasAllLabels,
  humanTaskOf,
  isForeachStep,
  isMissingSchedulerLog,
  localPagination,
  normalizeResponse,
  planDagList,
  planRunList,
  RUNS_WINDOW_START,
} from '../../../src/dagu/dialect.ts';

type Pairs = Array<[string, string]>;

describe('dags list plan', () => {
  it('Dagu 2.x: passes every contract parameter through, labels as a comma list', () => {
    const query: Pairs = [
      ['page', '2'],
      ['perPage', '200'],
      ['name', 'etl'],
      ['labels', 'team-a,nightly'],
      ['sort', 'nextRun'],
      ['order', 'desc'],
    ];
    const plan = planDagList(2, query);
    assert.deepEqual(plan.upstream, query);
    assert.deepEqual(plan.clientLabels, []);
    assert.equal(plan.page, 2);
    assert.equal(plan.perPage, 200);
  });

  it('Dagu 1.x: one label becomes `tag`', () => {
    const plan = planDagList(1, [['labels', 'alpha']]);
    assert.deepEqual(plan.upstream, [['tag', 'alpha']]);
    assert.deepEqual(plan.clientLabels, []);
  });

  it('Dagu 1.x: several labels send the first as `tag` and match the rest in the gateway', () => {
    const plan = planDagList(1, [
      ['labels', 'alpha, beta,gamma'],
      ['page', '3'],
      ['perPage', '10'],
    ]);
    assert.deepEqual(plan.upstream, [
      ['page', '3'],
      ['perPage', '10'],
      ['tag', 'alpha'],
    ]);
    assert.deepEqual(plan.clientLabels, ['beta', 'gamma']);
    assert.equal(plan.page, 3);
    assert.equal(plan.perPage, 10);
  });

  it("defaults to Dagu's page size of 50", () => {
    assert.equal(planDagList(1, []).perPage, 50);
    assert.equal(planDagList(2, []).page, 1);
  });

  it('Dagu 2.x DAG shape: labels win over deprecated tags; 1.x tags are read too', () => {
    assert.deepEqual(dagLabels({ name: 'x', labels: ['a', 'b'], tags: ['old'] }), ['a', 'b']);
    assert.deepEqual(dagLabels({ name: 'x', tags: ['t'] }), ['t']);
    assert.deepEqual(dagLabels({ name: 'x' }), []);
    assert.equal(hasAllLabels({ labels: ['Alpha', 'beta'] }, ['alpha', 'BETA']), true);
    assert.equal(hasAllLabels({ tags: ['alpha'] }, ['alpha', 'beta']), false);
  });

  it("local pagination follows Dagu's paginator arithmetic", () => {
    assert.deepEqual(localPagination(0, 1, 50), {
      totalRecords: 0,
      currentPage: 1,
      totalPages: 1,
      nextPage: 1,
      prevPage: 1,
    });
    assert.deepEqual(localPagination(101, 2, 50), {
      totalRecords: 101,
      currentPage: 2,
      totalPages: 3,
      nextPage: 3,
      prevPage: 1,
    });
  });
});

describe('runs list plan', () => {
  it('Dagu 2.x: passes repeated status, limit, cursor and labels through', () => {
    const query: Pairs = [
      ['status', '2'],
      ['status', '4'],
      ['limit', '20'],
      ['cursor', 'opaque'],
      ['labels', 'a,b'],
      ['name', 'etl'],
      ['fromDate', '1700000000'],
    ];
    const plan = planRunList(2, query);
    assert.deepEqual(plan.upstream, query);
    assert.deepEqual(plan.local, {});
  });

  it('Dagu 2.x: dagRunId=latest asks for the newest matching run only', () => {
    const plan = planRunList(2, [
      ['dagRunId', 'latest'],
      ['name', 'etl'],
      ['limit', '50'],
    ]);
    assert.deepEqual(plan.upstream, [
      ['name', 'etl'],
      ['limit', '1'],
    ]);
    assert.equal(plan.local.latestOnly, true);
  });

  it('Dagu 1.x: a single status is sent, several are filtered by the gateway', () => {
    assert.deepEqual(planRunList(1, [['status', '2']]).upstream, [
      ['status', '2'],
      ['fromDate', String(RUNS_WINDOW_START)],
    ]);
    const plan = planRunList(1, [
      ['status', '2'],
      ['status', '4'],
    ]);
    assert.deepEqual(plan.upstream, [['fromDate', String(RUNS_WINDOW_START)]]);
    assert.deepEqual([...(plan.local.statuses ?? [])], [2, 4]);
  });

  it('Dagu 1.x: name, labels and limit are the gateway’s; dates are sent; no date means from 2000', () => {
    const plan = planRunList(1, [
      ['name', 'Dotted.'],
      ['labels', 'alpha,beta'],
      ['limit', '7'],
      ['toDate', '1800000000'],
      ['dagRunId', '01a2'],
    ]);
    assert.deepEqual(plan.upstream, [
      ['dagRunId', '01a2'],
      ['toDate', '1800000000'],
    ]);
    assert.equal(plan.local.name, 'Dotted.');
    assert.deepEqual(plan.local.labels, ['alpha', 'beta']);
    assert.equal(plan.local.limit, 7);
    assert.equal(plan.local.offset, 0);
  });

  it('Dagu 1.x: gateway cursors page through the filtered list and are bound to the filters', () => {
    const runs = Array.from({ length: 5 }, (_, i) => ({ name: i % 2 === 0 ? 'even' : 'odd', status: 4, i }));
    const first = planRunList(1, [['limit', '2']]);
    const page1 = applyRunListPlan(first, runs);
    assert.deepEqual(
      page1.runs.map((run) => run.i),
      [0, 1],
    );
    assert.ok(page1.nextCursor);
    const second = planRunList(1, [
      ['limit', '2'],
      ['cursor', page1.nextCursor],
    ]);
    const page2 = applyRunListPlan(second, runs);
    assert.deepEqual(
      page2.runs.map((run) => run.i),
      [2, 3],
    );
    const third = applyRunListPlan(
      planRunList(1, [
        ['limit', '2'],
        ['cursor', page2.nextCursor ?? ''],
      ]),
      runs,
    );
    assert.deepEqual(
      third.runs.map((run) => run.i),
      [4],
    );
    assert.equal(third.nextCursor, undefined);
    assert.throws(
      () =>
        planRunList(1, [
          ['name', 'even'],
          ['cursor', page1.nextCursor ?? ''],
        ]),
      CursorError,
    );
    assert.throws(() => planRunList(1, [['cursor', 'not-a-cursor']]), CursorError);
  });

  it('applies name substring (case-insensitive), statuses, labelled DAGs and latest', () => {
    const runs = [
      { name: 'dotted.name', status: 4 },
      { name: 'other', status: 2 },
      { name: 'Dotted.Name', status: 2 },
    ];
    const byName = applyRunListPlan(planRunList(1, [['name', 'DOTTED']]), runs);
    assert.equal(byName.runs.length, 2);
    const failed = applyRunListPlan(
      planRunList(1, [
        ['status', '2'],
        ['status', '3'],
      ]),
      runs,
    );
    assert.deepEqual(
      failed.runs.map((run) => run.name),
      ['other', 'Dotted.Name'],
    );
    const labelled = applyRunListPlan(planRunList(1, [['labels', 'x']]), runs, new Set(['other']));
    assert.deepEqual(
      labelled.runs.map((run) => run.name),
      ['other'],
    );
    const latest = applyRunListPlan(planRunList(1, [['dagRunId', 'latest']]), runs);
    assert.deepEqual(latest.runs, [runs[0]]);
  });
});

describe('responses', () => {
  it('Dagu 1.x: HTTP 500 with body code not_found reads as 404; 2.x keeps its status', () => {
    const body = { code: 'not_found', message: 'DAG not found' };
    assert.equal(normalizeResponse(1, { status: 500, body }).status, 404);
    assert.equal(normalizeResponse(2, { status: 500, body }).status, 500);
    assert.equal(
      normalizeResponse(1, { status: 500, body: { code: 'internal_error', message: 'x' } }).status,
      500,
    );
  });

  it('a missing scheduler log: 2.x 404 "log file not found", 1.x bare 500', () => {
    const missing2 = {
      status: 404,
      body: { code: 'not_found', message: 'log file not found for dag-run x' },
    };
    const runMissing = {
      status: 404,
      body: { code: 'not_found', message: 'dag-run ID x not found for DAG y' },
    };
    assert.equal(isMissingSchedulerLog(2, missing2), true);
    assert.equal(isMissingSchedulerLog(2, runMissing), false);
    assert.equal(isMissingSchedulerLog(2, { status: 500, body: undefined }), false);
    assert.equal(
      isMissingSchedulerLog(1, {
        status: 500,
        body: { code: 'internal_error', message: 'An unexpected error occurred' },
      }),
      true,
    );
  });
});

describe('run details (Dagu 2.x Node/Step shapes per api/v1/api.yaml)', () => {
  it('approval gate: 2.x `step.approval` (ApprovalConfig)', () => {
    assert.deepEqual(
      approvalOf({
        name: 'gate',
        approval: { prompt: 'Deploy?', input: ['reason'], required: ['reason'], rewindTo: 'build' },
      }),
      { prompt: 'Deploy?', input: ['reason'], required: ['reason'] },
    );
    assert.deepEqual(approvalOf({ name: 'gate', approval: { input: [] } }), {});
  });

  it('approval gate: 1.x `hitl` executor config', () => {
    assert.deepEqual(
      approvalOf({
        name: 'gate',
        executorConfig: { type: 'hitl', config: { prompt: 'Ship?', input: ['a', 'b'], required: ['a'] } },
      }),
      { prompt: 'Ship?', input: ['a', 'b'], required: ['a'] },
    );
    assert.equal(approvalOf({ name: 'cmd', executorConfig: { type: 'command', config: {} } }), undefined);
  });

  it('human task: 2.x `step.humanTask` (HumanTaskConfig), form only when non-empty', () => {
    const form = { type: 'object', properties: { ok: { type: 'boolean' } } };
    assert.deepEqual(humanTaskOf({ name: 't', humanTask: { prompt: 'Check the numbers', form } }), {
      prompt: 'Check the numbers',
      form,
    });
    assert.deepEqual(humanTaskOf({ name: 't', humanTask: { prompt: 'Look', form: {} } }), { prompt: 'Look' });
    assert.equal(humanTaskOf({ name: 't' }), undefined);
  });

  it('foreach: 2.x executorConfig.type foreach', () => {
    assert.equal(isForeachStep({ name: 'each', executorConfig: { type: 'foreach', config: {} } }), true);
    assert.equal(isForeachStep({ name: 'call', executorConfig: { type: 'dag' } }), false);
    assert.equal(isForeachStep({ name: 'plain' }), false);
  });
});
