/** The name a DAG entry of a Dagu listing is addressed by. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ReadError } from '../../../../src/read/errors.ts';
import { dagFileName } from '../../../../src/read/upstream/dags.ts';

test('the file name when Dagu gives one, else the declared name', () => {
  assert.equal(dagFileName({ fileName: 'etl-daily', dag: { name: 'ETL daily' } }), 'etl-daily');
  assert.equal(dagFileName({ fileName: '', dag: { name: 'declared' } }), 'declared');
  assert.equal(dagFileName({ dag: { name: 'declared' } }), 'declared');
});

test('an entry with neither is an internal error, not a nameless DAG', () => {
  for (const entry of [{}, { dag: {} }, { dag: { name: 3 } }, { fileName: 4 }]) {
    assert.throws(
      () => dagFileName(entry),
      (error: unknown) => error instanceof ReadError && error.code === 'internal_error',
      JSON.stringify(entry),
    );
  }
});
