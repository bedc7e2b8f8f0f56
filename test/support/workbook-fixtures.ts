/**
 * Workbook fixtures written by exceljs at test time (no binary blobs in the repository). Each
 * builder writes one file and returns its path; the tests pin what the reader must make of it.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { patchZip } from './workbook-fixtures-zip.ts';

/** A temp folder per test file; `cleanup` removes it. */
export async function fixtureDir(label: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), `wb-${label}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

const utc = (y: number, m: number, d: number, h = 0, mi = 0, s = 0) =>
  new Date(Date.UTC(y, m - 1, d, h, mi, s));

/**
 * The feature workbook: typed columns, a report with a title above its header, hidden and very
 * hidden sheets, filtered and hand-hidden rows with an Excel table, an empty sheet, repeated
 * values, long text, formulas with cached values, rich text, and workbook- and sheet-scoped names.
 */
export async function writeFeatureWorkbook(file: string): Promise<string> {
  const wb = new ExcelJS.Workbook();

  const typed = wb.addWorksheet('Typed');
  typed.addRow(['id', 'amount', 'day', 'stamp', 'flag', 'blank', 'code', 'qty', 'wide', 'note']);
  const rows: unknown[][] = [
    [1, 1.5, utc(2024, 1, 15), utc(2024, 1, 15, 8, 30, 0), true, null, '00123', 10, 5, 'alpha'],
    [2, 2.25, utc(2024, 2, 29), utc(2024, 2, 29, 23, 59, 59), false, null, '00042', 'n/a', '１２３', 'beta'],
    [3, 3, utc(2023, 12, 31), utc(2023, 12, 31, 0, 0, 1), true, null, '01000', '1,234', 7, ' '],
    [4, -0.5, utc(2024, 6, 1), utc(2024, 6, 1, 12, 0, 0), true, null, '00123', 12, 'seven', 'delta'],
    [5, 10, utc(2024, 3, 10), utc(2024, 3, 10, 10, 10, 10), false, null, '00042', 15, 9, 'alpha'],
    [6, 0.125, utc(2024, 3, 11), utc(2024, 3, 11), true, null, '00001', 20, 11, null],
  ];
  for (const row of rows) typed.addRow(row);
  typed.getColumn(3).numFmt = 'yyyy-mm-dd';
  typed.getColumn(4).numFmt = 'yyyy-mm-dd hh:mm:ss';
  for (let r = 2; r <= 7; r++) typed.getCell(r, 7).numFmt = '@';

  const report = wb.addWorksheet('Report');
  report.getCell('A1').value = 'Quarterly report';
  report.getRow(3).values = ['name', 'name', null, 'qty', ' multi\nline ', 'formula'];
  report.getRow(4).values = ['north', 'n1', 'x', 10, 'a', { formula: 'D4*2', result: 20 }];
  report.getRow(5).values = [
    'south',
    'n2',
    null,
    { error: '#N/A' },
    'b',
    { formula: 'UPPER(A5)', result: 'SOUTH' },
  ];
  report.getRow(6).values = [
    'east',
    'n3',
    null,
    30,
    { richText: [{ text: 'rich ' }, { text: 'text', font: { bold: true } }] },
    { formula: 'D6>10', result: true },
  ];
  report.getRow(7).values = ['west', 'n4', null, 40, 'd', { formula: '1/0', result: { error: '#DIV/0!' } }];

  const hidden = wb.addWorksheet('Hidden', { state: 'hidden' });
  hidden.addRow(['k', 'v']);
  hidden.addRow(['a', 1]);
  const veryHidden = wb.addWorksheet('VeryHidden', { state: 'veryHidden' });
  veryHidden.addRow(['secret', 'value']);
  veryHidden.addRow(['s', 2]);

  const filtered = wb.addWorksheet('Filtered');
  filtered.addTable({
    name: 'Orders',
    ref: 'A1',
    headerRow: true,
    columns: [{ name: 'order' }, { name: 'region' }, { name: 'total' }],
    rows: [
      [1, 'north', 10],
      [2, 'south', 20],
      [3, 'north', 30],
      [4, 'east', 40],
      [5, 'north', 50],
      [6, 'south', 60],
    ],
  });
  filtered.autoFilter = 'A1:C7';
  // Rows 3 and 7 hidden as a filter on region would leave them; row 5 hidden by hand.
  filtered.getRow(3).hidden = true;
  filtered.getRow(7).hidden = true;
  filtered.getRow(5).hidden = true;

  wb.addWorksheet('Empty');

  const values = wb.addWorksheet('Values');
  values.addRow(['id', 'status', 'twelve', 'thirteen', 'long', 'unique_long']);
  const long = 'The quick brown fox jumps over the lazy dog again and again';
  for (let i = 1; i <= 26; i++) {
    values.addRow([
      i,
      ['open', 'closed', 'pending'][i % 3],
      `v${i % 12}`,
      `w${i % 13}`,
      i % 2 === 0 ? long : `${long}!`,
      `${long} #${i}`,
    ]);
  }

  wb.definedNames.add('Typed!$B$2:$B$7', 'Amounts');
  await wb.xlsx.writeFile(file);
  // exceljs writes no sheet-scoped names or constants: add them as Excel would.
  await patchZip(file, (name, text) =>
    name === 'xl/workbook.xml'
      ? text.replace(
          '</definedNames>',
          '<definedName name="Title" localSheetId="1">Report!$A$1</definedName>' +
            '<definedName name="TaxRate">0.2</definedName></definedNames>',
        )
      : text,
  );
  return file;
}

/** A 1904-date-system workbook with a date, a date-time and a time. */
export async function write1904Workbook(file: string): Promise<string> {
  const wb = new ExcelJS.Workbook();
  wb.properties.date1904 = true;
  const ws = wb.addWorksheet('Dates');
  ws.addRow(['day', 'stamp', 'clock']);
  ws.addRow([utc(2024, 1, 15), utc(2024, 1, 15, 8, 30, 0), 0.75]);
  ws.addRow([utc(1904, 1, 1), utc(2000, 2, 29, 12, 0, 0), 0.5]);
  ws.getColumn(1).numFmt = 'yyyy-mm-dd';
  ws.getColumn(2).numFmt = 'yyyy-mm-dd hh:mm:ss';
  ws.getColumn(3).numFmt = 'hh:mm:ss';
  await wb.xlsx.writeFile(file);
  return file;
}

/** A small workbook saved as .xlsm (exceljs writes the same package; the reader must not care). */
export async function writeXlsm(file: string): Promise<string> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Macro');
  ws.addRow(['a', 'b']);
  ws.addRow([1, 'x']);
  await wb.xlsx.writeFile(`${file}.tmp.xlsx`);
  await copyFile(`${file}.tmp.xlsx`, file);
  await rm(`${file}.tmp.xlsx`);
  return file;
}

/** `rows` data rows under a header (streaming writer), for the 5000-row profile cap. */
export async function writeLongSheet(file: string, rows: number): Promise<string> {
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: file, useSharedStrings: true });
  const ws = wb.addWorksheet('Long');
  ws.addRow(['n', 'parity', 'label']).commit();
  for (let i = 1; i <= rows; i++) {
    const row = ws.addRow([i, i % 2 === 0 ? 'even' : 'odd', `row ${i}`]);
    // Hidden rows past the profile cap must not count (hidden_rows is over the profiled rows).
    if (i % 1000 === 0) row.hidden = true;
    row.commit();
  }
  ws.commit();
  await wb.commit();
  return file;
}

/** A plain workbook for encryption and worker tests. */
export async function writeSmallWorkbook(file: string): Promise<string> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Data');
  ws.addRow(['city', 'count']);
  ws.addRow(['Oslo', 3]);
  ws.addRow(['Lima', 5]);
  await wb.xlsx.writeFile(file);
  return file;
}

/** A new temporary folder holding `small.xlsx` (writeSmallWorkbook): a WORKBOOK_ROOTS for OAuth tests. */
export async function smallWorkbookDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  await writeSmallWorkbook(path.join(dir, 'small.xlsx'));
  return dir;
}
