/**
 * The finished-log cache protocol (src/read/upstream/cached-log.ts) on its own: which run details make
 * a step's files cacheable, and when readLogWindows serves, keeps or refuses a window. The step-log
 * handler on top of it is tested in test/unit/read/targets/step-log.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ByteLru, cacheSlice } from '../../../../src/core/byte-lru.ts';
import type { DaguRequest, DaguResponse } from '../../../../src/dagu/types.ts';
import {
  finishedLogFiles,
  type LogWindowAnswer,
  readLogWindows,
} from '../../../../src/read/upstream/cached-log.ts';
import { FinishedLogCache, type LogStream } from '../../../../src/read/upstream/finished-logs.ts';
import type { LogPart } from '../../../../src/read/upstream/log.ts';
import type { ReadScope } from '../../../../src/read/upstream/scope.ts';
import { depsOf, fakeDagu, OPEN } from '../../../support/read-deps.ts';

const RUN = { name: 'etl', dagRunId: 'r1' };
const FILES = { stdout: '/logs/run_1/load.out', stderr: '/logs/run_1/load.err' };

const newCache = () =>
  new FinishedLogCache(cacheSlice<LogPart>(new ByteLru<unknown>(1024 * 1024), 'step_log'));
const part = (content: string): LogPart => ({
  content,
  lineCount: 1,
  totalLines: 1,
  hasMore: false,
  isEstimate: false,
});

/** Run details: run status, the step `load` with its status and files. */
const details = (
  runStatus: number,
  stepStatus: number,
  files: Record<string, string> = FILES,
): DaguResponse => ({
  status: 200,
  body: {
    dagRunDetails: {
      ...RUN,
      status: runStatus,
      nodes: [{ step: { name: 'load' }, status: stepStatus, ...files }],
    },
  },
});

function scopeOf(responder: (request: DaguRequest) => DaguResponse | 'fail') {
  const dagu = fakeDagu(2, (request) => {
    const answer = responder(request);
    if (answer === 'fail') throw new Error('Dagu went away');
    return answer;
  });
  const scope: ReadScope = {
    request: { mode: 'target', target: 'step_log', fields: { ...RUN, stepName: 'load' } },
    deps: depsOf(dagu),
    call: OPEN,
  };
  return { dagu, scope };
}

describe('finishedLogFiles', () => {
  test('a done step of a finished run: the files its details name, an empty one left out', async () => {
    const { dagu, scope } = scopeOf(() => details(4, 4, { stdout: FILES.stdout, stderr: '' }));
    assert.deepEqual(await finishedLogFiles(scope, newCache(), RUN, 'load'), { stdout: FILES.stdout });
    assert.deepEqual(
      dagu.calls.map((call) => [call.route, call.params]),
      [['/dag-runs/{name}/{dagRunId}', RUN]],
    );
  });

  test('a sub run is read on its own route', async () => {
    const { dagu, scope } = scopeOf(() => details(4, 4));
    const sub = { ...RUN, subRunId: 's1' };
    assert.deepEqual(await finishedLogFiles(scope, newCache(), sub, 'load'), FILES);
    assert.equal(dagu.calls[0]?.route, '/dag-runs/{name}/{dagRunId}/sub-dag-runs/{subRunId}');
  });

  test('a running step, an unfinished run or an unknown step: nothing, and the run is noted unfinished', async () => {
    for (const [runStatus, stepStatus, step] of [
      [1, 1, 'load'],
      [1, 4, 'load'],
      [4, 4, 'other'],
    ] as const) {
      const cache = newCache();
      const { scope } = scopeOf(() => details(runStatus, stepStatus));
      assert.equal(
        await finishedLogFiles(scope, cache, RUN, step),
        undefined,
        `${runStatus}/${stepStatus}/${step}`,
      );
      assert.equal(cache.worthChecking(RUN), false);
    }
  });

  test('details Dagu does not give: nothing, and the run is not noted', async () => {
    for (const answer of [
      { status: 404, body: { message: 'not found' } },
      { status: 200, body: 'text' },
      { status: 200, body: { dagRunDetails: { status: 4 } } },
    ]) {
      const cache = newCache();
      const { scope } = scopeOf(() => answer);
      assert.equal(await finishedLogFiles(scope, cache, RUN, 'load'), undefined);
      assert.equal(cache.worthChecking(RUN), true);
    }
  });
});

describe('readLogWindows', () => {
  const STREAMS: readonly LogStream[] = ['stdout', 'stderr'];
  const fromDagu =
    (calls: LogStream[], text: string, status = 200) =>
    async (stream: LogStream): Promise<LogWindowAnswer> => {
      calls.push(stream);
      return { part: part(`${stream}:${text}`), status, fresh: status === 200 };
    };

  test('without a cache: every stream from Dagu, no details request', async () => {
    const { dagu, scope } = scopeOf(() => assert.fail('no details request expected'));
    const calls: LogStream[] = [];
    const read = { cache: undefined, run: RUN, stepName: 'load', streams: STREAMS, positioning: [] };
    const answers = await readLogWindows(scope, read, fromDagu(calls, 'a'));
    assert.deepEqual(answers, [
      { part: part('stdout:a'), status: 200 },
      { part: part('stderr:a'), status: 200 },
    ]);
    assert.deepEqual(calls, ['stdout', 'stderr']);
    assert.equal(dagu.calls.length, 0);
  });

  test('kept after a fresh read, served from the cache next time, per positioning', async () => {
    const { dagu, scope } = scopeOf(() => details(4, 4));
    const cache = newCache();
    const calls: LogStream[] = [];
    const read = {
      cache,
      run: RUN,
      stepName: 'load',
      streams: STREAMS,
      positioning: [['tail', '5']] as [string, string][],
    };
    await readLogWindows(scope, read, fromDagu(calls, 'first'));
    assert.equal(dagu.calls.length, 2, 'details before and after the log read');
    const again = await readLogWindows(scope, read, fromDagu(calls, 'second'));
    assert.deepEqual(again, [
      { part: part('stdout:first'), status: 200 },
      { part: part('stderr:first'), status: 200 },
    ]);
    assert.deepEqual(calls, ['stdout', 'stderr'], 'the second read did not ask Dagu for logs');
    assert.equal(dagu.calls.length, 3, 'only the details before');
    const otherWindow = await readLogWindows(
      scope,
      { ...read, positioning: [['tail', '6']] },
      fromDagu(calls, 'third'),
    );
    assert.equal(otherWindow[0]?.part.content, 'stdout:third');
  });

  test('nothing is kept when Dagu did not answer 200, when the files changed meanwhile, or when the check fails', async () => {
    const cases: [string, (n: number) => DaguResponse | 'fail', number][] = [
      ['not fresh', () => details(4, 4), 404],
      [
        'retried',
        (n) =>
          n === 1
            ? details(4, 4)
            : details(4, 4, { stdout: '/logs/run_2/load.out', stderr: '/logs/run_2/load.err' }),
        200,
      ],
      ['check failed', (n) => (n === 1 ? details(4, 4) : 'fail'), 200],
    ];
    for (const [label, detailsAt, status] of cases) {
      let detailsReads = 0;
      const { scope } = scopeOf(() => {
        detailsReads += 1;
        return detailsAt(detailsReads);
      });
      const cache = newCache();
      const calls: LogStream[] = [];
      const read = { cache, run: RUN, stepName: 'load', streams: ['stdout'] as const, positioning: [] };
      const first = await readLogWindows(scope, read, fromDagu(calls, 'x', status));
      assert.deepEqual(first, [{ part: part('stdout:x'), status }], label);
      detailsReads = 0;
      await readLogWindows(scope, read, fromDagu(calls, 'y', status));
      assert.deepEqual(calls, ['stdout', 'stdout'], `${label}: read from Dagu again`);
    }
  });
});
