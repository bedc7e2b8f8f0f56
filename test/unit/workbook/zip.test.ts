/** The zip container: OPC part names, the entry cap, declared sizes, and parts that lie about theirs. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WorkbookFormatError, WorkbookLimitError } from '../../../src/workbook/errors.ts';
import { partKey, ZipPackage } from '../../../src/workbook/zip.ts';
import { zip } from '../../support/workbook-fixtures-zip.ts';

const LIMITS = { maxZipEntries: 10 };

const fails =
  (kind: typeof WorkbookFormatError | typeof WorkbookLimitError, message: RegExp) => (error: unknown) =>
    error instanceof kind && message.test(error.message);

test('part names are case-insensitive and have no leading slash', () => {
  assert.equal(partKey('/xl/Workbook.XML'), 'xl/workbook.xml');
  assert.equal(partKey('//a'), 'a');
});

describe('ZipPackage', () => {
  test('reads deflated and stored parts by any spelling of their name', async () => {
    const pkg = await ZipPackage.fromBuffer(
      zip([
        { name: 'xl/workbook.xml', data: '<workbook>é</workbook>' },
        { name: 'docProps/app.xml', data: 'stored', store: true },
      ]),
      LIMITS,
    );
    try {
      assert.ok(pkg.has('/XL/Workbook.xml'));
      assert.ok(!pkg.has('xl/styles.xml'));
      assert.equal(await pkg.readText('xl/workbook.xml', 1000), '<workbook>é</workbook>');
      assert.equal(await pkg.readText('docProps/app.xml', 1000), 'stored');
    } finally {
      pkg.close();
    }
  });

  test('a missing part, a part over its byte cap, and a part that inflates past its declared size fail', async () => {
    const pkg = await ZipPackage.fromBuffer(
      zip([
        { name: 'big.xml', data: 'x'.repeat(5000) },
        { name: 'liar.xml', data: 'y'.repeat(5000), declaredSize: 100 },
      ]),
      LIMITS,
    );
    try {
      await assert.rejects(
        pkg.readText('none.xml', 10),
        fails(WorkbookFormatError, /part none\.xml is missing/),
      );
      await assert.rejects(
        pkg.readText('big.xml', 1000),
        fails(WorkbookLimitError, /big\.xml expands to 5000 bytes, more than 1000/),
      );
      await assert.rejects(
        pkg.readText('liar.xml', 1000),
        fails(WorkbookFormatError, /zip entry liar\.xml does not match its declared size/),
      );
    } finally {
      pkg.close();
    }
  });

  test('more entries than allowed is a limit error; bytes that are no zip a format error', async () => {
    const many = zip(Array.from({ length: 11 }, (_, index) => ({ name: `p${index}.xml`, data: '<a/>' })));
    await assert.rejects(
      ZipPackage.fromBuffer(many, LIMITS),
      fails(WorkbookLimitError, /11 zip entries, more than 10/),
    );
    await assert.rejects(
      ZipPackage.fromBuffer(Buffer.from('not a zip at all, just text'), LIMITS),
      fails(WorkbookFormatError, /not a zip archive or truncated/),
    );
  });
});
