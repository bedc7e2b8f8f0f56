/** The contract's error object and how anything thrown becomes one. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ReadError, readError, toReadError } from '../../../src/read/errors.ts';

describe('ReadError', () => {
  test('toObject carries code and message always, the rest only when set; upstreamStatus never', () => {
    const error = new ReadError({ code: 'resource_not_found', message: 'No DAG.' }, { upstreamStatus: 404 });
    assert.deepEqual(error.toObject(), { code: 'resource_not_found', message: 'No DAG.' });
    assert.equal(error.upstreamStatus, 404);
    assert.equal(error.name, 'ReadError');
    const full = readError.invalidInput('Bad.', { target: 'run', field: 'name', details: { max: 1 } });
    assert.deepEqual(full.toObject(), {
      code: 'invalid_tool_input',
      message: 'Bad.',
      target: 'run',
      field: 'name',
      details: { max: 1 },
    });
  });

  test('withContext fills target and uri only where missing, and returns itself when nothing changes', () => {
    const cause = new Error('root');
    const error = new ReadError(
      { code: 'internal_error', message: 'x', target: 'dag' },
      { upstreamStatus: 502, cause },
    );
    assert.equal(error.withContext({ target: 'runs' }), error);
    const filled = error.withContext({ target: 'runs', uri: 'dagu://dags/a' });
    assert.equal(filled.target, 'dag');
    assert.equal(filled.uri, 'dagu://dags/a');
    assert.equal(filled.upstreamStatus, 502);
    assert.equal(filled.cause, cause);
  });

  test('withUri sets or removes exactly the uri', () => {
    const error = readError.notFound('gone', { uri: 'dagu://a' });
    assert.equal(error.withUri('dagu://a'), error);
    assert.equal(error.withUri('dagu://b').uri, 'dagu://b');
    assert.deepEqual(error.withUri(undefined).toObject(), { code: 'resource_not_found', message: 'gone' });
  });

  test('the shorthands spell each code', () => {
    assert.deepEqual(
      [
        readError.invalidInput('m'),
        readError.invalidUri('m'),
        readError.notFound('m'),
        readError.unavailable('m'),
        readError.internal('m'),
        readError.unauthorized('m'),
      ].map((error) => error.code),
      [
        'invalid_tool_input',
        'invalid_resource_uri',
        'resource_not_found',
        'resource_unavailable',
        'internal_error',
        'unauthorized',
      ],
    );
  });
});

describe('toReadError', () => {
  test('a ReadError keeps its code and gains the context', () => {
    const error = toReadError(readError.unavailable('down'), { target: 'runs' });
    assert.equal(error.code, 'resource_unavailable');
    assert.equal(error.target, 'runs');
  });

  test('anything else is internal_error with a fixed message that leaks nothing; the original is the cause', () => {
    const thrown = new TypeError('secret at /etc/thing');
    const error = toReadError(thrown, { target: 'dag', uri: 'dagu://dags/a' });
    assert.deepEqual(error.toObject(), {
      code: 'internal_error',
      message: 'The gateway failed unexpectedly while handling the read.',
      target: 'dag',
      uri: 'dagu://dags/a',
    });
    assert.equal(error.cause, thrown);
    assert.equal(toReadError('a string').code, 'internal_error');
  });
});
