/** Reads addressed by run: what a missing run is called, the Dagu route of a root or child run, its nodes' order. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  nodesInExecutionOrder,
  runOfRequest,
  runRoute,
  runSubject,
} from '../../../../src/read/upstream/runs.ts';

test('runSubject quotes the values and names a child run under its root', () => {
  assert.equal(runSubject({ name: 'etl', dagRunId: 'r1' }), 'DAG-run "r1" of DAG "etl"');
  assert.equal(
    runSubject({ name: 'etl', dagRunId: 'r1', subRunId: 's"1' }),
    'Sub DAG-run "s\\"1" of DAG-run "r1" of DAG "etl"',
  );
});

test('runRoute: the root-run route, or the sub-DAG-run route under the root, with its parameters', () => {
  assert.deepEqual(runRoute({ name: 'etl', dagRunId: 'r1' }), {
    prefix: '/dag-runs/{name}/{dagRunId}',
    params: { name: 'etl', dagRunId: 'r1' },
  });
  assert.deepEqual(runRoute({ name: 'etl', dagRunId: 'r1', subRunId: 's1' }), {
    prefix: '/dag-runs/{name}/{dagRunId}/sub-dag-runs/{subRunId}',
    params: { name: 'etl', dagRunId: 'r1', subRunId: 's1' },
  });
});

test('runOfRequest keeps a subRunId only when the request has one', () => {
  assert.deepEqual(runOfRequest({ name: 'a', dagRunId: 'b' }), { name: 'a', dagRunId: 'b' });
  assert.equal('subRunId' in runOfRequest({ name: 'a', dagRunId: 'b' }), false);
  assert.deepEqual(runOfRequest({ name: 'a', dagRunId: 'b', subRunId: 'c' }), {
    name: 'a',
    dagRunId: 'b',
    subRunId: 'c',
  });
});

test("nodesInExecutionOrder: by start time, ties and steps not started in Dagu's order, the started first", () => {
  const node = (name: string, startedAt?: string) => ({
    step: { name },
    ...(startedAt ? { startedAt } : {}),
  });
  const names = (nodes: unknown[]) =>
    nodesInExecutionOrder({ nodes }).map((entry) => (entry.step as { name: string }).name);
  const t = (second: number) => `2026-07-01T01:00:0${second}.000Z`;
  // Already in order (Dagu's usual list): kept as listed, ties and all.
  assert.deepEqual(names([node('a', t(1)), node('b', t(1)), node('c', t(2)), node('d'), node('e')]), [
    'a',
    'b',
    'c',
    'd',
    'e',
  ]);
  // Out of order: sorted by start, equal starts and unstarted nodes keep their listed order, unstarted last.
  assert.deepEqual(names([node('x'), node('c', t(3)), node('a', t(1)), node('y'), node('b', t(1))]), [
    'a',
    'b',
    'c',
    'x',
    'y',
  ]);
  assert.deepEqual(names([node('b', t(2)), node('a', t(1))]), ['a', 'b']);
  assert.deepEqual(nodesInExecutionOrder({ nodes: null }), []);
});
