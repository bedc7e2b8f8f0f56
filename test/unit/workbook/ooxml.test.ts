/**
 * Package and XML shapes other writers produce (or that the schema allows) and exceljs never
 * writes: prefixed elements, missing `r`, phonetic runs, `_xHHHH_` escapes, ISO date cells, strict
 * namespaces, `date1904="true"`, chart sheets, UTF-16 parts, and sheets that stop part-way.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import type { WorkbookBounds, WorkbookModel } from '../../../src/workbook/model.ts';
import { parseStyles } from '../../../src/workbook/ooxml.ts';
import { readWorkbook } from '../../../src/workbook/read-workbook.ts';
import { fixtureDir } from '../../support/workbook-fixtures.ts';
import { put, type RawWorkbook, rawXlsx, zip } from '../../support/workbook-fixtures-zip.ts';

const BOUNDS: WorkbookBounds = loadConfig({}).workbook;
let dir: string;
let cleanup: () => Promise<void>;
before(async () => {
  ({ dir, cleanup } = await fixtureDir('package'));
});
after(() => cleanup());

let counter = 0;
async function readRaw(
  book: RawWorkbook | Buffer,
  bounds: Partial<WorkbookBounds> = {},
): Promise<WorkbookModel> {
  const file = await put(
    path.join(dir, `raw-${++counter}.xlsx`),
    Buffer.isBuffer(book) ? book : rawXlsx(book),
  );
  return readWorkbook({
    path: file,
    name: path.basename(file),
    password: undefined,
    bounds: { ...BOUNDS, ...bounds },
  });
}

describe('cell encodings', () => {
  it('reads shared, inline, rich and formula strings, phonetic runs excluded, _xHHHH_ unescaped', async () => {
    const model = await readRaw({
      sharedStringsXml:
        '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>name</t></si><si><t>note</t></si>' +
        '<si><r><t>To</t></r><r><rPr><b/></rPr><t>kyo</t></r><rPh sb="0" eb="2"><t>トウキョウ</t></rPh></si>' +
        '<si><t>line_x000D_break</t></si><si><t/></si></sst>',
      sheets: [
        {
          name: 'S',
          rows:
            '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>' +
            '<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2" t="inlineStr"><is><t>in&amp;line</t></is></c></row>' +
            '<row r="3"><c r="A3" t="s"><v>3</v></c><c r="B3" t="str"><f>UPPER("x")</f><v>X</v></c></row>' +
            '<row r="4"><c r="A4" t="s"><v>4</v></c><c r="B4" t="inlineStr"><is><r><t>a</t></r><r><t>b</t></r></is></c></row>',
        },
      ],
    });
    assert.deepEqual(model.sheets[0]?.sample, [
      { _row: 2, name: 'Tokyo', note: 'in&line' },
      { _row: 3, name: 'line\rbreak', note: 'X' },
      { _row: 4, name: null, note: 'ab' },
    ]);
  });

  it('reads booleans, errors, ISO date cells and date formats (built-in and custom)', async () => {
    const model = await readRaw({
      numFmts: { 164: 'dd/mm/yyyy hh:mm', 165: '0.00%' },
      cellXfs: [0, 14, 164, 165, 21],
      sharedStrings: ['flag', 'err', 'iso', 'day', 'stamp', 'pct', 'clock'],
      sheets: [
        {
          name: 'T',
          rows:
            '<row r="1">' +
            [0, 1, 2, 3, 4, 5, 6].map((i) => `<c t="s"><v>${i}</v></c>`).join('') +
            '</row><row r="2"><c t="b"><v>1</v></c><c t="e"><v>#REF!</v></c><c t="d"><v>2024-01-15T08:30:00Z</v></c>' +
            '<c s="1"><v>45306</v></c><c s="2"><v>45306.5</v></c><c s="3"><v>0.25</v></c><c s="4"><v>0.5</v></c></row>' +
            '<row r="3"><c t="b"><v>0</v></c><c t="e"><v>#VALUE!</v></c><c t="d" s="1"><v>2024-02-01</v></c>' +
            '<c s="1"><v>45306.75</v></c><c s="9"><v>3</v></c><c s="3"><v>1</v></c><c s="4"><v>1.5</v></c></row>',
        },
      ],
    });
    const sheet = model.sheets[0]!;
    assert.deepEqual(sheet.sample, [
      {
        _row: 2,
        flag: true,
        err: null,
        iso: '2024-01-15T08:30:00',
        day: '2024-01-15',
        stamp: '2024-01-15T12:00:00',
        pct: 0.25,
        clock: '12:00:00',
      },
      {
        _row: 3,
        flag: false,
        err: null,
        iso: '2024-02-01',
        day: '2024-01-15T18:00:00',
        stamp: 3,
        pct: 1,
        clock: '12:00:00',
      },
    ]);
    assert.deepEqual(model.warnings, ['T!B2: error value #REF!', 'T!B3: error value #VALUE!']);
  });

  it('reads a cell without a value (formula never calculated, empty <v> of any type) as empty', async () => {
    const names = ['n', 'typed', 'date', 'flag', 'err', 'shared', 'bare'];
    const model = await readRaw({
      sharedStrings: names,
      cellXfs: [0, 14],
      sheets: [
        {
          name: 'F',
          rows:
            `<row r="1">${names.map((_, i) => `<c t="s"><v>${i}</v></c>`).join('')}</row>` +
            '<row r="2"><c r="A2"><f>1+1</f><v/></c><c r="B2" t="n" s="1"><f>TODAY()</f><v></v></c>' +
            '<c r="C2" t="d"><v></v></c><c r="D2" t="b"><f>TRUE()</f><v> </v></c><c r="E2" t="e"><f>1/0</f><v/></c>' +
            '<c r="F2" t="s"><v></v></c><c r="G2"><f>A1</f></c></row>' +
            '<row r="3"><c r="A3"><v>1</v></c><c r="B3" s="1"><v>45306</v></c><c r="C3" t="d"><v>2024-01-15</v></c>' +
            '<c r="D3" t="b"><v>0</v></c><c r="E3" t="e"><v>#N/A</v></c><c r="F3" t="s"><v>0</v></c><c r="G3"><v>2</v></c></row>',
        },
      ],
    });
    const sheet = model.sheets[0]!;
    assert.deepEqual(sheet.sample, [
      { _row: 2, n: null, typed: null, date: null, flag: null, err: null, shared: null, bare: null },
      {
        _row: 3,
        n: 1,
        typed: '2024-01-15',
        date: '2024-01-15',
        flag: false,
        err: null,
        shared: 'n',
        bare: 2,
      },
    ]);
    assert.deepEqual(model.warnings, ['F!E3: error value #N/A']);
  });

  it('warns for an error cell in the header row and in a row with no other value', async () => {
    const model = await readRaw({
      sharedStrings: ['a', 'b'],
      sheets: [
        {
          name: 'E',
          rows:
            '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="e"><v>#REF!</v></c></row>' +
            '<row r="2"><c r="A2"><v>1</v></c><c r="B2"><v>2</v></c><c r="C2"><v>3</v></c></row>' +
            '<row r="3"><c r="A3" t="e"><f>1/0</f><v>#DIV/0!</v></c></row>' +
            '<row r="4"><c r="A4"><v>3</v></c><c r="B4"><v>4</v></c></row>',
        },
      ],
    });
    const sheet = model.sheets[0]!;
    assert.deepEqual(model.warnings, [
      'E!C1: error value #REF!',
      'E!C1: header is empty; column named C',
      'E!A3: error value #DIV/0!',
    ]);
    assert.deepEqual(sheet.sample, [
      { _row: 2, a: 1, b: 2, C: 3 },
      { _row: 3, a: null, b: null, C: null },
      { _row: 4, a: 3, b: 4, C: null },
    ]);
  });

  it('takes number formats from numFmts only, never from differential formats (dxfs)', async () => {
    // Conditional formats and table styles carry <dxf><numFmt>, often reusing a numFmts id.
    const model = await readRaw({
      numFmts: { 164: '0.00', 165: 'yyyy-mm-dd' },
      dxfNumFmts: { 164: 'yyyy-mm-dd', 165: '0.00', 2: 'hh:mm:ss' },
      cellXfs: [0, 164, 165, 2],
      sharedStrings: ['plain', 'day', 'fixed'],
      sheets: [
        {
          name: 'D',
          rows:
            '<row r="1"><c t="s"><v>0</v></c><c t="s"><v>1</v></c><c t="s"><v>2</v></c></row>' +
            '<row r="2"><c s="1"><v>45306</v></c><c s="2"><v>45306</v></c><c s="3"><v>0.5</v></c></row>',
        },
      ],
    });
    assert.deepEqual(model.sheets[0]?.sample, [{ _row: 2, plain: 45306, day: '2024-01-15', fixed: 0.5 }]);
    assert.deepEqual(model.sheets[0]?.types, { plain: 'integer', day: 'date', fixed: 'number' });
    // Directly: dxfs before or after cellXfs, prefixed elements, and cellStyleXfs' own xf entries.
    const styles =
      '<x:styleSheet xmlns:x="urn:x"><x:dxfs><x:dxf><x:numFmt numFmtId="164" formatCode="yyyy-mm-dd"/></x:dxf></x:dxfs>' +
      '<x:numFmts><x:numFmt numFmtId="164" formatCode="0.00"/><x:numFmt numFmtId="165" formatCode="h:mm"/></x:numFmts>' +
      '<x:cellStyleXfs><x:xf numFmtId="14"/></x:cellStyleXfs><x:cellXfs><x:xf numFmtId="164"/><x:xf numFmtId="165"/><x:xf numFmtId="14"/></x:cellXfs>' +
      '<x:dxfs><x:dxf><x:numFmt numFmtId="165" formatCode="0"/></x:dxf></x:dxfs></x:styleSheet>';
    assert.deepEqual(parseStyles(styles, 'xl/styles.xml'), [null, 'time', 'date']);
  });

  it('counts positions for rows and cells without r', async () => {
    const model = await readRaw({
      sheets: [
        {
          name: 'NoRefs',
          rows:
            '<row><c t="inlineStr"><is><t>a</t></is></c><c t="inlineStr"><is><t>b</t></is></c></row>' +
            '<row><c><v>1</v></c><c r="C2"><v>3</v></c><c><v>4</v></c></row>',
        },
      ],
    });
    const sheet = model.sheets[0]!;
    assert.equal(sheet.range, 'NoRefs!A1:D2');
    assert.deepEqual(sheet.sample, [{ _row: 2, a: 1, b: null, C: 3, D: 4 }]);
  });

  it('cuts text past the cell-text limit, with a warning', async () => {
    const model = await readRaw(
      {
        sharedStrings: ['k', 'v', 'abcdefghijklmnop'],
        sheets: [
          {
            name: 'Cut',
            rows:
              '<row r="1"><c t="s"><v>0</v></c><c t="s"><v>1</v></c></row>' +
              '<row r="2"><c t="s"><v>2</v></c><c t="inlineStr"><is><t>0123456789abc</t></is></c></row>',
          },
        ],
      },
      { maxCellChars: 10 },
    );
    assert.deepEqual(model.sheets[0]?.sample, [{ _row: 2, k: 'abcdefghij', v: '0123456789' }]);
    assert.deepEqual(model.warnings, [
      'Cut!A2: text longer than 10 characters was cut',
      'Cut!B2: text longer than 10 characters was cut',
    ]);
  });
});

describe('package shapes', () => {
  it('reads prefixed (Open XML SDK style) parts like plain ones', async () => {
    const main = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
    const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
    const pkg = 'http://schemas.openxmlformats.org/package/2006/relationships';
    const file = zip([
      {
        name: '_rels/.rels',
        data: `<Relationships xmlns="${pkg}"><Relationship Id="R1" Type="${rel}/officeDocument" Target="/xl/workbook.xml"/></Relationships>`,
      },
      {
        name: 'xl/workbook.xml',
        data: `<x:workbook xmlns:x="${main}" xmlns:r="${rel}"><x:workbookPr date1904="true"/><x:sheets><x:sheet name="P" sheetId="1" r:id="R1"/></x:sheets><x:definedNames><x:definedName name="Local" localSheetId="0">P!$A$1</x:definedName></x:definedNames></x:workbook>`,
      },
      {
        name: 'xl/_rels/workbook.xml.rels',
        data: `<Relationships xmlns="${pkg}"><Relationship Id="R1" Type="${rel}/worksheet" Target="sheets/p.xml"/></Relationships>`,
      },
      {
        name: 'xl/sheets/p.xml',
        data: `<x:worksheet xmlns:x="${main}"><x:sheetData><x:row r="1"><x:c r="A1" t="inlineStr"><x:is><x:t>when</x:t></x:is></x:c><x:c r="B1" t="inlineStr"><x:is><x:t>n</x:t></x:is></x:c></x:row><x:row r="2"><x:c r="A2" t="d"><x:v>2024-01-15</x:v></x:c><x:c r="B2"><x:v>5</x:v></x:c></x:row></x:sheetData></x:worksheet>`,
      },
    ]);
    const model = await readRaw(file);
    assert.equal(model.date_system, '1904');
    assert.deepEqual(model.named_ranges, [{ name: 'Local', refers_to: 'P!$A$1', scope: 'P' }]);
    assert.deepEqual(model.sheets[0]?.sample, [{ _row: 2, when: '2024-01-15', n: 5 }]);
  });

  it('follows strict-namespace relationships', async () => {
    const strict = 'http://purl.oclc.org/ooxml/officeDocument/relationships';
    const file = zip([
      {
        name: '_rels/.rels',
        data: `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="a" Type="${strict}/officeDocument" Target="book/main.xml"/></Relationships>`,
      },
      {
        name: 'book/main.xml',
        data: `<workbook xmlns="http://purl.oclc.org/ooxml/spreadsheetml/main" xmlns:r="${strict}"><sheets><sheet name="Strict" sheetId="1" r:id="s"/></sheets></workbook>`,
      },
      {
        name: 'book/_rels/main.xml.rels',
        data: `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="s" Type="${strict}/worksheet" Target="../sheets/one%20sheet.xml"/></Relationships>`,
      },
      {
        name: 'sheets/one sheet.xml',
        data: '<worksheet><sheetData><row r="2"><c r="B2"><v>1</v></c><c r="C2"><v>2</v></c></row></sheetData></worksheet>',
      },
    ]);
    const model = await readRaw(file);
    assert.equal(model.sheets[0]?.range, 'Strict!B2:C2');
    assert.deepEqual(model.sheets[0]?.headers, ['1', '2']);
  });

  it('reads a UTF-16LE part with its byte-order mark', async () => {
    const sst = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(
        '<?xml version="1.0" encoding="UTF-16"?><sst><si><t>Größe</t></si><si><t>東京</t></si></sst>',
        'utf16le',
      ),
    ]);
    const book: RawWorkbook = {
      sheets: [{ name: 'U', rows: '<row r="1"><c t="s"><v>0</v></c><c t="s"><v>1</v></c></row>' }],
    };
    const model = await readRaw(zipReplacing(book, 'xl/sharedStrings.xml', sst));
    assert.deepEqual(model.sheets[0]?.headers, ['Größe', '東京']);
  });

  it('lists a chart sheet and a missing sheet part without profiling them', async () => {
    const main = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
    const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
    const pkg = 'http://schemas.openxmlformats.org/package/2006/relationships';
    const file = zip([
      {
        name: '_rels/.rels',
        data: `<Relationships xmlns="${pkg}"><Relationship Id="r" Type="${rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
      },
      {
        name: 'xl/workbook.xml',
        data: `<workbook xmlns="${main}" xmlns:r="${rel}"><sheets><sheet name="Chart" sheetId="1" r:id="c"/><sheet name="Gone" sheetId="2" r:id="g"/><sheet name="Ok" sheetId="3" r:id="o"/></sheets></workbook>`,
      },
      {
        name: 'xl/_rels/workbook.xml.rels',
        data: `<Relationships xmlns="${pkg}"><Relationship Id="c" Type="${rel}/chartsheet" Target="chartsheets/sheet1.xml"/><Relationship Id="g" Type="${rel}/worksheet" Target="worksheets/gone.xml"/><Relationship Id="o" Type="${rel}/worksheet" Target="worksheets/ok.xml"/></Relationships>`,
      },
      { name: 'xl/chartsheets/sheet1.xml', data: `<chartsheet xmlns="${main}"/>` },
      { name: 'xl/worksheets/ok.xml', data: `<worksheet xmlns="${main}"><sheetData/></worksheet>` },
    ]);
    const model = await readRaw(file);
    assert.deepEqual(
      model.sheets.map((s) => [s.name, s.header_row, s.used_range]),
      [
        ['Chart', 0, 'Chart!A1:A1'],
        ['Gone', 0, 'Gone!A1:A1'],
        ['Ok', 0, 'Ok!A1:A1'],
      ],
    );
    assert.deepEqual(model.warnings, [
      'Chart: chart sheet; not profiled',
      'Gone: sheet part is missing; not profiled',
    ]);
  });

  it('stops a sheet at a cell off the grid or a row out of order, keeping what it read', async () => {
    const model = await readRaw({
      sheets: [
        {
          name: 'Grid',
          rows:
            '<row r="1"><c r="A1"><v>1</v></c><c r="B1"><v>2</v></c></row><row r="2"><c r="A2"><v>3</v></c></row>' +
            '<row r="3"><c r="XFE3"><v>4</v></c></row><row r="4"><c r="A4"><v>5</v></c></row>',
        },
        {
          name: 'Order',
          rows: '<row r="5"><c r="A5"><v>1</v></c><c r="B5"><v>2</v></c></row><row r="4"><c r="A4"><v>3</v></c></row>',
        },
      ],
    });
    const [grid, order] = model.sheets;
    assert.equal(grid?.range, 'Grid!A1:B2');
    assert.equal(grid?.row_count, 1);
    assert.equal(order?.header_row, 5);
    assert.deepEqual(model.warnings, [
      'Grid: cell XFE3 in row 3 is out of order or off the grid',
      'Order: row 4 is out of order or off the grid',
    ]);
  });
});

/** rawXlsx with one part's bytes replaced. */
function zipReplacing(book: RawWorkbook, name: string, data: Buffer): Buffer {
  const main = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
  const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  const pkg = 'http://schemas.openxmlformats.org/package/2006/relationships';
  const sheets = book.sheets.map((s, i) => ({
    name: `xl/worksheets/sheet${i + 1}.xml`,
    data: `<worksheet xmlns="${main}"><sheetData>${s.rows ?? ''}</sheetData></worksheet>`,
  }));
  return zip([
    {
      name: '_rels/.rels',
      data: `<Relationships xmlns="${pkg}"><Relationship Id="r" Type="${rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    },
    {
      name: 'xl/workbook.xml',
      data: `<workbook xmlns="${main}" xmlns:r="${rel}"><sheets>${book.sheets
        .map((s, i) => `<sheet name="${s.name}" sheetId="${i + 1}" r:id="s${i + 1}"/>`)
        .join('')}</sheets></workbook>`,
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: `<Relationships xmlns="${pkg}">${book.sheets
        .map(
          (_, i) =>
            `<Relationship Id="s${i + 1}" Type="${rel}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`,
        )
        .join(
          '',
        )}<Relationship Id="ss" Type="${rel}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    },
    { name: `xl/${name.replace(/^xl\//, '')}`, data },
    ...sheets,
  ]);
}
