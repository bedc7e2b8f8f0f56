import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AccessPolicy } from '../../../../src/core/access.ts';
import { ByteLru, cacheSlice } from '../../../../src/core/byte-lru.ts';
import type { DaguRequest, DaguResponse } from '../../../../src/dagu/types.ts';
import type { ReadError } from '../../../../src/read/errors.ts';
import {
  buildStepLogData,
  classifyLogFailure,
  DEFAULT_TAIL,
  foreachItemHasBodyStep,
  planStepLog,
  stepLogTargets,
} from '../../../../src/read/targets/step-log.ts';
import type { ReadFields, ReadQuery, ResolvedRead } from '../../../../src/read/types.ts';
import { FinishedLogCache } from '../../../../src/read/upstream/finished-logs.ts';
import { EMPTY_LOG, type LogPart, parseLogBody } from '../../../../src/read/upstream/log.ts';
import { withoutForeachRoutes } from '../../../support/dagu-without-foreach-routes.ts';
import { depsOf, fakeDagu, OPEN, type Responder } from '../../../support/read-deps.ts';
import { rejectsWith } from '../../../support/read-errors.ts';

function query(raw: string): ReadQuery {
  return { raw, params: raw.split('&').map((pair) => pair.split('=') as [string, string]) };
}

function stepLogRead(fields: ReadFields, raw?: string): ResolvedRead {
  const request: ResolvedRead = {
    mode: 'target',
    target: 'step_log',
    fields: { name: 'lines', dagRunId: 'r1', stepName: 'many lines', ...fields },
    uri: 'dagu://runs/lines/r1/steps/many%20lines/logs',
  };
  if (raw !== undefined) request.query = query(raw);
  return request;
}

const NO_SECRET: AccessPolicy = {
  canReadDag: (name) => name !== 'secret',
  canReadWorkspace: () => true,
  readsWorkbooks: true,
  unrestricted: false,
  everyWorkspace: true,
  exactWorkspaces: undefined,
};

const readStepLog = stepLogTargets.step_log.handle;

function streamOf(request: DaguRequest): string | undefined {
  return request.query?.find(([key]) => key === 'stream')?.[1];
}

describe('planStepLog', () => {
  test('no query: both streams, tail=1000 (Dagu alone would return the first 1000 lines)', () => {
    assert.deepEqual(planStepLog(undefined), {
      streams: ['stdout', 'stderr'],
      positioning: [['tail', DEFAULT_TAIL]],
    });
  });

  test('stream selects one stream and keeps the default tail', () => {
    assert.deepEqual(planStepLog(query('stream=stderr')), {
      streams: ['stderr'],
      only: 'stderr',
      positioning: [['tail', '1000']],
    });
  });

  test('positioning is forwarded unchanged and suppresses the default tail', () => {
    assert.deepEqual(planStepLog(query('head=5')).positioning, [['head', '5']]);
    assert.deepEqual(planStepLog(query('offset=3&limit=2')).positioning, [
      ['offset', '3'],
      ['limit', '2'],
    ]);
    // `limit` alone reads from the beginning of the log: no tail may be added.
    assert.deepEqual(planStepLog(query('limit=7&stream=stdout')).positioning, [['limit', '7']]);
  });
});

describe('step log bodies (2.x body shape)', () => {
  test('a full Log body', () => {
    assert.deepEqual(
      parseLogBody({ content: 'a\nb', lineCount: 2, totalLines: 1575, hasMore: true, isEstimate: true }),
      { content: 'a\nb', lineCount: 2, totalLines: 1575, hasMore: true, isEstimate: true },
    );
  });

  test('an empty file answers {"content":""} without counters', () => {
    assert.deepEqual(parseLogBody({ content: '' }), EMPTY_LOG);
  });

  test('a body without content is internal_error', () => {
    assert.throws(
      () => parseLogBody({ lineCount: 1 }),
      (error: ReadError) => error.code === 'internal_error',
    );
    assert.throws(
      () => parseLogBody(undefined),
      (error: ReadError) => error.code === 'internal_error',
    );
  });

  test('counters follow stdout unless only stderr was requested', () => {
    const stdout = { content: 'o', lineCount: 1, totalLines: 10, hasMore: true, isEstimate: false };
    const stderr = { content: 'e1\ne2', lineCount: 2, totalLines: 2, hasMore: false, isEstimate: false };
    assert.deepEqual(buildStepLogData({ stdout, stderr }), {
      stdoutContent: 'o',
      stderrContent: 'e1\ne2',
      lineCount: 1,
      totalLines: 10,
      hasMore: true,
      isEstimate: false,
    });
    assert.deepEqual(buildStepLogData({ stderr }, 'stderr'), {
      stdoutContent: '',
      stderrContent: 'e1\ne2',
      lineCount: 2,
      totalLines: 2,
      hasMore: false,
      isEstimate: false,
    });
    const onlyStdout = buildStepLogData({ stdout }, 'stdout');
    assert.equal(onlyStdout.stderrContent, '');
    assert.equal(onlyStdout.lineCount, 1);
  });
});

describe('classifyLogFailure', () => {
  const notFound = (message: string): DaguResponse => ({ status: 404, body: { code: 'not_found', message } });

  test('2.x: "log file not found" is an empty stream; run or step not found is an error', () => {
    assert.equal(classifyLogFailure(notFound('log file not found for step s'), 2, false), 'missing');
    assert.equal(classifyLogFailure(notFound('step nope not found in DAG fails'), 2, false), 'error');
    assert.equal(classifyLogFailure(notFound('dag-run ID x not found for DAG fails'), 2, false), 'error');
    assert.equal(classifyLogFailure(notFound('sub dag-run ID x not found for DAG p'), 2, false), 'error');
  });

  test('2.x foreach body log: "log file not found" is ambiguous', () => {
    assert.equal(
      classifyLogFailure(notFound('log file not found for body step b of item 1'), 2, true),
      'ambiguous',
    );
  });

  test('1.x: a JSON 500 internal_error is the log reader failing (missing file) → empty', () => {
    const readerFailed = {
      status: 500,
      body: { code: 'internal_error', message: 'An unexpected error occurred' },
    };
    assert.equal(classifyLogFailure(readerFailed, 1, false), 'missing');
    assert.equal(classifyLogFailure(readerFailed, 2, false), 'error');
    assert.equal(classifyLogFailure({ status: 500, body: undefined }, 1, false), 'error');
    assert.equal(
      classifyLogFailure({ status: 403, body: { code: 'forbidden', message: 'no' } }, 1, false),
      'error',
    );
  });

  test('foreachItemHasBodyStep matches name or ID (2.x body shape)', () => {
    const item = {
      item: '1',
      index: 1,
      key: 'b',
      status: 2,
      statusLabel: 'failed',
      steps: [
        { name: 'body', id: 'b1', status: 2, statusLabel: 'failed', hasStdout: true, hasStderr: false },
      ],
    };
    assert.equal(foreachItemHasBodyStep(item, 'body'), true);
    assert.equal(foreachItemHasBodyStep(item, 'b1'), true);
    assert.equal(foreachItemHasBodyStep(item, 'other'), false);
    assert.equal(foreachItemHasBodyStep({}, 'body'), false);
  });
});

describe('step_log handler', () => {
  const logs: Record<string, unknown> = {
    stdout: { content: 'line 1499\nline 1500', lineCount: 2, totalLines: 1500, hasMore: true },
    stderr: { content: 'e1\ne2', lineCount: 2, totalLines: 2 },
  };

  test('no stream: two calls, same options, stream always sent', async () => {
    const dagu = fakeDagu(2, (request) => ({ status: 200, body: logs[streamOf(request) ?? ''] }));
    const result = await readStepLog(stepLogRead({}), depsOf(dagu), OPEN);
    assert.equal(dagu.calls.length, 2);
    for (const call of dagu.calls) {
      assert.equal(call.route, '/dag-runs/{name}/{dagRunId}/steps/{stepName}/log');
      assert.deepEqual(call.params, { name: 'lines', dagRunId: 'r1', stepName: 'many lines' });
      assert.deepEqual(call.query?.slice(1), [['tail', '1000']]);
    }
    assert.deepEqual(dagu.calls.map(streamOf).sort(), ['stderr', 'stdout']);
    assert.deepEqual(result.data, {
      stdoutContent: 'line 1499\nline 1500',
      stderrContent: 'e1\ne2',
      lineCount: 2,
      totalLines: 1500,
      hasMore: true,
      isEstimate: false,
    });
    assert.equal(result.upstreamStatus, 200);
  });

  test('stream=stderr: one call, stdout empty, counters of stderr', async () => {
    const dagu = fakeDagu(1, (request) => ({ status: 200, body: logs[streamOf(request) ?? ''] }));
    const result = await readStepLog(stepLogRead({}, 'stream=stderr&head=2'), depsOf(dagu), OPEN);
    assert.equal(dagu.calls.length, 1);
    assert.deepEqual(dagu.calls[0]?.query, [
      ['stream', 'stderr'],
      ['head', '2'],
    ]);
    assert.equal(result.data.stdoutContent, '');
    assert.equal(result.data.stderrContent, 'e1\ne2');
    assert.equal(result.data.totalLines, 2);
  });

  test('a sub run reads under sub-dag-runs', async () => {
    const dagu = fakeDagu(1, (request) => ({ status: 200, body: logs[streamOf(request) ?? ''] }));
    await readStepLog(stepLogRead({ subRunId: 'child-1', stepName: 'c1' }), depsOf(dagu), OPEN);
    assert.equal(
      dagu.calls[0]?.route,
      '/dag-runs/{name}/{dagRunId}/sub-dag-runs/{subRunId}/steps/{stepName}/log',
    );
    assert.deepEqual(dagu.calls[0]?.params, {
      name: 'lines',
      dagRunId: 'r1',
      subRunId: 'child-1',
      stepName: 'c1',
    });
  });

  test('a missing stream is empty (2.x 404 log file not found, 1.x JSON 500)', async () => {
    const dagu2 = fakeDagu(2, (request) =>
      streamOf(request) === 'stdout'
        ? { status: 200, body: logs.stdout }
        : { status: 404, body: { code: 'not_found', message: 'log file not found for step many lines' } },
    );
    const result2 = await readStepLog(stepLogRead({}), depsOf(dagu2), OPEN);
    assert.equal(result2.data.stderrContent, '');
    assert.equal(result2.data.stdoutContent, 'line 1499\nline 1500');
    assert.equal(result2.upstreamStatus, 404);

    const dagu1 = fakeDagu(1, () => ({
      status: 500,
      body: { code: 'internal_error', message: 'An unexpected error' },
    }));
    const result1 = await readStepLog(stepLogRead({}), depsOf(dagu1), OPEN);
    assert.deepEqual(result1.data, {
      stdoutContent: '',
      stderrContent: '',
      lineCount: 0,
      totalLines: 0,
      hasMore: false,
      isEstimate: false,
    });
  });

  test('unknown step or run is resource_not_found', async () => {
    const dagu = fakeDagu(1, () => ({
      status: 404,
      body: { code: 'not_found', message: 'step nope not found in DAG lines' },
    }));
    const error = await rejectsWith(
      readStepLog(stepLogRead({ stepName: 'nope' }), depsOf(dagu), OPEN),
      'resource_not_found',
    );
    assert.match(error.message, /step nope not found/);
  });

  test('a DAG the caller may not read is unauthorized before any call', async () => {
    const dagu = fakeDagu(2, () => assert.fail('no call expected'));
    const error = await rejectsWith(
      readStepLog(stepLogRead({ name: 'secret' }), depsOf(dagu), { access: NO_SECRET }),
      'unauthorized',
    );
    // The read service adds `target` and `uri` (test/unit/read/service.test.ts).
    assert.match(error.message, /secret/);
    assert.equal(dagu.calls.length, 0);
  });

  test('a foreach body log on Dagu 1.x: no foreach route is asked, and the step is not a foreach step', async () => {
    const dagu = fakeDagu(1, withoutForeachRoutes({ name: 'lines', dagRunId: 'r1' }));
    const error = await rejectsWith(
      readStepLog(stepLogRead({ stepName: 'plain', item: '0', bodyStepName: 'body' }), depsOf(dagu), OPEN),
      'resource_not_found',
    );
    assert.match(error.message, /Dagu 1\.x has no foreach steps/);
    assert.ok(dagu.calls.every((call) => !call.route.includes('/foreach')));
  });

  test('a foreach body log on Dagu 2.x uses the foreach route', async () => {
    const dagu = fakeDagu(2, (request) => ({ status: 200, body: logs[streamOf(request) ?? ''] }));
    await readStepLog(
      stepLogRead({ stepName: 'each', item: '2.inner.0', bodyStepName: 'body' }),
      depsOf(dagu),
      OPEN,
    );
    assert.equal(
      dagu.calls[0]?.route,
      '/dag-runs/{name}/{dagRunId}/steps/{stepName}/foreach/{item}/steps/{bodyStepName}/log',
    );
    assert.deepEqual(dagu.calls[0]?.params, {
      name: 'lines',
      dagRunId: 'r1',
      stepName: 'each',
      item: '2.inner.0',
      bodyStepName: 'body',
    });
  });

  test('a foreach body log on a Dagu 2.x without the foreach routes: unavailable for a real foreach step only', async () => {
    const dagu = fakeDagu(2, withoutForeachRoutes({ name: 'lines', dagRunId: 'r1' }));
    const error = await rejectsWith(
      readStepLog(stepLogRead({ stepName: 'each', item: '0', bodyStepName: 'body' }), depsOf(dagu), OPEN),
      'resource_unavailable',
    );
    assert.match(
      error.message,
      /is a foreach step, but the connected Dagu does not serve its per-item state/,
    );
    await rejectsWith(
      readStepLog(stepLogRead({ stepName: 'gone', item: '0', bodyStepName: 'body' }), depsOf(dagu), OPEN),
      'resource_not_found',
    );
  });

  test('foreach body log: an ambiguous 404 is settled by one item lookup', async () => {
    const item = {
      item: '1',
      index: 1,
      key: 'b',
      status: 4,
      statusLabel: 'succeeded',
      steps: [{ name: 'body', status: 4, statusLabel: 'succeeded', hasStdout: true, hasStderr: false }],
    };
    const responder: Responder = (request) =>
      request.route.endsWith('/log')
        ? streamOf(request) === 'stdout'
          ? { status: 200, body: { content: 'out', lineCount: 1, totalLines: 1 } }
          : {
              status: 404,
              body: { code: 'not_found', message: 'log file not found for body step body of item 1' },
            }
        : { status: 200, body: item };
    const dagu = fakeDagu(2, responder);
    const result = await readStepLog(
      stepLogRead({ stepName: 'each', item: '1', bodyStepName: 'body' }),
      depsOf(dagu),
      OPEN,
    );
    assert.equal(result.data.stdoutContent, 'out');
    assert.equal(result.data.stderrContent, '');
    const lookups = dagu.calls.filter((call) => call.route.endsWith('/foreach/{item}'));
    assert.equal(lookups.length, 1);
    assert.deepEqual(lookups[0]?.params, { name: 'lines', dagRunId: 'r1', stepName: 'each', item: '1' });

    const unknown = fakeDagu(2, responder);
    await rejectsWith(
      readStepLog(stepLogRead({ stepName: 'each', item: '1', bodyStepName: 'nope' }), depsOf(unknown), OPEN),
      'resource_not_found',
    );
    const both404 = fakeDagu(2, (request) =>
      request.route.endsWith('/log')
        ? {
            status: 404,
            body: { code: 'not_found', message: 'log file not found for body step body of item 9' },
          }
        : { status: 404, body: { code: 'not_found', message: 'item 9 of step each has no record' } },
    );
    await rejectsWith(
      readStepLog(stepLogRead({ stepName: 'each', item: '9', bodyStepName: 'body' }), depsOf(both404), OPEN),
      'resource_not_found',
    );
    assert.equal(both404.calls.filter((call) => call.route.endsWith('/foreach/{item}')).length, 1);
  });

  test('an unreadable upstream body is internal_error', async () => {
    const dagu = fakeDagu(2, () => ({ status: 200, body: { lines: [] } }));
    await rejectsWith(readStepLog(stepLogRead({}), depsOf(dagu), OPEN), 'internal_error');
  });
});

describe('the cache of finished step logs (scripted Dagu 2.x)', () => {
  const FILES = { stdout: '/logs/lines/run_1/many.out', stderr: '/logs/lines/run_1/many.err' };
  /** Run details whose step `many lines` has the given status and files. */
  const details = (runStatus: number, stepStatus: number, files = FILES) => ({
    status: 200,
    body: {
      dagRunDetails: {
        name: 'lines',
        dagRunId: 'r1',
        status: runStatus,
        nodes: [
          { step: { name: 'many lines' }, status: stepStatus, stdout: files.stdout, stderr: files.stderr },
        ],
      },
    },
  });
  const logBody = (text: string) => ({ status: 200, body: { content: text, lineCount: 1, totalLines: 1 } });

  /** A Dagu whose details come from `detailsNow()` (or throw when it says so) and whose logs say `text`. */
  function scripted(detailsNow: () => DaguResponse | 'fail', text: () => string) {
    return fakeDagu(2, (request) => {
      if (request.route.endsWith('/log')) return logBody(`${streamOf(request)}:${text()}`);
      const answer = detailsNow();
      if (answer === 'fail') throw new Error('Dagu went away');
      return answer;
    });
  }
  const cacheDeps = (dagu: ReturnType<typeof fakeDagu>) => ({
    ...depsOf(dagu),
    logCache: new FinishedLogCache(cacheSlice<LogPart>(new ByteLru<unknown>(1024 * 1024), 'step_log')),
  });
  const logRoutes = (dagu: ReturnType<typeof fakeDagu>) =>
    dagu.calls.filter((call) => call.route.endsWith('/log'));

  test('a done step of a finished run: read once, then served from the cache while the details name its files', async () => {
    const dagu = scripted(
      () => details(4, 4),
      () => 'first',
    );
    const deps = cacheDeps(dagu);
    const first = await readStepLog(stepLogRead({}), deps, OPEN);
    assert.equal((first.data as { stdoutContent: string }).stdoutContent, 'stdout:first');
    assert.equal(logRoutes(dagu).length, 2);
    const second = await readStepLog(stepLogRead({}), deps, OPEN);
    assert.deepEqual(second.data, first.data);
    assert.equal(logRoutes(dagu).length, 2, 'no log read the second time');
  });

  test('new files named by the details (a retry) are read from Dagu, never the cached window', async () => {
    let files = FILES;
    let text = 'first';
    const dagu = scripted(
      () => details(4, 4, files),
      () => text,
    );
    const deps = cacheDeps(dagu);
    await readStepLog(stepLogRead({}), deps, OPEN);
    files = { stdout: '/logs/lines/run_2/many.out', stderr: '/logs/lines/run_2/many.err' };
    text = 'second';
    const after = await readStepLog(stepLogRead({}), deps, OPEN);
    assert.equal((after.data as { stdoutContent: string }).stdoutContent, 'stdout:second');
  });

  test('a window is not kept when the details read after it name another file', async () => {
    let detailsReads = 0;
    const dagu = scripted(
      () => {
        detailsReads += 1;
        // The check after the log read sees a retry that started in between.
        return detailsReads === 2
          ? details(4, 4, { stdout: '/logs/lines/run_2/many.out', stderr: '/logs/lines/run_2/many.err' })
          : details(4, 4);
      },
      () => 'racing',
    );
    const deps = cacheDeps(dagu);
    await readStepLog(stepLogRead({}), deps, OPEN);
    await readStepLog(stepLogRead({}), deps, OPEN);
    assert.equal(logRoutes(dagu).length, 4, 'nothing was kept, both reads went to Dagu');
  });

  test('a running step or an unfinished run is never cached', async () => {
    for (const [runStatus, stepStatus] of [
      [1, 1],
      [1, 4],
      [5, 4],
      [7, 4],
    ] as const) {
      const dagu = scripted(
        () => details(runStatus, stepStatus),
        () => 'live',
      );
      const deps = cacheDeps(dagu);
      await readStepLog(stepLogRead({}), deps, OPEN);
      await readStepLog(stepLogRead({}), deps, OPEN);
      assert.equal(logRoutes(dagu).length, 4, `run ${runStatus}, step ${stepStatus}`);
    }
  });

  test('a failed check after the log read keeps nothing but the read succeeds', async () => {
    let detailsReads = 0;
    const dagu = scripted(
      () => {
        detailsReads += 1;
        return detailsReads === 2 ? 'fail' : details(4, 4);
      },
      () => 'kept?',
    );
    const deps = cacheDeps(dagu);
    const read = await readStepLog(stepLogRead({}), deps, OPEN);
    assert.equal((read.data as { stdoutContent: string }).stdoutContent, 'stdout:kept?');
    await readStepLog(stepLogRead({}), deps, OPEN);
    assert.equal(logRoutes(dagu).length, 4, 'the first windows were not kept');
  });

  test('Dagu 1.x: no details read, no cache', async () => {
    const dagu = fakeDagu(1, (request) => (request.route.endsWith('/log') ? logBody('x') : details(4, 4)));
    const deps = cacheDeps(dagu);
    await readStepLog(stepLogRead({}), deps, OPEN);
    await readStepLog(stepLogRead({}), deps, OPEN);
    assert.deepEqual(
      dagu.calls.map((call) => call.route.endsWith('/log')),
      [true, true, true, true],
    );
  });
});

test('a restricted caller’s sub run of `latest`: `latest` is resolved once, by the allowlist check', async () => {
  const dagu = fakeDagu(2, (request) => {
    if (request.route.endsWith('/log')) return { status: 200, body: { content: 'x' } };
    const latest = request.params?.dagRunId === 'latest';
    return {
      status: 200,
      body: {
        dagRunDetails: { name: latest ? 'lines' : 'child', dagRunId: latest ? 'r9' : 'c1', status: 4 },
      },
    };
  });
  await readStepLog(stepLogRead({ dagRunId: 'latest', subRunId: 'c1' }), depsOf(dagu), {
    access: NO_SECRET,
  });
  const latestReads = dagu.calls.filter((call) => call.params?.dagRunId === 'latest');
  assert.equal(latestReads.length, 1);
  const logs = dagu.calls.filter((call) => call.route.endsWith('/log'));
  assert.ok(logs.length > 0 && logs.every((call) => call.params?.dagRunId === 'r9'));
});
