import assert from 'node:assert/strict';
import type { ReadError } from '../../src/read/errors.ts';
import { readErrorFromWorkbook } from '../../src/read/targets/workbook.ts';
import { WorkbookError } from '../../src/workbook/errors.ts';

export interface ExpectedWorkbookError {
  code: string;
  message: string | RegExp;
  field?: string;
}

/** The contract error the workbook target makes of a workbook reader's rejection (a WorkbookError). */
export function workbookReadError(thrown: unknown): ReadError {
  assert.ok(thrown instanceof WorkbookError, `expected a WorkbookError, got ${String(thrown)}`);
  return readErrorFromWorkbook(thrown);
}

/** Asserts code, message (exact or pattern) and field of a rejection as the caller would see it. */
export function assertWorkbookError(thrown: unknown, expected: ExpectedWorkbookError): ReadError {
  const error = workbookReadError(thrown);
  assert.equal(error.code, expected.code);
  if (typeof expected.message === 'string') assert.equal(error.message, expected.message);
  else assert.match(error.message, expected.message);
  assert.equal(error.field, expected.field);
  return error;
}
