/**
 * streamSheet (src/workbook/sheet-stream.ts) as a reader of chunks: when it hands over to the skimmer
 * and when it must not, that it stops reading at `</sheetData>`, and which errors leave it. That the
 * hand-over profiles exactly like saxes alone, and lastRowEnd, are tested in sheet-skim.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkbookFormatError } from '../../../src/workbook/errors.ts';
import { SharedStrings } from '../../../src/workbook/shared-strings.ts';
import { PROFILE_ROWS, SheetProfiler } from '../../../src/workbook/sheet-profile.ts';
import { SheetDataError, streamSheet } from '../../../src/workbook/sheet-stream.ts';

/** A sheet with a header row and `rows` data rows; `before` goes just before `<sheetData>`. */
function sheet(rows: number, before = ''): string {
  const parts = [`<?xml version="1.0" encoding="UTF-8"?><worksheet>${before}<sheetData>`];
  parts.push(
    '<row r="1"><c r="A1" t="inlineStr"><is><t>id</t></is></c><c r="B1" t="inlineStr"><is><t>n</t></is></c></row>',
  );
  for (let r = 2; r <= rows + 1; r++)
    parts.push(`<row r="${r}"><c r="A${r}"><v>${r}</v></c><c r="B${r}"><v>1</v></c></row>`);
  parts.push('</sheetData></worksheet>');
  return parts.join('');
}

/** Streams `xml` in chunks of `size` bytes (then `extra` chunks), counting the chunks taken. */
async function stream(xml: string, size: number, extra: Buffer[] = []) {
  const bytes = Buffer.from(xml);
  let taken = 0;
  async function* chunks() {
    for (let i = 0; i < bytes.length; i += size) {
      taken++;
      yield bytes.subarray(i, i + size);
    }
    for (const chunk of extra) {
      taken++;
      yield chunk;
    }
  }
  const profiler = new SheetProfiler('S', { dateSystem: '1900', maxColumns: 512 });
  const context = {
    strings: new SharedStrings(),
    dateKinds: [],
    dateSystem: '1900' as const,
    maxCellChars: 1000,
  };
  const { skimmed } = await streamSheet(chunks(), 'sheet.xml', context, profiler);
  return { skimmed, taken, ...profiler.finish() };
}

describe('streamSheet', () => {
  it('a sheet within the profile cap is read by saxes alone', async () => {
    const { skimmed, sheet: result } = await stream(sheet(100), 512);
    assert.equal(skimmed, false);
    assert.equal(result.row_count, 100);
    assert.equal(result.profile_truncated, undefined);
  });

  it('a longer sheet is handed over to the skimmer once the profile is full', async () => {
    const { skimmed, sheet: result } = await stream(sheet(PROFILE_ROWS + 300), 4096);
    assert.equal(skimmed, true);
    assert.equal(result.row_count, PROFILE_ROWS + 300);
  });

  it('never hands over after a comment, where a literal </row> could hide', async () => {
    const { skimmed, sheet: result } = await stream(sheet(PROFILE_ROWS + 300, '<!-- </row> -->'), 4096);
    assert.equal(skimmed, false);
    assert.equal(result.row_count, PROFILE_ROWS + 300);
  });

  it('stops reading at </sheetData>: what follows is never taken', async () => {
    const xml = sheet(3);
    const { taken } = await stream(xml, xml.length, [Buffer.from('<not xml at all'), Buffer.from('>>>')]);
    assert.equal(taken, 1);
  });

  it('malformed XML is a WorkbookFormatError naming the part; a data error passes as it is', async () => {
    await assert.rejects(stream('<worksheet><sheetData><row></sheetData>', 8), (error: unknown) => {
      assert.ok(error instanceof WorkbookFormatError);
      assert.equal(error.message, 'malformed XML in sheet.xml');
      return true;
    });
    await assert.rejects(
      stream('<worksheet><sheetData><row r="2"/><row r="1"/></sheetData></worksheet>', 8),
      SheetDataError,
    );
  });
});
