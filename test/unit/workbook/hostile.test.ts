/** Hostile and broken inputs: each costs a fast, clean contract error, never memory or time. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, stat, symlink, truncate } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import CFB from 'cfb';
import { loadConfig } from '../../../src/config.ts';
import { WorkbookError } from '../../../src/workbook/errors.ts';
import type { WorkbookBounds } from '../../../src/workbook/model.ts';
import { readWorkbook } from '../../../src/workbook/read-workbook.ts';
import { assertWorkbookError, type ExpectedWorkbookError } from '../../support/workbook-errors.ts';
import { fixtureDir, writeSmallWorkbook } from '../../support/workbook-fixtures.ts';
import { put, rawXlsx, zip } from '../../support/workbook-fixtures-zip.ts';

const BOUNDS: WorkbookBounds = loadConfig({}).workbook;
let dir: string;
let cleanup: () => Promise<void>;
before(async () => {
  ({ dir, cleanup } = await fixtureDir('hostile'));
});
after(() => cleanup());

let counter = 0;
async function file(data: Buffer | string, name = `f-${++counter}.xlsx`): Promise<string> {
  return put(path.join(dir, name), data);
}

/** Reads `file` and checks the caller's error (code, exact message or pattern, field) and that it came fast. */
async function expectFailure(
  target: string,
  expected: ExpectedWorkbookError,
  bounds: Partial<WorkbookBounds> = {},
  withinMs = 3000,
): Promise<void> {
  const started = performance.now();
  await assert.rejects(
    readWorkbook({
      path: target,
      name: path.basename(target),
      password: undefined,
      bounds: { ...BOUNDS, ...bounds },
    }),
    (error: unknown) => {
      assertWorkbookError(error, expected);
      return true;
    },
  );
  const elapsed = performance.now() - started;
  assert.ok(elapsed < withinMs, `took ${Math.round(elapsed)} ms`);
}

const sheetWithText = (text: string) =>
  `<worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>${text}</t></is></c></row></sheetData></worksheet>`;

describe('zip bombs and lying archives', () => {
  const bomb = sheetWithText('a'.repeat(64 * 1024 * 1024));

  it('refuses a part whose declared size is over the cap before inflating it', async () => {
    const target = await file(rawXlsx({ sheets: [{ name: 'Bomb', xml: bomb }] }));
    await expectFailure(
      target,
      {
        code: 'resource_unavailable',
        message:
          /^f-\d+\.xlsx: workbook exceeds processing limits \(xl\/worksheets\/sheet1\.xml expands to 67108971 bytes, more than 16777216\)$/,
      },
      { maxSheetBytes: 16 * 1024 * 1024 },
    );
  });

  it('stops a 64 MB cell inside the size caps at the text-run guard', async () => {
    const target = await file(rawXlsx({ sheets: [{ name: 'Bomb', xml: bomb }] }));
    await expectFailure(target, {
      code: 'resource_unavailable',
      message:
        /workbook exceeds processing limits \(xl\/worksheets\/sheet1\.xml holds a text or tag longer than 1048576 bytes\)$/,
    });
  });

  it('stops an entry that inflates past the size it declares', async () => {
    const target = await file(
      zip([
        { name: '_rels/.rels', data: '<Relationships/>' },
        { name: 'xl/workbook.xml', data: bomb, declaredSize: 1000 },
      ]),
    );
    await expectFailure(target, {
      code: 'resource_unavailable',
      message:
        /: not a valid \.xlsx workbook \(zip entry xl\/workbook\.xml does not match its declared size\)$/,
    });
  });

  it('refuses more zip entries than allowed', async () => {
    const entries = Array.from({ length: 30 }, (_, i) => ({ name: `x/${i}.xml`, data: '<x/>' }));
    const target = await file(zip(entries));
    await expectFailure(
      target,
      {
        code: 'resource_unavailable',
        message: /exceeds processing limits \(30 zip entries, more than 20\)$/,
      },
      { maxZipEntries: 20 },
    );
  });

  it('refuses a file over the size cap', async () => {
    const target = await writeSmallWorkbook(path.join(dir, 'small.xlsx'));
    await expectFailure(
      target,
      {
        code: 'resource_unavailable',
        message: /^small\.xlsx: workbook exceeds processing limits \(file is \d+ bytes, more than 1000\)$/,
      },
      { maxFileBytes: 1000 },
    );
  });
});

describe('shared strings', () => {
  const many = Array.from({ length: 200 }, (_, i) => `s${i}`);

  it('refuses a shared-strings part over the part cap', async () => {
    const target = await file(rawXlsx({ sheets: [{ name: 'S' }], sharedStrings: many }));
    await expectFailure(
      target,
      {
        code: 'resource_unavailable',
        message: /exceeds processing limits \(xl\/sharedStrings\.xml expands to \d+ bytes, more than 2000\)$/,
      },
      { maxPartBytes: 2000 },
    );
  });

  it('refuses more shared strings than allowed, declared or counted', async () => {
    const counted = await file(rawXlsx({ sheets: [{ name: 'S' }], sharedStrings: many }));
    await expectFailure(
      counted,
      {
        code: 'resource_unavailable',
        message: /exceeds processing limits \(more than 100 shared strings\)$/,
      },
      { maxSharedStrings: 100 },
    );
    const declared = await file(
      rawXlsx({
        sheets: [{ name: 'S' }],
        sharedStringsXml: '<sst uniqueCount="5000000"><si><t>a</t></si></sst>',
      }),
    );
    await expectFailure(
      declared,
      {
        code: 'resource_unavailable',
        message: /exceeds processing limits \(5000000 shared strings, more than 100\)$/,
      },
      { maxSharedStrings: 100 },
    );
  });

  it('refuses a DOCTYPE (billion laughs) in any part', async () => {
    const laughs =
      '<?xml version="1.0"?><!DOCTYPE sst [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>' +
      '<sst><si><t>&b;</t></si></sst>';
    const target = await file(rawXlsx({ sheets: [{ name: 'S' }], sharedStringsXml: laughs }));
    await expectFailure(target, {
      code: 'resource_unavailable',
      message: /: not a valid \.xlsx workbook \(xl\/sharedStrings\.xml declares a DOCTYPE\)$/,
    });
  });
});

describe('files that are not workbooks', () => {
  it('a truncated workbook', async () => {
    const target = await writeSmallWorkbook(path.join(dir, 'truncated.xlsx'));
    await truncate(target, 2000);
    await expectFailure(target, {
      code: 'resource_unavailable',
      message: 'truncated.xlsx: not a valid .xlsx workbook (not a zip archive or truncated)',
    });
  });

  it('a text file named .xlsx', async () => {
    const target = await file('name,count\nOslo,3\n', 'notes.xlsx');
    await expectFailure(target, {
      code: 'resource_unavailable',
      message: 'notes.xlsx: not a valid .xlsx workbook (not a zip archive)',
    });
  });

  it('an empty file', async () => {
    const target = await file(Buffer.alloc(0), 'empty.xlsx');
    await expectFailure(target, {
      code: 'resource_unavailable',
      message: 'empty.xlsx: not a valid .xlsx workbook (empty file)',
    });
  });

  it('a legacy .xls renamed .xlsx', async () => {
    const container = CFB.utils.cfb_new();
    CFB.utils.cfb_add(container, 'Workbook', Buffer.alloc(4096, 9));
    const target = await file(
      Buffer.from(CFB.write(container, { type: 'buffer' }) as Uint8Array),
      'legacy.xlsx',
    );
    await expectFailure(target, {
      code: 'resource_unavailable',
      message: 'legacy.xlsx: not a valid .xlsx workbook (a legacy .xls workbook; save it as .xlsx)',
    });
  });

  it('a directory named .xlsx', async () => {
    const target = path.join(dir, 'folder.xlsx');
    await mkdir(target);
    await expectFailure(target, {
      code: 'invalid_tool_input',
      message: 'folder.xlsx: path is a directory, not a workbook',
      field: 'path',
    });
  });

  it('a zip with no workbook part', async () => {
    const target = await file(zip([{ name: 'readme.txt', data: 'hello' }]), 'other.xlsx');
    await expectFailure(target, {
      code: 'resource_unavailable',
      message: 'other.xlsx: not a valid .xlsx workbook (no workbook part)',
    });
  });

  it('a sheet with corrupt XML', async () => {
    const target = await file(
      rawXlsx({
        sheets: [
          { name: 'Bad', xml: '<worksheet><sheetData><row><c><v>1</v></row></sheetData></worksheet>' },
        ],
      }),
      'corrupt.xlsx',
    );
    await expectFailure(target, {
      code: 'resource_unavailable',
      message: 'corrupt.xlsx: not a valid .xlsx workbook (malformed XML in xl/worksheets/sheet1.xml)',
    });
  });

  it('a missing file', async () => {
    await expectFailure(path.join(dir, 'nope.xlsx'), {
      code: 'resource_not_found',
      message: 'nope.xlsx: workbook not found',
    });
  });

  it('garbage that looks like an OLE container', async () => {
    const head = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
    const target = await file(Buffer.concat([head, Buffer.alloc(600, 0xff)]), 'ole.xlsx');
    await expectFailure(target, {
      code: 'resource_unavailable',
      message: /^ole\.xlsx: not a valid \.xlsx workbook \(/,
    });
  });
});

describe('a file swapped between the checks and the read', () => {
  it('a FIFO is refused at once instead of blocking an I/O thread', async () => {
    const fifo = path.join(dir, 'pipe.xlsx');
    execFileSync('mkfifo', [fifo]);
    await expectFailure(fifo, { code: 'resource_unavailable', message: /not a regular file/ });
  });

  it('a symbolic link at the resolved path is refused', async () => {
    const real = await writeSmallWorkbook(path.join(dir, 'real.xlsx'));
    const link = path.join(dir, 'link.xlsx');
    await symlink(real, link);
    await expectFailure(link, { code: 'resource_unavailable', message: /changed while it was being opened/ });
  });

  it('another file than the one checked (device and inode differ) is refused', async () => {
    const checked = await writeSmallWorkbook(path.join(dir, 'checked.xlsx'));
    const info = await stat(checked);
    await assert.rejects(
      readWorkbook({
        path: checked,
        file: { dev: info.dev, ino: info.ino + 1 },
        name: 'checked.xlsx',
        password: undefined,
        bounds: BOUNDS,
      }),
      (error: unknown) =>
        error instanceof WorkbookError && /changed while it was being opened/.test(error.message),
    );
    const same = await readWorkbook({
      path: checked,
      file: { dev: info.dev, ino: info.ino },
      name: 'checked.xlsx',
      password: undefined,
      bounds: BOUNDS,
    });
    assert.equal(same.sheets.length, 1);
  });
});
