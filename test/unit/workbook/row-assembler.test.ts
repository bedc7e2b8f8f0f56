/**
 * RowAssembler (src/workbook/row-assembler.ts) on its own: sheet XML parsed by the project's saxes
 * parser drives it, and a profiler that records every row shows the typed cells it assembles, the
 * cells it sees only as blank or non-blank past the profile cap, and the sheets it stops with
 * SheetDataError. The whole reader around it is tested in sheet-skim.test.ts and read-workbook.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CellValue } from '../../../src/workbook/model.ts';
import { RowAssembler, type SheetContext, SheetDataError } from '../../../src/workbook/row-assembler.ts';
import { SharedStrings } from '../../../src/workbook/shared-strings.ts';
import { type RowCells, SheetProfiler } from '../../../src/workbook/sheet-profile.ts';
import { createParser } from '../../../src/workbook/xml.ts';

interface Row {
  row: number;
  hidden: boolean;
  cols: number[];
  values: CellValue[];
  errors: (string | undefined)[];
}

/** A profiler that records each row as given, and says whether it wants values. */
class RecordingProfiler extends SheetProfiler {
  readonly rows: Row[] = [];
  wants = true;
  constructor() {
    super('S', { dateSystem: '1900', maxColumns: 512 });
  }
  override get wantsValues(): boolean {
    return this.wants;
  }
  override addRow(row: number, hidden: boolean, cells: RowCells): void {
    // RowCells reuses its arrays between rows: only the first `length` entries are this row's.
    const n = cells.length;
    this.rows.push({
      row,
      hidden,
      cols: cells.cols.slice(0, n),
      values: cells.values.slice(0, n),
      errors: cells.errors.slice(0, n),
    });
  }
}

function context(strings: string[] = [], maxCellChars = 100): SheetContext {
  const shared = new SharedStrings();
  for (const text of strings) shared.add(text, false);
  return { strings: shared, dateKinds: [null, 'date', 'time', 'datetime'], dateSystem: '1900', maxCellChars };
}

function assemble(sheetData: string, ctx = context(), profiler = new RecordingProfiler()) {
  const assembler = new RowAssembler(ctx, profiler);
  const parser = createParser('test', {
    open: (local, tag) => assembler.openTag(local, tag.name, tag.attributes),
    close: (local) => assembler.close(local),
    text: (text) => assembler.onText(text),
  });
  parser.write(`<worksheet><sheetData>${sheetData}</sheetData><after/></worksheet>`).close();
  return { assembler, profiler };
}

describe('RowAssembler', () => {
  it('types each cell: numbers, dates by format, shared and inline strings, booleans, ISO dates, errors', () => {
    const { assembler, profiler } = assemble(
      [
        '<row r="2" hidden="1">',
        '<c r="A2"><v>1.5</v></c>',
        '<c r="B2" s="1"><v>45000</v></c>',
        '<c r="C2" t="s"><v>1</v></c>',
        '<c r="D2" t="inlineStr"><is><r><t>in</t></r><r><t>line</t></r><rPh><t>ignored</t></rPh></is></c>',
        '<c r="E2" t="b"><v>1</v></c>',
        '<c r="F2" t="d"><v>2024-02-29T00:00:00Z</v></c>',
        '<c r="G2" t="e"><v>#DIV/0!</v></c>',
        '<c r="H2" t="str"><f>A1</f><v>x_x0041_</v></c>',
        '<c r="I2"><f>A1</f><v></v></c>',
        '<c><v>7</v></c>',
        '</row>',
      ].join(''),
      context(['zero', 'one']),
    );
    assert.equal(assembler.done, true);
    assert.deepEqual(profiler.rows, [
      {
        row: 2,
        hidden: true,
        cols: [0, 1, 2, 3, 4, 5, 6, 7, 9],
        values: [1.5, '2023-03-15', 'one', 'inline', true, '2024-02-29', null, 'xA', 7],
        errors: [
          undefined,
          undefined,
          undefined,
          undefined,
          undefined,
          undefined,
          '#DIV/0!',
          undefined,
          undefined,
        ],
      },
    ]);
  });

  it('numbers rows and cells without an address after the previous ones, an empty row passing as no cells', () => {
    const { profiler } = assemble(
      '<row><c><v>1</v></c><c r="C1"><v>2</v></c></row><row/><row><c><v>3</v></c></row>',
    );
    assert.deepEqual(
      profiler.rows.map(({ row, cols, values }) => [row, cols, values]),
      [
        [1, [0, 2], [1, 2]],
        [2, [], []],
        [3, [0], [3]],
      ],
    );
  });

  it('reports bad values as errors of their cells, not of the sheet', () => {
    const { profiler } = assemble('<row><c><v>abc</v></c><c t="s"><v>9</v></c></row>', context(['only']));
    assert.deepEqual(profiler.rows[0]?.values, [null, null]);
    assert.deepEqual(profiler.rows[0]?.errors, ['invalid number', 'invalid shared string index']);
  });

  it('cuts text longer than the limit and warns with the cell address', () => {
    const { profiler } = assemble(
      '<row r="4"><c r="B4" t="inlineStr"><is><t>abcdefgh</t></is></c></row>',
      context([], 3),
    );
    assert.deepEqual(profiler.rows[0]?.values, ['abc']);
    assert.deepEqual(profiler.warnings.list(), ['S!B4: text longer than 3 characters was cut']);
  });

  it('past the profile cap only blank or non-blank matters: values are not decoded', () => {
    const profiler = new RecordingProfiler();
    profiler.wants = false;
    assemble(
      '<row><c s="1"><v>45000</v></c><c t="b"><v>1</v></c><c t="s"><v>0</v></c><c t="s"><v>1</v></c><c/></row>',
      context(['text', ' ']),
      profiler,
    );
    assert.deepEqual(profiler.rows[0]?.values, [0, 0, 0, '']);
  });

  it('keeps the elements open down to sheetData for the skimmer, and is done at its end', () => {
    const { assembler } = assemble('');
    assert.equal(assembler.done, true);
    const open = new RowAssembler(context(), new RecordingProfiler());
    open.openTag('worksheet', 'x:worksheet', {});
    open.openTag('sheetData', 'x:sheetData', {});
    assert.deepEqual(open.openElements, ['x:worksheet', 'x:sheetData']);
    assert.equal(open.done, false);
  });

  it('stops the sheet with SheetDataError on rows or cells out of order or off the grid', () => {
    const cases = [
      ['<row r="3"/><row r="2"/>', /row 2 is out of order or off the grid/],
      ['<row r="0"/>', /row 0 is out of order/],
      ['<row r="1048577"/>', /row 1048577 is out of order/],
      ['<row><c r="C1"/><c r="B1"/></row>', /cell B1 in row 1 is out of order or off the grid/],
      ['<row><c r="XFE1"/></row>', /off the grid/],
    ] as const;
    for (const [xml, message] of cases) {
      assert.throws(
        () => assemble(xml),
        (error: unknown) => error instanceof SheetDataError && message.test(error.message),
        xml,
      );
    }
  });
});
