import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AccessPolicy } from '../../../../src/core/access.ts';
import type { ReadError } from '../../../../src/read/errors.ts';
import {
  foreachTargets,
  mapForeachBodyStep,
  mapForeachItem,
  mapForeachItemList,
  sortForeachItems,
} from '../../../../src/read/targets/foreach.ts';
import type { ReadFields, ResolvedRead } from '../../../../src/read/types.ts';
import { withoutForeachRoutes } from '../../../support/dagu-without-foreach-routes.ts';
import { depsOf, fakeDagu, OPEN } from '../../../support/read-deps.ts';
import { rejectsWith } from '../../../support/read-errors.ts';

const NO_SECRET: AccessPolicy = {
  canReadDag: (name) => name !== 'secret',
  canReadWorkspace: () => true,
  readsWorkbooks: true,
  unrestricted: false,
  everyWorkspace: true,
  exactWorkspaces: undefined,
};

function read(target: 'foreach_items' | 'foreach_item', fields: ReadFields, raw?: string): ResolvedRead {
  const request: ResolvedRead = {
    mode: 'target',
    target,
    fields: { name: 'fan', dagRunId: 'r1', stepName: 'each', ...fields },
    uri: 'dagu://runs/fan/r1/steps/each/foreach',
  };
  if (raw !== undefined) {
    request.query = { raw, params: raw.split('&').map((pair) => pair.split('=') as [string, string]) };
  }
  return request;
}

const RUN = { name: 'fan', dagRunId: 'r1' };

// ForeachItemList exactly as Dagu 2.x's api.yaml describes it (required: total, counts, items).
const LIST_BODY = {
  total: 4,
  counts: { notStarted: 1, running: 1, succeeded: 1, failed: 1, aborted: 0 },
  items: [
    {
      item: '1',
      index: 1,
      key: 'b',
      status: 2,
      statusLabel: 'failed',
      error: 'exit status 3',
      startedAt: '2026-10-07T00:00:00Z',
      finishedAt: '2026-10-07T00:00:02+02:00',
    },
    {
      item: '3',
      index: 3,
      key: 'd',
      status: 1,
      statusLabel: 'running',
      error: '',
      startedAt: '2026-10-07T00:00:01Z',
    },
    {
      item: '0',
      index: 0,
      key: 'a',
      status: 4,
      statusLabel: 'succeeded',
      error: '',
      startedAt: '',
      finishedAt: '',
    },
    { item: '2', index: 2, key: '2', status: 0, statusLabel: 'not_started' },
  ],
};

describe('foreach mapping (2.x body shape)', () => {
  test('items list: total, counts, items with recorded fields only, ms timestamps, item URIs', () => {
    const data = mapForeachItemList(LIST_BODY, RUN, 'each');
    assert.equal(data.total, 4);
    assert.deepEqual(data.counts, { notStarted: 1, running: 1, succeeded: 1, failed: 1, aborted: 0 });
    assert.deepEqual(data.items, [
      {
        item: '1',
        index: 1,
        key: 'b',
        status: 2,
        statusLabel: 'failed',
        error: 'exit status 3',
        startedAt: '2026-10-07T00:00:00.000Z',
        finishedAt: '2026-10-06T22:00:02.000Z',
        uri: 'dagu://runs/fan/r1/steps/each/foreach/1',
      },
      {
        item: '3',
        index: 3,
        key: 'd',
        status: 1,
        statusLabel: 'running',
        startedAt: '2026-10-07T00:00:01.000Z',
        uri: 'dagu://runs/fan/r1/steps/each/foreach/3',
      },
      {
        item: '0',
        index: 0,
        key: 'a',
        status: 4,
        statusLabel: 'succeeded',
        uri: 'dagu://runs/fan/r1/steps/each/foreach/0',
      },
      {
        item: '2',
        index: 2,
        key: '2',
        status: 0,
        statusLabel: 'not_started',
        uri: 'dagu://runs/fan/r1/steps/each/foreach/2',
      },
    ]);
  });

  test('an empty list (step never prepared a log) maps to zero counts', () => {
    const data = mapForeachItemList(
      { total: 0, counts: { notStarted: 0, running: 0, succeeded: 0, failed: 0, aborted: 0 }, items: [] },
      RUN,
      'each',
    );
    assert.deepEqual(data, {
      total: 0,
      counts: { notStarted: 0, running: 0, succeeded: 0, failed: 0, aborted: 0 },
      items: [],
    });
  });

  test('nested items keep their full item path; child-run URIs go under /sub/', () => {
    const data = mapForeachItemList(
      {
        total: 1,
        counts: { notStarted: 0, running: 0, succeeded: 1, failed: 0, aborted: 0 },
        items: [{ item: '1.inner.0', index: 0, key: 'x', status: 4, statusLabel: 'succeeded' }],
      },
      { ...RUN, subRunId: 'child 1' },
      'each',
    );
    const items = data.items as Array<Record<string, unknown>>;
    assert.equal(items[0]?.uri, 'dagu://runs/fan/r1/sub/child%201/steps/each/foreach/1.inner.0');
  });

  test('sort: failed and aborted first, then running and retrying, then the rest by index', () => {
    const sorted = sortForeachItems([
      { index: 0, status: 4 },
      { index: 1, status: 1 },
      { index: 2, status: 3 },
      { index: 3, status: 0 },
      { index: 4, status: 2 },
      { index: 5, status: 9 },
    ]);
    assert.deepEqual(
      sorted.map((item) => item.index),
      [2, 4, 1, 5, 0, 3],
    );
  });

  test('one item: fields, body steps in execution order with foreachParent, log and nested-items URIs', () => {
    const data = mapForeachItem(
      {
        item: '1',
        index: 1,
        key: 'b',
        status: 2,
        statusLabel: 'failed',
        error: 'exit status 3',
        startedAt: '2026-10-07T00:00:00Z',
        finishedAt: '2026-10-07T00:00:02Z',
        steps: [
          {
            name: 'body',
            status: 2,
            statusLabel: 'failed',
            error: 'exit status 3',
            hasStdout: true,
            hasStderr: true,
          },
          {
            name: 'inner',
            id: 'in',
            status: 4,
            statusLabel: 'succeeded',
            startedAt: '2026-10-07T00:00:02Z',
            finishedAt: '2026-10-07T00:00:03Z',
            retryCount: 0,
            hasStdout: false,
            hasStderr: false,
            foreachParent: '1.inner',
          },
        ],
      },
      RUN,
      'each',
    );
    assert.deepEqual(data, {
      item: '1',
      index: 1,
      key: 'b',
      status: 2,
      statusLabel: 'failed',
      error: 'exit status 3',
      startedAt: '2026-10-07T00:00:00.000Z',
      finishedAt: '2026-10-07T00:00:02.000Z',
      steps: [
        {
          name: 'body',
          status: 2,
          statusLabel: 'failed',
          hasStdout: true,
          hasStderr: true,
          error: 'exit status 3',
          logUri: 'dagu://runs/fan/r1/steps/each/foreach/1/steps/body/logs',
        },
        {
          name: 'inner',
          status: 4,
          statusLabel: 'succeeded',
          hasStdout: false,
          hasStderr: false,
          id: 'in',
          startedAt: '2026-10-07T00:00:02.000Z',
          finishedAt: '2026-10-07T00:00:03.000Z',
          foreachParent: '1.inner',
          foreachUri: 'dagu://runs/fan/r1/steps/each/foreach?parent=1.inner',
          logUri: 'dagu://runs/fan/r1/steps/each/foreach/1/steps/inner/logs',
        },
      ],
    });
  });

  test('a body step name with spaces is escaped per segment in its log URI; newer fields pass through', () => {
    const step = mapForeachBodyStep(
      {
        name: 'build (prod)',
        status: 4,
        statusLabel: 'succeeded',
        hasStdout: true,
        hasStderr: false,
        agentSession: { state: 'succeeded' },
        modelUsage: { inputTokens: 3 },
      },
      RUN,
      'each',
      '0',
    );
    assert.equal(step.logUri, 'dagu://runs/fan/r1/steps/each/foreach/0/steps/build%20%28prod%29/logs');
    assert.deepEqual(step.agentSession, { state: 'succeeded' });
    assert.deepEqual(step.modelUsage, { inputTokens: 3 });
  });

  test('a missing label is derived from the status; a body without status is internal_error', () => {
    const data = mapForeachItem({ item: '0', index: 0, key: 'a', status: 9, steps: [] }, RUN, 'each');
    assert.equal(data.statusLabel, 'retrying');
    assert.throws(
      () => mapForeachItemList({ total: 1, items: [{ item: '0', index: 0, key: 'a' }] }, RUN, 'each'),
      (error: ReadError) => error.code === 'internal_error',
    );
  });
});

describe('foreach handlers', () => {
  const readItems = foreachTargets.foreach_items.handle;
  const readItem = foreachTargets.foreach_item.handle;

  test('a Dagu without foreach routes: a real foreach step is resource_unavailable naming what is missing', async () => {
    const dagu = fakeDagu(2, withoutForeachRoutes(RUN));
    for (const request of [read('foreach_items', {}), read('foreach_item', { item: '0' })]) {
      const handler = request.target === 'foreach_items' ? readItems : readItem;
      const error = await rejectsWith(handler(request, depsOf(dagu), OPEN), 'resource_unavailable');
      assert.match(
        error.message,
        /^Step "each" of DAG-run "r1" of DAG "fan" is a foreach step, but the connected Dagu does not serve its per-item state/,
      );
      assert.match(error.message, /it reports only its status \(succeeded\) and doneCount 3/);
    }
  });

  test('a Dagu without foreach routes: an unknown run, an unknown step, or a step that is not a foreach step is not found', async () => {
    const dagu = fakeDagu(2, withoutForeachRoutes(RUN));
    const unknownRun = await rejectsWith(
      readItems(read('foreach_items', { dagRunId: 'r2' }), depsOf(dagu), OPEN),
      'resource_not_found',
    );
    assert.match(unknownRun.message, /DAG-run "r2" of DAG "fan" does not exist/);
    const unknownStep = await rejectsWith(
      readItem(read('foreach_item', { stepName: 'nope', item: '0' }), depsOf(dagu), OPEN),
      'resource_not_found',
    );
    assert.equal(unknownStep.message, 'Step "nope" does not exist in DAG-run "r1" of DAG "fan".');
    const plain = await rejectsWith(
      readItems(read('foreach_items', { stepName: 'plain' }), depsOf(dagu), OPEN),
      'resource_not_found',
    );
    assert.equal(
      plain.message,
      'Step "plain" of DAG-run "r1" of DAG "fan" is not a foreach step: it has no foreach items.',
    );
  });

  test('Dagu 1.x: no foreach route is asked; the run and step are established, and no step is a foreach step', async () => {
    const dagu = fakeDagu(1, withoutForeachRoutes(RUN));
    const error = await rejectsWith(
      readItem(read('foreach_item', { stepName: 'plain', item: '0' }), depsOf(dagu), OPEN),
      'resource_not_found',
    );
    assert.match(error.message, /is not a foreach step \(the connected Dagu 1\.x has no foreach steps\)/);
    assert.ok(dagu.calls.every((call) => !call.route.includes('/foreach')));
    await rejectsWith(
      readItems(read('foreach_items', { dagRunId: 'r2' }), depsOf(dagu), OPEN),
      'resource_not_found',
    );
  });

  test('unauthorized before any call', async () => {
    const dagu = fakeDagu(2, () => assert.fail('no call expected'));
    const error = await rejectsWith(
      readItems(read('foreach_items', { name: 'secret' }), depsOf(dagu), { access: NO_SECRET }),
      'unauthorized',
    );
    assert.match(error.message, /secret/);
    assert.equal(dagu.calls.length, 0);
  });

  test('items: route, forwarded query, mapped body', async () => {
    const dagu = fakeDagu(2, () => ({ status: 200, body: LIST_BODY }));
    const result = await readItems(
      read('foreach_items', { subRunId: 'c1' }, 'status=failed&perPage=500&page=2&parent=1.inner'),
      depsOf(dagu),
      OPEN,
    );
    assert.equal(
      dagu.calls[0]?.route,
      '/dag-runs/{name}/{dagRunId}/sub-dag-runs/{subRunId}/steps/{stepName}/foreach',
    );
    assert.deepEqual(dagu.calls[0]?.params, {
      name: 'fan',
      dagRunId: 'r1',
      subRunId: 'c1',
      stepName: 'each',
    });
    assert.deepEqual(dagu.calls[0]?.query, [
      ['status', 'failed'],
      ['perPage', '500'],
      ['page', '2'],
      ['parent', '1.inner'],
    ]);
    assert.equal(result.data.total, 4);
  });

  test('item: route and errors (404 → resource_not_found, 400 → invalid_tool_input on item)', async () => {
    const ok = fakeDagu(2, () => ({
      status: 200,
      body: { item: '0', index: 0, key: 'a', status: 4, statusLabel: 'succeeded', steps: [] },
    }));
    const result = await readItem(read('foreach_item', { item: '0' }), depsOf(ok), OPEN);
    assert.equal(ok.calls[0]?.route, '/dag-runs/{name}/{dagRunId}/steps/{stepName}/foreach/{item}');
    assert.deepEqual(result.data.steps, []);

    const missing = fakeDagu(2, () => ({
      status: 404,
      body: { code: 'not_found', message: 'step each in DAG fan is not a foreach step' },
    }));
    await rejectsWith(
      readItem(read('foreach_item', { item: '0' }), depsOf(missing), OPEN),
      'resource_not_found',
    );

    const bad = fakeDagu(2, () => ({
      status: 400,
      body: { code: 'bad_request', message: 'invalid item path' },
    }));
    const error = await rejectsWith(
      readItem(read('foreach_item', { item: 'x' }), depsOf(bad), OPEN),
      'invalid_tool_input',
    );
    assert.equal(error.field, 'item');
  });
});
