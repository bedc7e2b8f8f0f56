import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildRunDetail,
  buildRunLogs,
  logRootsOf,
  redactLogPaths,
  runListItem,
  runTargets,
} from '../../../../src/read/targets/runs.ts';
import type { ResolvedRead } from '../../../../src/read/types.ts';
import { EMPTY_LOG, parseLogBody } from '../../../../src/read/upstream/log.ts';
import { details2x, LOGS, node2x, summary2x } from '../../../support/dagu2-bodies.ts';
import { depsOf, fakeDagu, OPEN } from '../../../support/read-deps.ts';
import { rejectsWith } from '../../../support/read-errors.ts';

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

describe('runs handler', () => {
  it('Dagu 2.x refusing the list query (a cursor of other filters) is invalid_tool_input on query', async () => {
    const dagu = fakeDagu(2, () => ({
      status: 400,
      body: {
        code: 'bad_request',
        message: 'invalid query cursor: cursor does not match the current filters',
      },
    }));
    const raw = 'limit=2&name=fails&cursor=abc';
    const request: ResolvedRead = {
      mode: 'target',
      target: 'runs',
      fields: {},
      query: { raw, params: raw.split('&').map((pair) => pair.split('=') as [string, string]) },
    };
    const error = await rejectsWith(
      runTargets.runs.handle(request, depsOf(dagu), OPEN),
      'invalid_tool_input',
    );
    assert.equal(error.field, 'query');
    assert.match(error.message, /invalid query cursor/);
    assert.equal(dagu.calls.length, 1);
  });
});
