/**
 * Files from an independent writer (openpyxl; encryption by msoffcrypto-tool): inline strings,
 * explicit `t="n"`, a date before 1900, a table, sheet-scoped names, the 1904 system.
 * Skipped, with the reason, when python3 lacks openpyxl or msoffcrypto-tool; under CI that fails.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import type { WorkbookModel } from '../../../src/workbook/model.ts';
import { readWorkbook } from '../../../src/workbook/read-workbook.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { workbookReadError } from '../../support/workbook-errors.ts';
import { fixtureDir } from '../../support/workbook-fixtures.ts';
import {
  PYTHON_PASSWORD,
  pythonUnavailable,
  writePythonFixtures,
} from '../../support/workbook-fixtures-python.ts';

const BOUNDS = loadConfig({}).workbook;
const skip = skipUnlessCI(pythonUnavailable());

let dir: string;
let cleanup: () => Promise<void>;

function read(name: string, password?: string): Promise<WorkbookModel> {
  return readWorkbook({ path: path.join(dir, name), name, password, bounds: BOUNDS });
}

describe('openpyxl and msoffcrypto-tool files', { skip }, () => {
  let plain: WorkbookModel;
  before(async () => {
    ({ dir, cleanup } = await fixtureDir('python'));
    writePythonFixtures(dir);
    plain = await read('openpyxl.xlsx');
  });
  after(() => cleanup?.());

  it('profiles the typed sheet, its hidden row and its table', () => {
    const people = plain.sheets[0]!;
    assert.equal(plain.date_system, '1900');
    assert.equal(people.range, 'People!A1:G5');
    assert.equal(people.hidden_rows, 1);
    assert.deepEqual(people.tables, [{ name: 'PeopleTable', range: 'People!A1:G5' }]);
    assert.deepEqual(people.types, {
      name: 'string',
      born: 'date',
      joined: 'datetime',
      score: 'number',
      rank: 'integer',
      active: 'boolean',
      code: 'string',
    });
    assert.deepEqual(people.sample?.[1], {
      _row: 3,
      name: 'Alan',
      born: '1912-06-23',
      joined: '2021-03-04T17:45:30',
      score: 88.25,
      rank: 2,
      active: false,
      code: '042',
    });
    // 1815-12-10 has no 1900-system serial Excel can show: openpyxl writes -30701, which stays a number.
    assert.equal(people.sample?.[0]?.born, -30701);
    assert.deepEqual(people.columns[1], {
      name: 'born',
      type: 'date',
      filled: 4,
      blank: 0,
      distinct: 4,
      min: '1906-12-09',
      max: '1969-12-28',
      odd: 1,
      odd_cells: [{ cell: 'B2', text: '-30701' }],
    });
    assert.deepEqual(people.columns[3], {
      name: 'score',
      type: 'number',
      filled: 4,
      blank: 0,
      distinct: 4,
      min: 88.25,
      max: 95,
      odd: 1,
      odd_cells: [{ cell: 'D5', text: 'n/a' }],
    });
    assert.deepEqual(people.columns[6]?.values, ['007', '042', '100']);
  });

  it('finds the header below a title, the hidden sheets and the scoped names', () => {
    assert.deepEqual(
      plain.sheets.map((s) => [s.name, s.hidden ?? false, s.header_row]),
      [
        ['People', false, 1],
        ['Titled', false, 3],
        ['Secret', true, 1],
        ['Deep', true, 1],
      ],
    );
    assert.deepEqual(plain.named_ranges, [
      { name: 'Scores', refers_to: 'People!$D$2:$D$5', scope: '' },
      { name: 'LocalTop', refers_to: 'People!$A$1', scope: 'People' },
    ]);
  });

  it('reads the 1904 date system', async () => {
    const mac = await read('openpyxl-1904.xlsx');
    assert.equal(mac.date_system, '1904');
    assert.deepEqual(mac.sheets[0]?.sample, [
      { _row: 2, day: '2024-01-15', stamp: '2024-01-15T08:30:00' },
      { _row: 3, day: '1904-01-02', stamp: '2000-02-29T12:00:00' },
    ]);
  });

  it('reads formulas without a cached value as empty cells, before and past the profile cap', async () => {
    const book = await read('openpyxl-formulas.xlsx');
    assert.deepEqual(book.warnings, []);
    const [long, short] = book.sheets;
    for (const [sheet, rows] of [
      [long!, 6000],
      [short!, 10],
    ] as const) {
      assert.equal(sheet.range, `${sheet.name}!A1:B${rows + 1}`);
      assert.equal(sheet.used_range, `${sheet.name}!A1:B${rows + 1}`);
      assert.equal(sheet.row_count, rows);
      assert.deepEqual(sheet.headers, ['id', 'double']);
      assert.deepEqual(sheet.types, { id: 'integer', double: 'string' });
      assert.deepEqual(sheet.columns[1], {
        name: 'double',
        type: 'string',
        filled: 0,
        blank: Math.min(rows, 5000),
        distinct: 0,
      });
      assert.deepEqual(sheet.sample?.[0], { _row: 2, id: 1, double: null });
    }
    assert.equal(long?.profile_truncated, true);
    assert.equal(short?.profile_truncated, undefined);
  });

  it('decrypts msoffcrypto-tool agile encryption to the same profile', async () => {
    const decrypted = await read('msoffcrypto.xlsx', PYTHON_PASSWORD);
    assert.deepEqual(decrypted.sheets, plain.sheets);
    await assert.rejects(read('msoffcrypto.xlsx', 'pa55 word'), (thrown: unknown) => {
      const error = workbookReadError(thrown);
      assert.equal(error.message, 'msoffcrypto.xlsx: workbook password is missing or incorrect');
      assert.equal(error.field, 'password');
      return true;
    });
  });
});
