/** Small readers for Dagu's JSON bodies: a body of the wrong shape is a clear internal error. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ReadError } from '../../../../src/read/errors.ts';
import {
  integer,
  isRecord,
  list,
  malformedBody,
  object,
  optionalInteger,
  optionalText,
  strings,
  text,
} from '../../../../src/read/upstream/bodies.ts';

const internal = (what: RegExp) => (error: unknown) =>
  error instanceof ReadError && error.code === 'internal_error' && what.test(error.message);

test('records are plain objects, not arrays or null', () => {
  assert.ok(isRecord({}));
  assert.ok(!isRecord([]));
  assert.ok(!isRecord(null));
  assert.deepEqual(object({ a: 1 }, 'dag'), { a: 1 });
  assert.throws(() => object([], 'the dag'), internal(/the dag is missing or has the wrong type/));
});

test('lists: null and absent read as empty (Go nil slices); other values are refused', () => {
  assert.deepEqual(list(null, 'runs'), []);
  assert.deepEqual(list(undefined, 'runs'), []);
  assert.deepEqual(list([1], 'runs'), [1]);
  assert.throws(() => list({}, 'runs'), internal(/runs is missing/));
});

test('text and integers are required where asked for, optional otherwise', () => {
  assert.equal(text('x', 'name'), 'x');
  assert.throws(() => text(1, 'name'), internal(/name is missing/));
  assert.equal(optionalText(''), undefined);
  assert.equal(optionalText(4), undefined);
  assert.equal(optionalText('y'), 'y');
  assert.equal(integer(3, 'count'), 3);
  assert.throws(() => integer(1.5, 'count'), internal(/count/));
  assert.equal(optionalInteger(2.5), undefined);
  assert.equal(optionalInteger(7), 7);
  assert.deepEqual(strings(['a', 1, 'b', null]), ['a', 'b']);
  assert.deepEqual(strings('a'), []);
});

test('malformedBody names the read and what was wrong', () => {
  const error = malformedBody('the DAG list', 'dags is not an array');
  assert.equal(error.code, 'internal_error');
  assert.equal(
    error.message,
    'Dagu answered the DAG list with a body that does not have the expected shape (dags is not an array).',
  );
});
