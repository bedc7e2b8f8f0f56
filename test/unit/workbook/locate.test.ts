/** Workbook paths checked before any worker starts: roots, extension, what the path is. */
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { WorkbookError } from '../../../src/workbook/errors.ts';
import { locateWorkbook } from '../../../src/workbook/locate.ts';
import { tempDir } from '../../support/temp.ts';

const kindAndMessage = (kind: string, message: string) => (error: unknown) =>
  error instanceof WorkbookError && error.kind === kind && error.message === message;

describe('locateWorkbook', () => {
  const base = realpathSync(tempDir('locate-'));
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  mkdirSync(join(root, 'sub', 'dir.xlsx'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'sub', 'book.xlsx'), 'bytes');
  writeFileSync(join(outside, 'secret.xlsx'), 'bytes');
  symlinkSync(join(outside, 'secret.xlsx'), join(root, 'link.xlsx'));

  test('a relative path resolves against the first root; size and file identity come with it', async () => {
    const found = await locateWorkbook('sub/book.xlsx', [root]);
    assert.equal(found.resolved, join(root, 'sub', 'book.xlsx'));
    assert.equal(found.name, 'book.xlsx');
    assert.equal(found.size, 5);
    assert.equal(typeof found.file.ino, 'number');
    assert.equal((await locateWorkbook(join(root, 'sub', 'book.xlsx'), [outside, root])).size, 5);
  });

  test('no roots: workbook reads are off', async () => {
    await assert.rejects(
      locateWorkbook('sub/book.xlsx', []),
      (error: unknown) => error instanceof WorkbookError && error.kind === 'disabled',
    );
    await assert.rejects(locateWorkbook('sub/book.xlsx', undefined), WorkbookError);
  });

  test('the extension is checked first, case-insensitively', async () => {
    await assert.rejects(
      locateWorkbook('sub/book.xls', [root]),
      kindAndMessage('bad_path', 'book.xls: only .xlsx and .xlsm workbooks are supported; save as .xlsx'),
    );
    // An upper-case extension passes the check and the path is looked up (and missing here).
    await assert.rejects(
      locateWorkbook('sub/BOOK.XLSX', [root]),
      kindAndMessage('not_found', 'BOOK.XLSX: workbook not found'),
    );
  });

  test('outside every root, by .. or by a symbolic link, the same answer whether the file exists or not', async () => {
    const outsideAnswer = kindAndMessage(
      'bad_path',
      'secret.xlsx: path is outside the allowed workbook folders',
    );
    await assert.rejects(locateWorkbook('../outside/secret.xlsx', [root]), outsideAnswer);
    await assert.rejects(
      locateWorkbook('link.xlsx', [root]),
      kindAndMessage('bad_path', 'link.xlsx: path is outside the allowed workbook folders'),
    );
    await assert.rejects(
      locateWorkbook('../outside/missing.xlsx', [root]),
      kindAndMessage('bad_path', 'missing.xlsx: path is outside the allowed workbook folders'),
    );
  });

  test('inside a root: a missing file is not_found, a directory bad_path', async () => {
    await assert.rejects(
      locateWorkbook('nope.xlsx', [root]),
      kindAndMessage('not_found', 'nope.xlsx: workbook not found'),
    );
    await assert.rejects(
      locateWorkbook('sub/dir.xlsx', [root]),
      kindAndMessage('bad_path', 'dir.xlsx: path is a directory, not a workbook'),
    );
  });
});
