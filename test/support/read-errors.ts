import assert from 'node:assert/strict';
import { ReadError, type ToolErrorObject } from '../../src/read/errors.ts';

/** The error object `run` throws; fails the test when it throws anything else or nothing. */
export function errorOf(run: () => unknown): ToolErrorObject {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ReadError, `expected a ReadError, got ${String(error)}`);
    return error.toObject();
  }
  return assert.fail('expected a ReadError');
}

export type ExpectedError = Pick<ToolErrorObject, 'code' | 'field' | 'target' | 'uri'>;

/** Asserts code, field, target and uri exactly (absent means absent) and returns the error object. */
export function assertError(run: () => unknown, expected: ExpectedError): ToolErrorObject {
  const error = errorOf(run);
  assert.deepEqual(
    { code: error.code, field: error.field, target: error.target, uri: error.uri },
    { code: expected.code, field: expected.field, target: expected.target, uri: expected.uri },
  );
  return error;
}

/** The ReadError `promise` rejects with, asserting its code; fails when it resolves or throws anything else. */
export async function rejectsWith(promise: Promise<unknown>, code: string): Promise<ReadError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ReadError, `expected a ReadError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  return assert.fail(`expected ${code}`);
}
