/** Reads addressed by run: what a missing run is called, and the Dagu route of a root or child run. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runOfRequest, runRoute, runSubject } from '../../../../src/read/upstream/runs.ts';

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
