/**
 * The streaming SheetProfiler (src/workbook/sheet-profile.ts) fed row by row, as the sheet reader
 * feeds it: RowCells reuse, when it stops wanting decoded values, which row becomes the header, the
 * truncation mark past the profile cap, and finish()'s extras. The profile it computes (headers,
 * types, samples) is tested through profileSheet in profile.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CellValue, WorkbookTable } from '../../../src/workbook/model.ts';
import { PROFILE_ROWS, RowCells, SheetProfiler } from '../../../src/workbook/sheet-profile.ts';

const OPTIONS = { dateSystem: '1900' as const, maxColumns: 512 };

/** Feeds one row of values (column i holds values[i]; undefined leaves the cell out). */
function feed(
  profiler: SheetProfiler,
  cells: RowCells,
  row: number,
  values: (CellValue | undefined)[],
  hidden = false,
) {
  cells.reset();
  values.forEach((value, col) => {
    if (value !== undefined) cells.push(col, value);
  });
  profiler.addRow(row, hidden, cells);
}

describe('RowCells', () => {
  it('reset() empties it for the next row while keeping its arrays', () => {
    const cells = new RowCells();
    cells.push(0, 'a');
    cells.push(3, 1, '#N/A');
    assert.equal(cells.length, 2);
    assert.deepEqual([cells.cols[1], cells.values[1], cells.errors[1]], [3, 1, '#N/A']);
    const { cols } = cells;
    cells.reset();
    assert.equal(cells.length, 0);
    cells.push(5, true);
    assert.equal(cells.cols, cols);
    assert.deepEqual(
      [cells.length, cells.cols[0], cells.values[0], cells.errors[0]],
      [1, 5, true, undefined],
    );
  });
});

describe('SheetProfiler', () => {
  it('wants values until a header is found and PROFILE_ROWS rows are kept under it', () => {
    const profiler = new SheetProfiler('S', OPTIONS);
    const cells = new RowCells();
    assert.equal(profiler.wantsValues, true);
    feed(profiler, cells, 1, ['title']);
    assert.equal(profiler.wantsValues, true, 'a one-value row is only a candidate header');
    feed(profiler, cells, 2, ['id', 'n']);
    for (let r = 3; r < 3 + PROFILE_ROWS - 1; r++) feed(profiler, cells, r, [r, 1]);
    assert.equal(profiler.wantsValues, true);
    feed(profiler, cells, 3 + PROFILE_ROWS - 1, [0, 0]);
    assert.equal(profiler.wantsValues, false);
    feed(profiler, cells, 3 + PROFILE_ROWS, [0, 0]);
    const { sheet } = profiler.finish();
    assert.equal(sheet.header_row, 2, 'the two-value row replaced the candidate');
    assert.deepEqual(sheet.headers, ['id', 'n']);
    assert.equal(sheet.row_count, PROFILE_ROWS + 1);
    assert.equal(sheet.profile_truncated, true);
  });

  it('a one-value header stays when no wider row follows; blank rows count only in the used range', () => {
    const profiler = new SheetProfiler('S', OPTIONS);
    const cells = new RowCells();
    feed(profiler, cells, 2, [undefined, 'only']);
    feed(profiler, cells, 3, [undefined, 'x']);
    feed(profiler, cells, 5, [undefined, undefined, '  ']);
    const { sheet } = profiler.finish();
    assert.equal(sheet.header_row, 2);
    assert.deepEqual(sheet.headers, ['only']);
    assert.equal(sheet.row_count, 1);
    assert.equal(sheet.range, 'S!B2:B3');
    assert.equal(sheet.used_range, 'S!B2:C5');
    assert.equal(sheet.profile_truncated, undefined);
  });

  it('counts hidden rows under the header, and finish() adds the hidden flag and tables it is given', () => {
    const profiler = new SheetProfiler('Data', OPTIONS);
    const cells = new RowCells();
    feed(profiler, cells, 1, ['a', 'b']);
    feed(profiler, cells, 2, [1, 2], true);
    feed(profiler, cells, 3, [3, 4]);
    const table: WorkbookTable = { name: 'T1', range: 'Data!A1:B3' };
    const { sheet } = profiler.finish({ hidden: true, tables: [table] });
    assert.equal(sheet.hidden, true);
    assert.equal(sheet.hidden_rows, 1);
    assert.deepEqual(sheet.tables, [table]);
  });

  it('a sheet with no value has no header and an A1 used range', () => {
    const { sheet, warnings } = new SheetProfiler('Empty', OPTIONS).finish();
    assert.deepEqual(
      [sheet.used_range, sheet.range, sheet.header_row, sheet.row_count, sheet.headers, warnings],
      ['Empty!A1:A1', 'Empty!A1:A1', 0, 0, [], []],
    );
  });
});
