/** The profile rules as pure functions over arrays of cells (workbook-profile.md), numbers pinned. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { columnLetters, columnOfRef, quoteSheetName } from '../../../src/workbook/cells.ts';
import { parseDateText, serialToIso } from '../../../src/workbook/dates.ts';
import type { CellValue } from '../../../src/workbook/model.ts';
import { classifyFormatCode, classifyNumFmt } from '../../../src/workbook/numfmt.ts';
import {
  columnType,
  convertValue,
  DISTINCT_CAP,
  ODD_CELLS_CAP,
  profileColumn,
  VALUES_CAP,
} from '../../../src/workbook/profile.ts';
import {
  PROFILE_ROWS,
  type ProfileRow,
  profileSheet,
  SAMPLE_ROWS,
} from '../../../src/workbook/sheet-profile.ts';
import {
  cutText,
  distinctKey,
  kindOf,
  parseNumberText,
  plainNumber,
  TEXT_CUT,
} from '../../../src/workbook/values.ts';
import { WARNINGS_PER_SHEET } from '../../../src/workbook/warnings.ts';

const OPTIONS = { dateSystem: '1900' as const, maxColumns: 512 };

/** A row from `{ A: value, … }`; `{ error: '#N/A' }` makes an error cell. */
function row(n: number, cells: Record<string, CellValue | { error: string }>, hidden = false): ProfileRow {
  return {
    row: n,
    hidden,
    cells: Object.entries(cells).map(([letters, value]) =>
      value !== null && typeof value === 'object'
        ? { col: columnOfRef(letters), value: null, error: value.error }
        : { col: columnOfRef(letters), value },
    ),
  };
}

const column = (values: CellValue[]) =>
  profileColumn(
    'c',
    1,
    values,
    values.map((_, i) => i + 2),
    '1900',
  );

describe('pinned numbers of the profile contract', () => {
  it('are 5000, 1000, 12, 40, 3, 5, 20', () => {
    assert.deepEqual(
      [PROFILE_ROWS, DISTINCT_CAP, VALUES_CAP, TEXT_CUT, ODD_CELLS_CAP, SAMPLE_ROWS, WARNINGS_PER_SHEET],
      [5000, 1000, 12, 40, 3, 5, 20],
    );
  });
});

describe('value kinds and keys', () => {
  it('classifies values', () => {
    assert.equal(kindOf(true), 'boolean');
    assert.equal(kindOf(3), 'integer');
    assert.equal(kindOf(-0), 'integer');
    assert.equal(kindOf(2 ** 53), 'integer');
    assert.equal(kindOf(2 ** 54), 'number');
    assert.equal(kindOf(1.5), 'number');
    assert.equal(kindOf('2024-01-15'), 'date');
    assert.equal(kindOf('2024-01-15T08:30:00'), 'datetime');
    assert.equal(kindOf('2024-01-15 08:30:00'), 'string');
    assert.equal(kindOf('08:30:00'), 'string');
    assert.equal(kindOf('00123'), 'string');
  });

  it('writes numbers the shortest way without exponent', () => {
    assert.equal(plainNumber(1), '1');
    assert.equal(plainNumber(1.0), '1');
    assert.equal(plainNumber(0.1 + 0.2), '0.30000000000000004');
    assert.equal(plainNumber(1e21), '1000000000000000000000');
    assert.equal(plainNumber(1.5e-7), '0.00000015');
    assert.equal(plainNumber(-2.5e22), '-25000000000000000000000');
    assert.equal(distinctKey(1), distinctKey(1.0));
    assert.equal(distinctKey(false), 'false');
    assert.equal(distinctKey('  x  '), 'x');
  });

  it('cuts text to 40 code points: 39 and an ellipsis', () => {
    assert.equal(cutText('a'.repeat(40)), 'a'.repeat(40));
    assert.equal(cutText('a'.repeat(41)), `${'a'.repeat(39)}…`);
    // Code points, not UTF-16 units: 40 emoji stay whole, 41 are cut to 39.
    assert.equal(cutText('😀'.repeat(40)), '😀'.repeat(40));
    assert.equal(cutText('😀'.repeat(41)), `${'😀'.repeat(39)}…`);
  });

  it('parses number text: trimmed, thousands separators, full-width digits', () => {
    assert.equal(parseNumberText(' 1,234.5 '), 1234.5);
    assert.equal(parseNumberText('１２３'), 123);
    assert.equal(parseNumberText('－１．５'), -1.5);
    assert.equal(parseNumberText('1e3'), 1000);
    assert.equal(parseNumberText('n/a'), null);
    assert.equal(parseNumberText('Infinity'), null);
    assert.equal(parseNumberText(''), null);
  });
});

describe('column type', () => {
  it('takes the most frequent kind, ties in the order string, integer, number, date, datetime, boolean', () => {
    assert.equal(columnType([1, 2, 'a']), 'integer');
    assert.equal(columnType([1, 'a']), 'string');
    assert.equal(columnType([1.5, true]), 'number');
    assert.equal(columnType(['2024-01-01', true]), 'date');
    assert.equal(columnType(['2024-01-01T00:00:00', true]), 'datetime');
    assert.equal(columnType([true, true, 1]), 'boolean');
    assert.equal(columnType([null, null]), 'string');
    assert.equal(columnType([]), 'string');
  });

  it('widens integer to number and date to datetime when the wider kind occurs', () => {
    assert.equal(columnType([1, 2, 3, 0.5]), 'number');
    assert.equal(columnType(['2024-01-01', '2024-01-02', '2024-01-03T10:00:00']), 'datetime');
  });
});

describe('conversion as a type reads it', () => {
  it('number and integer', () => {
    assert.equal(convertValue('1,234', 'number', '1900'), 1234);
    assert.equal(convertValue(true, 'number', '1900'), 1);
    assert.equal(convertValue('2.5', 'integer', '1900'), null);
    assert.equal(convertValue('12', 'integer', '1900'), 12);
    assert.equal(convertValue(2 ** 64, 'integer', '1900'), null);
  });

  it('integer: text at the edges of the signed 64-bit range is decided exactly, not as a double', () => {
    const inRange = [
      '9223372036854775807',
      '-9223372036854775808',
      '9223372036854775806',
      '+9223372036854775807',
      ' 9,223,372,036,854,775,807 ',
      '９２２３３７２０３６８５４７７５８０７',
      '9223372036854775807.000',
      '92233720368547758.07e2',
      '-9.223372036854775808e18',
      '0',
      '-0.0',
      '1e3',
    ];
    for (const text of inRange)
      assert.equal(
        convertValue(text, 'integer', '1900'),
        Number(
          text
            .trim()
            .replaceAll(',', '')
            .replace(/[\uFF10-\uFF19]/g, (ch) => String.fromCharCode(ch.charCodeAt(0) - 0xfee0)),
        ),
        text,
      );
    const outOfRange = [
      '9223372036854775808',
      '-9223372036854775809',
      '18446744073709551616',
      '9223372036854775807.5',
      '9.2233720368547758075e18',
      '1e19',
      '1e-1',
      '1e999999999999',
    ];
    for (const text of outOfRange) assert.equal(convertValue(text, 'integer', '1900'), null, text);
    // Numbers are doubles already: -2^63 is exactly representable, 2^63 is out of range.
    assert.equal(convertValue(-(2 ** 63), 'integer', '1900'), -(2 ** 63));
    assert.equal(convertValue(2 ** 63, 'integer', '1900'), null);
    // A profiled integer column: none of the in-range texts is odd.
    const profile = profileColumn(
      'id',
      0,
      [
        1,
        2,
        3,
        4,
        5,
        '9223372036854775807',
        '-9223372036854775808',
        '9223372036854775806',
        '9223372036854775808',
      ],
      [2, 3, 4, 5, 6, 7, 8, 9, 10],
      '1900',
    );
    assert.equal(profile.type, 'integer');
    assert.equal(profile.odd, 1);
    assert.deepEqual(profile.odd_cells, [{ cell: 'A10', text: '9223372036854775808' }]);
    assert.equal(profile.min, -(2 ** 63));
    assert.equal(profile.max, 2 ** 63);
  });

  it('boolean', () => {
    for (const text of ['true', 'YES', '1', ' True '])
      assert.equal(convertValue(text, 'boolean', '1900'), true);
    for (const text of ['false', 'No', '0']) assert.equal(convertValue(text, 'boolean', '1900'), false);
    assert.equal(convertValue(1, 'boolean', '1900'), true);
    assert.equal(convertValue(0, 'boolean', '1900'), false);
    assert.equal(convertValue(2, 'boolean', '1900'), null);
    assert.equal(convertValue('maybe', 'boolean', '1900'), null);
  });

  it('date and datetime from every accepted text and from serials', () => {
    const texts: Array<[string, string]> = [
      ['2024-01-15T08:30:00', '2024-01-15T08:30:00'],
      ['2024-01-15T08:30:00+02:00', '2024-01-15T08:30:00'],
      ['2024-01-15T08:30:00.250Z', '2024-01-15T08:30:00'],
      ['2024-01-15 08:30:00', '2024-01-15T08:30:00'],
      ['2024-01-15T08:30', '2024-01-15T08:30:00'],
      ['2024-01-15 08:30', '2024-01-15T08:30:00'],
      ['2024-01-15', '2024-01-15T00:00:00'],
      ['2024/01/15', '2024-01-15T00:00:00'],
      ['2024/1/5', '2024-01-05T00:00:00'],
      ['2024-1-5', '2024-01-05T00:00:00'],
    ];
    for (const [text, expected] of texts)
      assert.equal(convertValue(text, 'datetime', '1900'), expected, text);
    assert.equal(convertValue('2024-01-15 08:30', 'date', '1900'), '2024-01-15');
    assert.equal(convertValue('2024-02-30', 'date', '1900'), null);
    assert.equal(convertValue('2024/01-15', 'date', '1900'), null);
    assert.equal(convertValue('15.01.2024', 'date', '1900'), null);
    assert.equal(convertValue(45306, 'date', '1900'), '2024-01-15');
    assert.equal(convertValue(45306.5, 'datetime', '1900'), '2024-01-15T12:00:00');
    assert.equal(convertValue(43844, 'date', '1904'), '2024-01-15');
    assert.equal(convertValue(true, 'date', '1900'), null);
  });
});

describe('serial dates', () => {
  it('follows the 1900 system with its leap-year bug and the 1904 system', () => {
    assert.equal(serialToIso(1, 'date', '1900'), '1900-01-01');
    assert.equal(serialToIso(59, 'date', '1900'), '1900-02-28');
    assert.equal(serialToIso(61, 'date', '1900'), '1900-03-01');
    assert.equal(serialToIso(45306, 'date', '1900'), '2024-01-15');
    assert.equal(serialToIso(0, 'date', '1904'), '1904-01-01');
    assert.equal(serialToIso(43844, 'date', '1904'), '2024-01-15');
  });

  it('gives a date-time for a fraction under a date format, and rounds to the second', () => {
    assert.equal(serialToIso(45306.25, 'date', '1900'), '2024-01-15T06:00:00');
    assert.equal(serialToIso(45306 + 306 / 86_400 - 1e-9, 'datetime', '1900'), '2024-01-15T00:05:06');
    assert.equal(serialToIso(0.75, 'time', '1900'), '18:00:00');
    assert.equal(serialToIso(-1, 'date', '1900'), null);
    assert.equal(serialToIso(3_000_000, 'date', '1900'), null);
  });

  it('gives HH:MM:SS under a time-only format whatever the whole days (the spec has no exception)', () => {
    assert.equal(serialToIso(1.75, 'time', '1900'), '18:00:00');
    assert.equal(serialToIso(45306.5, 'time', '1900'), '12:00:00');
    assert.equal(serialToIso(45306.5, 'time', '1904'), '12:00:00');
    assert.equal(serialToIso(2, 'time', '1900'), '00:00:00');
    assert.equal(serialToIso(1 + 306 / 86_400 - 1e-9, 'time', '1900'), '00:05:06');
    // Elapsed formats ([h]:mm) and the time built-ins are time-only formats.
    assert.equal(serialToIso(1.5, classifyFormatCode('[h]:mm')!, '1900'), '12:00:00');
    for (const id of [18, 19, 20, 21, 45, 46, 47]) {
      const kind = classifyNumFmt(id, undefined);
      assert.equal(kind, 'time', `built-in ${id}`);
      assert.equal(serialToIso(3.25, kind!, '1900'), '06:00:00', `built-in ${id}`);
    }
    // Date-only and date-time formats are unchanged.
    assert.equal(serialToIso(45306.5, 'datetime', '1900'), '2024-01-15T12:00:00');
    assert.equal(serialToIso(45306, 'datetime', '1900'), '2024-01-15T00:00:00');
    assert.equal(serialToIso(-0.5, 'time', '1900'), null);
  });

  it('parses only real calendar dates', () => {
    assert.notEqual(parseDateText('2024-02-29'), null);
    assert.equal(parseDateText('2023-02-29'), null);
    assert.equal(parseDateText('2024-01-15T24:00:00'), null);
  });
});

describe('number formats', () => {
  it('knows the built-in date and time ids', () => {
    assert.equal(classifyNumFmt(14, undefined), 'date');
    assert.equal(classifyNumFmt(20, undefined), 'time');
    assert.equal(classifyNumFmt(22, undefined), 'datetime');
    assert.equal(classifyNumFmt(46, undefined), 'time');
    assert.equal(classifyNumFmt(2, undefined), null);
    assert.equal(classifyNumFmt(49, undefined), null);
  });

  it('reads custom codes, ignoring literals, colours and locales', () => {
    assert.equal(classifyFormatCode('yyyy-mm-dd'), 'date');
    assert.equal(classifyFormatCode('yyyy-mm-dd hh:mm:ss'), 'datetime');
    assert.equal(classifyFormatCode('[$-409]mmmm d, yyyy;@'), 'date');
    assert.equal(classifyFormatCode('h:mm AM/PM'), 'time');
    assert.equal(classifyFormatCode('mm:ss'), 'time');
    assert.equal(classifyFormatCode('[h]:mm:ss'), 'time');
    assert.equal(classifyFormatCode('mmm-yy'), 'date');
    assert.equal(classifyFormatCode('0.00'), null);
    assert.equal(classifyFormatCode('0.00E+00'), null);
    assert.equal(classifyFormatCode('#,##0 "days"'), null);
    assert.equal(classifyFormatCode('[Red]0.00;[Blue]-0.00'), null);
    assert.equal(classifyFormatCode('General'), null);
    assert.equal(classifyFormatCode('@'), null);
  });
});

describe('profileColumn', () => {
  it('counts blank (null or whitespace) and filled', () => {
    const profile = column([1, null, ' ', 2, '']);
    assert.equal(profile.filled, 2);
    assert.equal(profile.blank, 3);
  });

  it('lists values only when at most 12 distinct keys and some repeat', () => {
    const twelve = Array.from({ length: 24 }, (_, i) => `v${i % 12}`);
    assert.deepEqual(
      column(twelve).values,
      Array.from({ length: 12 }, (_, i) => `v${i}`),
    );
    const thirteen = Array.from({ length: 26 }, (_, i) => `v${i % 13}`);
    assert.equal(column(thirteen).values, undefined);
    assert.equal(column(thirteen).distinct, 13);
    // All unique: distinct equals filled, so no values even when few.
    assert.equal(column(['a', 'b', 'c']).values, undefined);
    assert.deepEqual(column(['b', 'a', 'b']).values, ['b', 'a']);
    // 1 and 1.0 are one key; keys are trimmed.
    assert.deepEqual(column([1, 1.0, ' x', 'x ']).values, ['1', 'x']);
  });

  it('stops counting distinct values at 1000', () => {
    const values = Array.from({ length: 1500 }, (_, i) => `id-${i}`);
    assert.equal(column(values).distinct, 1000);
    assert.equal(column(values.slice(0, 999)).distinct, 999);
  });

  it('cuts listed values to 40 code points', () => {
    const long = 'x'.repeat(45);
    assert.deepEqual(column([long, long]).values, [`${'x'.repeat(39)}…`]);
  });

  it('reports odd cells (first 3, text cut to 40) and widens min/max with converted values', () => {
    const values: CellValue[] = [
      5,
      'n/a',
      8,
      7,
      `seven ${'z'.repeat(50)}`,
      'eight',
      6,
      'nine',
      9,
      10,
      '1,234',
      '１２３',
      11,
      12,
    ];
    const profile = column(values);
    assert.equal(profile.type, 'integer');
    assert.equal(profile.min, 5);
    assert.equal(profile.max, 1234);
    assert.equal(profile.odd, 4);
    assert.deepEqual(profile.odd_cells, [
      { cell: 'B3', text: 'n/a' },
      { cell: 'B6', text: `seven ${'z'.repeat(33)}…` },
      { cell: 'B7', text: 'eight' },
    ]);
  });

  it('has no odd cells, min or max for a string column, and no min/max for booleans', () => {
    const strings = column(['a', 'b', 3]);
    assert.equal(strings.type, 'string');
    assert.equal(strings.odd, undefined);
    assert.equal(strings.min, undefined);
    const booleans = column([true, false, true, 'yes', 'perhaps']);
    assert.equal(booleans.type, 'boolean');
    assert.equal(booleans.min, undefined);
    assert.equal(booleans.odd, 1);
  });

  it('compares dates as ISO text and converts serials and other date texts', () => {
    const profile = column(['2024-01-15', '2023-12-31', '2024-01-01', '2024/02/01', 45000, 'someday']);
    assert.equal(profile.type, 'date');
    assert.equal(profile.min, '2023-03-15');
    assert.equal(profile.max, '2024-02-01');
    assert.deepEqual(profile.odd_cells, [{ cell: 'B7', text: 'someday' }]);
  });
});

describe('profileSheet: header and data block', () => {
  it('finds the header as the first row with two non-blank cells, below a title', () => {
    const result = profileSheet(
      'Report',
      [
        row(1, { A: 'Quarterly report' }),
        row(3, { A: 'name', B: 'qty' }),
        row(4, { A: 'north', B: 10 }),
        row(6, { A: 'south', B: 20, C: 'late' }),
      ],
      OPTIONS,
    );
    const sheet = result.sheet;
    assert.equal(sheet.header_row, 3);
    assert.equal(sheet.range, 'Report!A3:C6');
    assert.equal(sheet.used_range, 'Report!A1:C6');
    assert.equal(sheet.row_count, 3);
    assert.deepEqual(sheet.headers, ['name', 'qty', 'C']);
    assert.deepEqual(result.warnings, ['Report!C3: header is empty; column named C']);
    // Sample: rows 4–6 including the empty row 5 as nulls.
    assert.deepEqual(sheet.sample, [
      { _row: 4, name: 'north', qty: 10, C: null },
      { _row: 5, name: null, qty: null, C: null },
      { _row: 6, name: 'south', qty: 20, C: 'late' },
    ]);
    // Row 5 holds no value, so it is not profiled.
    assert.equal(sheet.columns[0]?.filled, 2);
    assert.equal(sheet.columns[0]?.blank, 0);
  });

  it('falls back to the first non-empty row when no row has two values', () => {
    const sheet = profileSheet(
      'One',
      [row(2, { B: 'only' }), row(3, { B: 'x' }), row(4, { B: ' ' })],
      OPTIONS,
    ).sheet;
    assert.equal(sheet.header_row, 2);
    assert.deepEqual(sheet.headers, ['only']);
    assert.equal(sheet.row_count, 1);
    assert.equal(sheet.range, 'One!B2:B3');
  });

  it('treats an empty sheet as header_row 0 with no sample', () => {
    const sheet = profileSheet('Empty', [], OPTIONS).sheet;
    assert.deepEqual(sheet, {
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
    const blankOnly = profileSheet('Blank', [row(1, { A: '  ' })], OPTIONS).sheet;
    assert.equal(blankOnly.header_row, 0);
    assert.equal(blankOnly.used_range, 'Blank!A1:A1');
  });

  it('names duplicates _2, _3 and trims headers, line breaks becoming spaces', () => {
    const result = profileSheet(
      'H',
      [row(1, { A: 'x', B: 'x', C: ' x ', D: 'x_2', E: 'two\nlines', F: 42, G: true }), row(2, { A: 1 })],
      OPTIONS,
    );
    assert.deepEqual(result.sheet.headers, ['x', 'x_2', 'x_3', 'x_2_2', 'two lines', '42', 'true']);
    assert.deepEqual(result.warnings, [
      'H!B1: duplicate header "x"; column named x_2',
      'H!C1: duplicate header "x"; column named x_3',
      'H!D1: duplicate header "x_2"; column named x_2_2',
    ]);
  });

  it('keeps headers named __proto__ or constructor as own keys, and renames _row (reserved) to _row_2', () => {
    // Built by hand: `{ __proto__: … }` in a literal would set a prototype, not a key.
    const cells = (values: CellValue[]) => values.map((value, col) => ({ col, value }));
    const result = profileSheet(
      'P',
      [
        { row: 1, cells: cells(['__proto__', 'constructor', '_row', 'toString', 'hasOwnProperty']) },
        { row: 2, cells: cells([null, 5, 'x', 1, true]) },
        { row: 4, cells: cells(['a', 6, 'y', 2, false]) },
      ],
      OPTIONS,
    );
    const { sheet } = result;
    assert.deepEqual(sheet.headers, ['__proto__', 'constructor', '_row_2', 'toString', 'hasOwnProperty']);
    assert.deepEqual(result.warnings, ['P!C1: duplicate header "_row"; column named _row_2']);
    assert.equal(
      JSON.stringify(sheet.types),
      '{"__proto__":"string","constructor":"integer","_row_2":"string","toString":"integer","hasOwnProperty":"boolean"}',
    );
    assert.equal(Object.getPrototypeOf(sheet.types), Object.prototype);
    assert.deepEqual(
      sheet.sample?.map((entry) => JSON.stringify(entry)),
      [
        '{"_row":2,"__proto__":null,"constructor":5,"_row_2":"x","toString":1,"hasOwnProperty":true}',
        '{"_row":3,"__proto__":null,"constructor":null,"_row_2":null,"toString":null,"hasOwnProperty":null}',
        '{"_row":4,"__proto__":"a","constructor":6,"_row_2":"y","toString":2,"hasOwnProperty":false}',
      ],
    );
    for (const entry of sheet.sample ?? []) {
      assert.equal(Object.getPrototypeOf(entry), Object.prototype);
      assert.ok(Object.hasOwn(entry, '__proto__'));
    }
    // Every sample row's _row is its sheet row number.
    assert.deepEqual(
      sheet.sample?.map((entry) => entry._row),
      [2, 3, 4],
    );
    // A header already named _row_2 still gets a name of its own.
    const both = profileSheet(
      'Q',
      [
        { row: 1, cells: cells(['_row_2', '_row']) },
        { row: 2, cells: cells([1, 2]) },
      ],
      OPTIONS,
    );
    assert.deepEqual(both.sheet.headers, ['_row_2', '_row_3']);
    assert.deepEqual(both.sheet.sample, [{ _row: 2, _row_2: 1, _row_3: 2 }]);
  });

  it('extends the block to the leftmost and rightmost non-blank column below the header', () => {
    const sheet = profileSheet(
      'W',
      [row(2, { B: 'a', C: 'b' }), row(3, { A: 1, B: 2 }), row(4, { D: 'far' }), row(9, { E: ' ' })],
      OPTIONS,
    ).sheet;
    assert.equal(sheet.range, 'W!A2:D4');
    assert.deepEqual(sheet.headers, ['A', 'a', 'b', 'D']);
    assert.equal(sheet.row_count, 2);
    assert.equal(sheet.used_range, 'W!A2:E9');
  });

  it('profiles the first 5000 rows with a value, counts all rows, and marks the truncation', () => {
    const rows: ProfileRow[] = [row(1, { A: 'n', B: 'hidden?' })];
    for (let r = 2; r <= 5003; r++) rows.push(row(r, { A: r - 1, B: 'x' }, r % 2 === 0));
    rows.push(row(6000, { A: 9999 }));
    const sheet = profileSheet('Long', rows, OPTIONS).sheet;
    assert.equal(sheet.row_count, 5999);
    assert.equal(sheet.profile_truncated, true);
    assert.equal(sheet.columns[0]?.filled, 5000);
    assert.equal(sheet.columns[0]?.max, 5000);
    // Hidden rows are counted over the profiled rows only: even rows 2..5000.
    assert.equal(sheet.hidden_rows, 2500);

    const exact = profileSheet('Exact', rows.slice(0, 5001), OPTIONS).sheet;
    assert.equal(exact.profile_truncated, undefined);
    assert.equal(exact.columns[0]?.filled, 5000);
  });

  it('omits hidden_rows when no profiled row is hidden', () => {
    const sheet = profileSheet('V', [row(1, { A: 'a', B: 'b' }), row(2, { A: 1, B: 2 })], OPTIONS).sheet;
    assert.equal(sheet.hidden_rows, undefined);
    assert.equal(sheet.profile_truncated, undefined);
  });

  it('turns error cells into nulls with a warning, and caps warnings at 20 per sheet', () => {
    const rows: ProfileRow[] = [row(1, { A: 'k', B: 'v' })];
    for (let r = 2; r <= 31; r++) rows.push(row(r, { A: r, B: { error: '#N/A' } }));
    const result = profileSheet('E', rows, OPTIONS);
    assert.equal(result.sheet.columns[1]?.blank, 30);
    assert.equal(result.sheet.sample?.[0]?.v, null);
    assert.equal(result.warnings.length, 21);
    assert.equal(result.warnings[0], 'E!B2: error value #N/A');
    assert.equal(result.warnings[19], 'E!B21: error value #N/A');
    assert.equal(result.warnings[20], 'E: 10 more warnings');
  });

  it('warns for error cells in rows that hold no other value, and in the header row, in cell order', () => {
    const result = profileSheet(
      'E',
      [
        row(1, { A: 'k', B: 'v', C: { error: '#REF!' }, D: 'w' }),
        row(2, { A: 1, B: { error: '#DIV/0!' } }),
        row(3, { B: { error: '#N/A' } }),
        row(4, { A: { error: '#NAME?' }, C: { error: '#NUM!' } }),
        row(5, { A: 3, D: { error: '#VALUE!' } }),
        // Below the last non-blank row, outside the block: no warning, as for the block's other cells.
        row(7, { A: { error: '#NULL!' } }),
      ],
      OPTIONS,
    );
    assert.deepEqual(result.warnings, [
      'E!C1: error value #REF!',
      'E!C1: header is empty; column named C',
      'E!B2: error value #DIV/0!',
      'E!B3: error value #N/A',
      'E!A4: error value #NAME?',
      'E!C4: error value #NUM!',
      'E!D5: error value #VALUE!',
    ]);
    // Rows without a value are still no profiled rows: the profile and the block are unchanged.
    assert.equal(result.sheet.range, 'E!A1:D5');
    assert.equal(result.sheet.row_count, 4);
    assert.deepEqual(
      result.sheet.columns.map((c) => [c.name, c.filled, c.blank]),
      [
        ['k', 2, 0],
        ['v', 0, 2],
        ['C', 0, 2],
        ['w', 0, 2],
      ],
    );
    assert.deepEqual(
      result.sheet.sample?.map((entry) => entry._row),
      [2, 3, 4, 5],
    );
  });

  it('counts error-only rows past 20 listed warnings without keeping them row by row', () => {
    const rows: ProfileRow[] = [row(1, { A: 'k', B: 'v' }), row(2, { A: 1, B: 2 })];
    for (let r = 3; r <= 40_002; r++) rows.push(row(r, { B: { error: '#N/A' } }));
    rows.push(row(40_003, { A: 2, B: 3 }));
    // A row with an error in a column outside the block (E is never non-blank): no warning.
    rows.push(row(40_004, { A: 3, E: { error: '#N/A' } }));
    for (let r = 40_005; r <= 40_010; r++) rows.push(row(r, { B: { error: '#N/A' } }));
    const result = profileSheet('E', rows, OPTIONS);
    assert.equal(result.warnings.length, 21);
    assert.equal(result.warnings[0], 'E!B3: error value #N/A');
    assert.equal(result.warnings[19], 'E!B22: error value #N/A');
    assert.equal(result.warnings[20], 'E: 39980 more warnings');
    assert.equal(result.sheet.row_count, 40_003);

    // A new header row forgets the error cells noted under the previous candidate.
    const moved = profileSheet(
      'M',
      [
        row(1, { A: 'title' }),
        row(2, { A: { error: '#N/A' } }),
        row(3, { A: 'k', B: 'v' }),
        row(4, { A: 1, B: 2 }),
      ],
      OPTIONS,
    );
    assert.equal(moved.sheet.header_row, 3);
    assert.deepEqual(moved.warnings, []);
  });

  it('profiles at most maxColumns columns, with a warning', () => {
    const header: Record<string, CellValue> = {};
    const data: Record<string, CellValue> = {};
    for (let c = 0; c < 6; c++) {
      header[columnLetters(c)] = `h${c}`;
      data[columnLetters(c)] = c;
    }
    const result = profileSheet('Wide', [row(1, header), row(2, data)], { ...OPTIONS, maxColumns: 4 });
    assert.deepEqual(result.sheet.headers, ['h0', 'h1', 'h2', 'h3']);
    assert.equal(result.sheet.range, 'Wide!A1:F2');
    assert.deepEqual(result.warnings, ['Wide: only the first 4 of 6 columns are profiled']);
  });

  it('quotes sheet names in ranges the way Excel does', () => {
    assert.equal(quoteSheetName('Sheet1'), 'Sheet1');
    assert.equal(quoteSheetName('My Data'), "'My Data'");
    assert.equal(quoteSheetName("O'Brien"), "'O''Brien'");
    assert.equal(quoteSheetName('A1'), "'A1'");
    const sheet = profileSheet('My Data', [row(1, { A: 'a', B: 'b' })], OPTIONS).sheet;
    assert.equal(sheet.range, "'My Data'!A1:B1");
    assert.deepEqual(sheet.sample, []);
  });
});
