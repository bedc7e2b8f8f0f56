/** The reader end to end on files written by exceljs (in-process; the worker is tested separately). */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import type { WorkbookBounds, WorkbookModel } from '../../../src/workbook/model.ts';
import { readWorkbook } from '../../../src/workbook/read-workbook.ts';
import {
  fixtureDir,
  write1904Workbook,
  writeFeatureWorkbook,
  writeLongSheet,
  writeXlsm,
} from '../../support/workbook-fixtures.ts';

const BOUNDS: WorkbookBounds = loadConfig({}).workbook;

async function read(file: string): Promise<WorkbookModel> {
  return readWorkbook({ path: file, name: path.basename(file), password: undefined, bounds: BOUNDS });
}

let dir: string;
let cleanup: () => Promise<void>;
let feature: WorkbookModel;

before(async () => {
  ({ dir, cleanup } = await fixtureDir('reader'));
  feature = await read(await writeFeatureWorkbook(path.join(dir, 'feature.xlsx')));
});
after(() => cleanup());

const sheet = (name: string) => {
  const found = feature.sheets.find((s) => s.name === name);
  assert.ok(found, `sheet ${name}`);
  return found;
};

describe('feature workbook (exceljs)', () => {
  it('lists the sheets in workbook order with the 1900 date system', () => {
    assert.equal(feature.date_system, '1900');
    assert.equal(feature.path, path.join(dir, 'feature.xlsx'));
    assert.deepEqual(
      feature.sheets.map((s) => [s.name, s.hidden ?? false]),
      [
        ['Typed', false],
        ['Report', false],
        ['Hidden', true],
        ['VeryHidden', true],
        ['Filtered', false],
        ['Empty', false],
        ['Values', false],
      ],
    );
  });

  it('types the columns: integers, decimals, dates, date-times, booleans, blanks, codes, odd text', () => {
    const typed = sheet('Typed');
    assert.equal(typed.used_range, 'Typed!A1:J7');
    assert.equal(typed.range, 'Typed!A1:J7');
    assert.equal(typed.header_row, 1);
    assert.equal(typed.row_count, 6);
    assert.deepEqual(typed.types, {
      id: 'integer',
      amount: 'number',
      day: 'date',
      stamp: 'datetime',
      flag: 'boolean',
      blank: 'string',
      code: 'string',
      qty: 'integer',
      wide: 'integer',
      note: 'string',
    });
    assert.deepEqual(typed.columns, [
      { name: 'id', type: 'integer', filled: 6, blank: 0, distinct: 6, min: 1, max: 6 },
      { name: 'amount', type: 'number', filled: 6, blank: 0, distinct: 6, min: -0.5, max: 10 },
      { name: 'day', type: 'date', filled: 6, blank: 0, distinct: 6, min: '2023-12-31', max: '2024-06-01' },
      {
        name: 'stamp',
        type: 'datetime',
        filled: 6,
        blank: 0,
        distinct: 6,
        min: '2023-12-31T00:00:01',
        max: '2024-06-01T12:00:00',
      },
      { name: 'flag', type: 'boolean', filled: 6, blank: 0, distinct: 2, values: ['true', 'false'] },
      { name: 'blank', type: 'string', filled: 0, blank: 6, distinct: 0 },
      {
        name: 'code',
        type: 'string',
        filled: 6,
        blank: 0,
        distinct: 4,
        values: ['00123', '00042', '01000', '00001'],
      },
      {
        name: 'qty',
        type: 'integer',
        filled: 6,
        blank: 0,
        distinct: 6,
        min: 10,
        max: 1234,
        odd: 1,
        odd_cells: [{ cell: 'H3', text: 'n/a' }],
      },
      {
        name: 'wide',
        type: 'integer',
        filled: 6,
        blank: 0,
        distinct: 6,
        min: 5,
        max: 123,
        odd: 1,
        odd_cells: [{ cell: 'I5', text: 'seven' }],
      },
      { name: 'note', type: 'string', filled: 4, blank: 2, distinct: 3, values: ['alpha', 'beta', 'delta'] },
    ]);
    assert.equal(typed.sample?.length, 5);
    assert.deepEqual(typed.sample?.[1], {
      _row: 3,
      id: 2,
      amount: 2.25,
      day: '2024-02-29',
      stamp: '2024-02-29T23:59:59',
      flag: false,
      blank: null,
      code: '00042',
      qty: 'n/a',
      wide: '１２３',
      note: 'beta',
    });
  });

  it('finds a header on row 3 below a title, names duplicate and empty headers, reads formulas and rich text', () => {
    const report = sheet('Report');
    assert.equal(report.used_range, 'Report!A1:F7');
    assert.equal(report.range, 'Report!A3:F7');
    assert.equal(report.header_row, 3);
    assert.equal(report.row_count, 4);
    assert.deepEqual(report.headers, ['name', 'name_2', 'C', 'qty', 'multi line', 'formula']);
    assert.deepEqual(report.sample, [
      { _row: 4, name: 'north', name_2: 'n1', C: 'x', qty: 10, 'multi line': 'a', formula: 20 },
      { _row: 5, name: 'south', name_2: 'n2', C: null, qty: null, 'multi line': 'b', formula: 'SOUTH' },
      { _row: 6, name: 'east', name_2: 'n3', C: null, qty: 30, 'multi line': 'rich text', formula: true },
      { _row: 7, name: 'west', name_2: 'n4', C: null, qty: 40, 'multi line': 'd', formula: null },
    ]);
    assert.deepEqual(report.types, {
      name: 'string',
      name_2: 'string',
      C: 'string',
      qty: 'integer',
      'multi line': 'string',
      formula: 'string',
    });
    assert.deepEqual(report.columns[3], {
      name: 'qty',
      type: 'integer',
      filled: 3,
      blank: 1,
      distinct: 3,
      min: 10,
      max: 40,
    });
  });

  it('marks hidden and very hidden sheets', () => {
    assert.equal(sheet('Hidden').hidden, true);
    assert.equal(sheet('VeryHidden').hidden, true);
    assert.deepEqual(sheet('VeryHidden').headers, ['secret', 'value']);
    assert.equal('hidden' in sheet('Typed'), false);
  });

  it('counts filtered and hand-hidden rows and lists the table', () => {
    const filtered = sheet('Filtered');
    assert.equal(filtered.hidden_rows, 3);
    assert.equal(filtered.row_count, 6);
    assert.deepEqual(filtered.tables, [{ name: 'Orders', range: 'Filtered!A1:C7' }]);
    assert.deepEqual(filtered.columns[1], {
      name: 'region',
      type: 'string',
      filled: 6,
      blank: 0,
      distinct: 3,
      values: ['north', 'south', 'east'],
    });
  });

  it('reports an empty sheet with header_row 0 and no sample', () => {
    assert.deepEqual(sheet('Empty'), {
      name: 'Empty',
      used_range: 'Empty!A1:A1',
      range: 'Empty!A1:A1',
      header_row: 0,
      headers: [],
      types: {},
      row_count: 0,
      columns: [],
      tables: [],
    });
  });

  it('lists up to 12 repeated values, none for 13 or for unique ids, cut at 40 code points', () => {
    const values = sheet('Values');
    const byName = Object.fromEntries(values.columns.map((c) => [c.name, c]));
    assert.equal(byName.id?.values, undefined);
    assert.equal(byName.id?.distinct, 26);
    assert.deepEqual(byName.status?.values, ['closed', 'pending', 'open']);
    assert.equal(byName.twelve?.distinct, 12);
    assert.equal(byName.twelve?.values?.length, 12);
    assert.equal(byName.thirteen?.distinct, 13);
    assert.equal(byName.thirteen?.values, undefined);
    // Two distinct keys that share their first 39 code points: both listed, both cut.
    assert.deepEqual(byName.long?.values, [
      'The quick brown fox jumps over the lazy…',
      'The quick brown fox jumps over the lazy…',
    ]);
    assert.equal(byName.unique_long?.values, undefined);
    assert.equal(values.sample?.[0]?.long, 'The quick brown fox jumps over the lazy dog again and again!');
  });

  it('lists workbook- and sheet-scoped names as written, constants included', () => {
    assert.deepEqual(feature.named_ranges, [
      { name: 'Amounts', refers_to: 'Typed!$B$2:$B$7', scope: '' },
      { name: 'Title', refers_to: 'Report!$A$1', scope: 'Report' },
      { name: 'TaxRate', refers_to: '0.2', scope: '' },
    ]);
  });

  it('warns per sheet with the cell address', () => {
    assert.deepEqual(feature.warnings, [
      'Report!B3: duplicate header "name"; column named name_2',
      'Report!C3: header is empty; column named C',
      'Report!D5: error value #N/A',
      'Report!F7: error value #DIV/0!',
    ]);
  });
});

describe('other workbooks (exceljs)', () => {
  it('reads the 1904 date system', async () => {
    const model = await read(await write1904Workbook(path.join(dir, 'dates-1904.xlsx')));
    assert.equal(model.date_system, '1904');
    const dates = model.sheets[0]!;
    assert.deepEqual(dates.sample, [
      { _row: 2, day: '2024-01-15', stamp: '2024-01-15T08:30:00', clock: '18:00:00' },
      { _row: 3, day: '1904-01-01', stamp: '2000-02-29T12:00:00', clock: '12:00:00' },
    ]);
    assert.deepEqual(dates.types, { day: 'date', stamp: 'datetime', clock: 'string' });
  });

  it('reads an .xlsm like an .xlsx', async () => {
    const model = await read(await writeXlsm(path.join(dir, 'macro.xlsm')));
    assert.deepEqual(model.sheets[0]?.sample, [{ _row: 2, a: 1, b: 'x' }]);
  });

  it('profiles 5000 of 7000 rows, counts them all, and counts hidden rows among the profiled ones', async () => {
    const model = await read(await writeLongSheet(path.join(dir, 'long.xlsx'), 7000));
    const long = model.sheets[0]!;
    assert.equal(long.row_count, 7000);
    assert.equal(long.range, 'Long!A1:C7001');
    assert.equal(long.used_range, 'Long!A1:C7001');
    assert.equal(long.profile_truncated, true);
    // Rows 1000, 2000, …, 7000 are hidden; 5 of them are among the 5000 profiled.
    assert.equal(long.hidden_rows, 5);
    assert.deepEqual(long.columns[0], {
      name: 'n',
      type: 'integer',
      filled: 5000,
      blank: 0,
      distinct: 1000,
      min: 1,
      max: 5000,
    });
    assert.deepEqual(long.columns[1], {
      name: 'parity',
      type: 'string',
      filled: 5000,
      blank: 0,
      distinct: 2,
      values: ['odd', 'even'],
    });
  });
});
