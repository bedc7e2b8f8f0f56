/** The workbook reader's failures: a kind, a message naming the file, nothing leaked. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  fileError,
  toWorkbookError,
  WorkbookError,
  WorkbookFormatError,
  WorkbookLimitError,
  workbookErrors,
} from '../../../src/workbook/errors.ts';

const errno = (code: string) => Object.assign(new Error(`${code}: /secret/path`), { code });

test('fs errors: missing is not_found, a directory bad_path, known causes in words, others a read error', () => {
  assert.equal(fileError(errno('ENOENT'), 'a.xlsx').kind, 'not_found');
  assert.equal(fileError(errno('ENOTDIR'), 'a.xlsx').kind, 'not_found');
  assert.equal(fileError(errno('EISDIR'), 'a.xlsx').message, 'a.xlsx: path is a directory, not a workbook');
  assert.equal(
    fileError(errno('EACCES'), 'a.xlsx').message,
    'a.xlsx: workbook cannot be opened (permission denied)',
  );
  assert.equal(fileError(errno('EBUSY'), 'a.xlsx').kind, 'unreadable');
  assert.equal(fileError(errno('EIO'), 'a.xlsx').message, 'a.xlsx: workbook cannot be opened (read error)');
  assert.equal(fileError('not an error', 'a.xlsx').message, 'a.xlsx: workbook cannot be opened (read error)');
});

test('pipeline errors become WorkbookErrors with the file name; unexpected ones leak nothing', () => {
  const limit = toWorkbookError(new WorkbookLimitError('more than 5 sheets'), 'b.xlsx');
  assert.deepEqual(limit.toFailure(), {
    kind: 'too_large',
    message: 'b.xlsx: workbook exceeds processing limits (more than 5 sheets)',
  });
  const format = toWorkbookError(new WorkbookFormatError('no workbook part'), 'b.xlsx');
  assert.deepEqual(format.toFailure(), {
    kind: 'unreadable',
    message: 'b.xlsx: not a valid .xlsx workbook (no workbook part)',
  });
  const cause = new TypeError('x is undefined at /srv/secret.js');
  const unexpected = toWorkbookError(cause, 'b.xlsx');
  assert.equal(unexpected.kind, 'failed');
  assert.equal(unexpected.message, 'b.xlsx: the workbook reader failed unexpectedly');
  assert.equal(unexpected.cause, cause);
  const known = workbookErrors.password('c.xlsx');
  assert.equal(toWorkbookError(known, 'other.xlsx'), known);
});

test('each constructor has its kind', () => {
  const kinds = [
    workbookErrors.disabled(),
    workbookErrors.extension('a.xls'),
    workbookErrors.outsideRoots('a.xlsx'),
    workbookErrors.busy('a.xlsx', 'queue full'),
    workbookErrors.unsupportedEncryption(),
  ].map((error) => (error instanceof WorkbookError ? error.kind : 'not a WorkbookError'));
  assert.deepEqual(kinds, ['disabled', 'bad_path', 'bad_path', 'busy', 'unreadable']);
  assert.match(workbookErrors.busy('a.xlsx', 'queue full').message, /busy \(queue full\); try again later$/);
});
