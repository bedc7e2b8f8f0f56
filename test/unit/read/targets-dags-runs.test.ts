import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dagListItem, latestRunOf, paginationOf } from '../../../src/read/targets/dags.ts';
import {
  buildRunDetail,
  buildRunLogs,
  logRootsOf,
  nodesInExecutionOrder,
  redactLogPaths,
  runListItem,
} from '../../../src/read/targets/runs.ts';
import { EMPTY_LOG, parseLogBody } from '../../../src/read/upstream/log.ts';
import { boundedDistance, closeNames } from '../../../src/read/upstream/suggest.ts';

// Bodies below are shaped exactly like Dagu 2.x's api/v1/api.yaml (v2.14): DAGFile, DAGRunSummary,
// DAGRunDetails, Node, Step, SubDAGRun, HumanTaskConfig, ApprovalConfig, Log.

const LOGS = '/var/lib/dagu/logs';

const summary2x = {
  dagRunId: '20260701T010000Z',
  name: 'nightly.report',
  workspace: 'ops',
  status: 4,
  statusLabel: 'succeeded',
  queuedAt: '',
  autoRetryCount: 0,
  scheduleTime: '2026-07-01T01:00:00Z',
  startedAt: '2026-07-01T03:00:05+02:00',
  finishedAt: '2026-07-01T03:02:00+02:00',
  artifactsAvailable: false,
  triggerType: 'scheduler',
  labels: ['team-a'],
};

function node2x(name: string, extra: Record<string, unknown> = {}) {
  const base = `${LOGS}/nightly_report/dag-run_20260701_010000Z_20260701T010000Z/run_20260701_010005Z_9f8e7d`;
  return {
    step: { name, executorConfig: { type: 'command', config: {} } },
    stdout: `${base}/${name}.out`,
    stderr: `${base}/${name}.err`,
    startedAt: '2026-07-01T03:00:05+02:00',
    finishedAt: '2026-07-01T03:00:09+02:00',
    status: 4,
    statusLabel: 'succeeded',
    retryCount: 0,
    doneCount: 1,
    ...extra,
  };
}

const details2x = {
  ...summary2x,
  status: 7,
  statusLabel: 'waiting',
  finishedAt: '',
  rootDAGRunName: 'nightly.report',
  rootDAGRunId: '20260701T010000Z',
  log: `${LOGS}/nightly_report/dag-run_20260701_010000Z_20260701T010000Z/dag-run_20260701.010000.000.2026.log`,
  humanTaskResumePending: true,
  error: `definition warning in ${LOGS}/nightly_report/x.yaml`,
  nodes: [
    node2x('review numbers', {
      startedAt: '2026-07-01T03:01:00+02:00',
      finishedAt: '',
      status: 7,
      statusLabel: 'waiting',
      step: {
        name: 'review numbers',
        humanTask: {
          prompt: 'Are the totals right?',
          form: { type: 'object', properties: { ok: { type: 'boolean' } } },
        },
      },
    }),
    node2x('extract', { startedAt: '2026-07-01T03:00:05+02:00' }),
    node2x('fan out', {
      startedAt: '2026-07-01T03:00:10+02:00',
      step: { name: 'fan out', executorConfig: { type: 'foreach', config: {} } },
    }),
    node2x('call child', {
      startedAt: '2026-07-01T03:00:20+02:00',
      step: { name: 'call child', call: 'child', executorConfig: { type: 'dag' } },
      subRuns: [{ dagRunId: 'child-1', dagName: 'child' }],
      subRunsRepeated: [{ dagRunId: 'child-2', params: '{}' }],
    }),
    node2x('load/step', {
      startedAt: '2026-07-01T03:00:30+02:00',
      status: 2,
      statusLabel: 'failed',
      error: `exit status 1: open ${LOGS}/nightly_report/tmp.csv: permission denied`,
    }),
    node2x('approve', {
      startedAt: '2026-07-01T03:00:40+02:00',
      status: 7,
      statusLabel: 'waiting',
      step: {
        name: 'approve',
        approval: { prompt: 'Ship?', input: ['reason'], required: ['reason'], rewindTo: 'extract' },
      },
    }),
    node2x('retry me', { startedAt: '2026-07-01T03:00:50+02:00', status: 9, statusLabel: 'retrying' }),
    node2x('later', {
      startedAt: '',
      finishedAt: '',
      status: 0,
      statusLabel: 'not_started',
      stdout: '',
      stderr: '',
    }),
  ],
  onAbort: node2x('onAbort', { status: 0 }),
};

describe('dags mapping (Dagu 2.x DAGFile shape)', () => {
  it('builds list items with name, spec URI, suspended and extras', () => {
    const item = dagListItem({
      fileName: 'nightly.report',
      dag: {
        name: 'nightly.report',
        workspace: 'ops',
        description: 'Nightly numbers',
        labels: ['team-a', 'nightly'],
        tags: ['legacy'],
        schedule: [{ expression: '0 1 * * *', kind: 'cron' }],
      },
      latestDAGRun: summary2x,
      nextRun: '2026-07-02T01:00:00Z',
      suspended: true,
      errors: null,
    });
    assert.deepEqual(item, {
      name: 'nightly.report',
      uri: 'dagu://dags/nightly.report/spec',
      suspended: true,
      description: 'Nightly numbers',
      labels: ['team-a', 'nightly'],
      schedule: ['0 1 * * *'],
      latestRun: {
        dagRunId: '20260701T010000Z',
        status: 4,
        statusLabel: 'succeeded',
        startedAt: '2026-07-01T01:00:05.000Z',
        finishedAt: '2026-07-01T01:02:00.000Z',
      },
      nextRun: '2026-07-02T01:00:00.000Z',
    });
  });

  it('omits latestRun for a DAG that never ran (zero DAGRunSummary)', () => {
    assert.equal(
      latestRunOf({
        dagRunId: '',
        name: 'x',
        status: 0,
        statusLabel: 'not_started',
        startedAt: '',
        finishedAt: '',
      }),
      undefined,
    );
    const item = dagListItem({
      fileName: 'x y',
      dag: { name: 'x y' },
      latestDAGRun: { dagRunId: '' },
      suspended: false,
      errors: [`bad ${LOGS}/x`],
    });
    assert.equal(item.uri, 'dagu://dags/x%20y/spec');
    assert.equal(item.latestRun, undefined);
    assert.deepEqual(item.errors, ['bad <path>']);
  });

  it('keeps the five pagination numbers and rejects a malformed pagination', () => {
    assert.deepEqual(
      paginationOf({ totalRecords: 3, currentPage: 1, totalPages: 1, nextPage: 1, prevPage: 1, extra: 1 }),
      {
        totalRecords: 3,
        currentPage: 1,
        totalPages: 1,
        nextPage: 1,
        prevPage: 1,
      },
    );
    assert.throws(() => paginationOf({ totalRecords: '3' }), { code: 'internal_error' });
  });
});

describe('runs mapping (Dagu 2.x DAGRunSummary / DAGRunDetails shapes)', () => {
  it('run list item: canonical URI, UTC millisecond timestamps, no empty timestamps', () => {
    assert.deepEqual(runListItem(summary2x), {
      name: 'nightly.report',
      dagRunId: '20260701T010000Z',
      uri: 'dagu://runs/nightly.report/20260701T010000Z',
      status: 4,
      statusLabel: 'succeeded',
      startedAt: '2026-07-01T01:00:05.000Z',
      finishedAt: '2026-07-01T01:02:00.000Z',
    });
    assert.throws(() => runListItem({ ...summary2x, status: '4' }), { code: 'internal_error' });
  });

  it('run detail: steps in execution order with the contract fields and no Dagu paths', () => {
    const data = buildRunDetail(details2x, { name: 'nightly.report', dagRunId: 'latest' });
    assert.equal(data.uri, 'dagu://runs/nightly.report/20260701T010000Z');
    assert.equal(data.logsUri, 'dagu://runs/nightly.report/20260701T010000Z/logs');
    assert.equal(data.attemptId, '9f8e7d');
    assert.equal(data.status, 7);
    assert.equal(data.statusLabel, 'waiting');
    assert.equal(data.startedAt, '2026-07-01T01:00:05.000Z');
    assert.equal('finishedAt' in data, false);
    assert.equal(data.humanTaskResumePending, true);
    const steps = data.steps as Array<Record<string, unknown>>;
    assert.deepEqual(
      steps.map((step) => step.name),
      ['extract', 'fan out', 'call child', 'load/step', 'approve', 'retry me', 'review numbers', 'later'],
    );
    const [extract, fanOut, callChild, load, approve, retry, review, later] = steps;
    assert.deepEqual(extract, {
      name: 'extract',
      status: 4,
      statusLabel: 'succeeded',
      logUri: 'dagu://runs/nightly.report/20260701T010000Z/steps/extract/logs',
      startedAt: '2026-07-01T01:00:05.000Z',
      finishedAt: '2026-07-01T01:00:09.000Z',
    });
    assert.equal(fanOut?.foreachUri, 'dagu://runs/nightly.report/20260701T010000Z/steps/fan%20out/foreach');
    assert.deepEqual(callChild?.subRuns, [
      {
        dagRunId: 'child-1',
        uri: 'dagu://runs/nightly.report/20260701T010000Z/sub/child-1',
        dagName: 'child',
      },
      { dagRunId: 'child-2', uri: 'dagu://runs/nightly.report/20260701T010000Z/sub/child-2' },
    ]);
    assert.equal(load?.logUri, 'dagu://runs/nightly.report/20260701T010000Z/steps/load%2Fstep/logs');
    assert.equal(load?.error, 'exit status 1: open <dagu-logs> permission denied');
    assert.deepEqual(approve?.approval, { prompt: 'Ship?', input: ['reason'], required: ['reason'] });
    assert.equal(retry?.statusLabel, 'retrying');
    assert.deepEqual(review?.humanTask, {
      prompt: 'Are the totals right?',
      form: { type: 'object', properties: { ok: { type: 'boolean' } } },
    });
    assert.equal(later?.startedAt, undefined);
    assert.equal(data.error, 'definition warning in <dagu-logs>');
    assert.doesNotMatch(JSON.stringify(data), /\/var\/lib\/dagu/);
  });

  it('an approval or human task is shown only while the step waits', () => {
    const done = {
      ...details2x,
      nodes: [node2x('approve', { step: { name: 'approve', approval: { prompt: 'Ship?' } } })],
    };
    const steps = buildRunDetail(done, { name: 'nightly.report', dagRunId: 'x' }).steps as Array<
      Record<string, unknown>
    >;
    assert.equal(steps[0]?.approval, undefined);
  });

  it('sub run detail: child URI under the root, child-addressed step logs, no logsUri', () => {
    const child = {
      ...details2x,
      name: 'child',
      dagRunId: 'child-1',
      parentDAGRunName: 'nightly.report',
      parentDAGRunId: '20260701T010000Z',
      humanTaskResumePending: false,
      nodes: [
        node2x('inner step'),
        node2x('each', { step: { name: 'each', executorConfig: { type: 'foreach' } } }),
      ],
    };
    const data = buildRunDetail(child, { name: 'nightly.report', dagRunId: 'latest', subRunId: 'child-1' });
    assert.equal(data.name, 'child');
    assert.equal(data.dagRunId, 'child-1');
    assert.equal(data.uri, 'dagu://runs/nightly.report/20260701T010000Z/sub/child-1');
    assert.equal(data.logsUri, undefined);
    assert.equal(data.humanTaskResumePending, undefined);
    const steps = data.steps as Array<Record<string, unknown>>;
    assert.equal(
      steps[0]?.logUri,
      'dagu://runs/nightly.report/20260701T010000Z/sub/child-1/steps/inner%20step/logs',
    );
    assert.equal(
      steps[1]?.foreachUri,
      'dagu://runs/nightly.report/20260701T010000Z/sub/child-1/steps/each/foreach',
    );
  });

  it('null arrays read as empty', () => {
    const data = buildRunDetail({ ...details2x, nodes: null }, { name: 'n', dagRunId: 'i' });
    assert.deepEqual(data.steps, []);
    assert.deepEqual(nodesInExecutionOrder({ nodes: null }), []);
  });

  it('run logs: scheduler log plus one entry per step with stream flags', () => {
    const log = parseLogBody({
      content: 'a\nb',
      lineCount: 2,
      totalLines: 40,
      hasMore: true,
      isEstimate: false,
    });
    const data = buildRunLogs(details2x, log);
    assert.deepEqual(data.schedulerLog, {
      content: 'a\nb',
      lineCount: 2,
      totalLines: 40,
      hasMore: true,
      isEstimate: false,
    });
    const stepLogs = data.stepLogs as Array<Record<string, unknown>>;
    assert.equal(stepLogs.length, 8);
    assert.deepEqual(stepLogs[0], {
      stepName: 'extract',
      status: 4,
      statusLabel: 'succeeded',
      startedAt: '2026-07-01T01:00:05.000Z',
      finishedAt: '2026-07-01T01:00:09.000Z',
      hasStdout: true,
      hasStderr: true,
      logUri: 'dagu://runs/nightly.report/20260701T010000Z/steps/extract/logs',
    });
    assert.equal(stepLogs.at(-1)?.hasStdout, false);
    assert.doesNotMatch(JSON.stringify(data), /\/var\/lib\/dagu/);
  });

  it('an empty log file answers content without counters', () => {
    assert.deepEqual(parseLogBody({ content: '' }), EMPTY_LOG);
    assert.throws(() => parseLogBody({ lines: [] }), { code: 'internal_error' });
  });

  it("log roots are Dagu's log folders, never a bare root", () => {
    assert.deepEqual(logRootsOf({ log: `${LOGS}/a/dag-run_x/file.log`, nodes: [] }), [LOGS]);
    assert.deepEqual(logRootsOf({ log: '/x/file.log', nodes: null }), []);
    assert.equal(redactLogPaths(`see ${LOGS}/a/b.log and /etc/x`, [LOGS]), 'see <dagu-logs> and /etc/x');
  });
});

describe('did-you-mean', () => {
  it('bounded edit distance', () => {
    assert.equal(boundedDistance('kitten', 'sitting', 3), 3);
    assert.equal(boundedDistance('kitten', 'sitting', 2), 3);
    assert.equal(boundedDistance('a', 'abcdefgh', 2), 3);
  });

  it('suggests close names, closest first, at most five', () => {
    const names = ['two-steps', 'two-step', 'tow-steps', 'fails', 'parent', 'dotted.name', 'two-steps-extra'];
    assert.deepEqual(closeNames('two-stepz', names), ['two-step', 'two-steps', 'tow-steps']);
    assert.deepEqual(closeNames('dotted-name', names), ['dotted.name']);
    assert.deepEqual(closeNames('zzzzzz', names), []);
    assert.deepEqual(closeNames('x'.repeat(10_000), names), []);
    assert.deepEqual(closeNames('PARENT', names), ['parent']);
    assert.deepEqual(closeNames('two-steps-ext', names), ['two-steps-extra', 'two-steps', 'two-step']);
  });
});
