/**
 * The skimmer (rows past the profile cap) must see exactly what saxes sees: same elements, same
 * attributes, same text, wherever the chunk boundaries fall; and a sheet read with the hand-over
 * must profile exactly like one read by saxes alone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { columnOfRef } from '../../../src/workbook/cells.ts';
import { SharedStrings } from '../../../src/workbook/shared-strings.ts';
import { SheetProfiler } from '../../../src/workbook/sheet-profile.ts';
import { SheetSkimmer, type SkimHandler } from '../../../src/workbook/sheet-skim.ts';
import { lastRowEnd, streamSheet } from '../../../src/workbook/sheet-stream.ts';
import { createParser } from '../../../src/workbook/xml.ts';

const TRICKY = [
  '<row r="5001" spans="1:3" hidden="1"><c r="A5001" t="s"><v>0</v></c>',
  '<c r="B5001" t="inlineStr"><is><t xml:space="preserve"> a&amp;b &#x4E2D;&#25991; é </t></is></c></row>',
  '<!-- a comment with </row> and <c> inside -->\n',
  '<row r="5002"><c r="C5002" s="1"/><c t="str"><f>A1&lt;2</f><v><![CDATA[x < y]]></v></c>',
  "<c r='E5002' t='e'><v>#N/A</v></c></row>",
  '<?pi data?>',
  '<row><c r="AB5003"><v>1.5</v></c><c r="AC5003" t="inlineStr"><is><r><t>ri</t></r><r><t>ch</t></r>',
  '<rPh sb="0" eb="1"><t>フリ</t></rPh></is></c></row>',
  '<row r="5004" hidden="true" ><c r = "XFD5004" t = "b" ><v >1</v ></c ></row >',
  '<x:row r="5005" xmlns:x="urn:x"><x:c r="B5005"><x:v>7</x:v></x:c></x:row>',
].join('');

/** Both tokenizers' events in one notation; adjacent text merged. */
class Log {
  readonly entries: string[] = [];
  text(t: string): void {
    const last = this.entries.length - 1;
    if (last >= 0 && this.entries[last]!.startsWith('"'))
      this.entries[last] = `${this.entries[last]!.slice(0, -1)}${t}"`;
    else this.entries.push(`"${t}"`);
  }
  push(entry: string): void {
    this.entries.push(entry);
  }
}

function saxesLog(xml: string): string[] {
  const log = new Log();
  const parser = createParser('test', {
    open(local, tag) {
      const { r, t, hidden } = tag.attributes;
      if (local === 'c') log.push(`c ${r === undefined ? 'next' : columnOfRef(r)} ${t ?? '-'}`);
      else if (local === 'row')
        log.push(`row ${r === undefined ? 'next' : Number(r)} ${hidden === '1' || hidden === 'true'}`);
      else log.push(`<${local}>`);
    },
    close: (local) => log.push(`</${local}>`),
    text: (t) => log.text(t),
  });
  parser.write(`<worksheet><sheetData>${xml}</sheetData></worksheet>`).close();
  return log.entries;
}

function skimLog(pieces: readonly Buffer[]): string[] {
  const log = new Log();
  const handler: SkimHandler & { done: boolean } = {
    done: false,
    collecting: true,
    sensing: false,
    onNumber: () => false,
    openRow: (row, hidden) => log.push(`row ${row ?? 'next'} ${hidden}`),
    openCell: (col, _ref, type) => log.push(`c ${col ?? 'next'} ${type ?? '-'}`),
    open: (local) => log.push(`<${local}>`),
    close(local) {
      if (local === 'sheetData') handler.done = true;
      else log.push(`</${local}>`);
    },
    onText: (t) => log.text(t),
  };
  const skimmer = new SheetSkimmer('test', handler, ['worksheet', 'sheetData']);
  for (const piece of pieces) skimmer.write(piece);
  skimmer.end();
  return log.entries;
}

describe('SheetSkimmer', () => {
  const bytes = Buffer.from(`${TRICKY}</sheetData></worksheet>`);
  const wrapper = new Set(['<worksheet>', '<sheetData>', '</sheetData>', '</worksheet>']);
  const expected = saxesLog(TRICKY).filter((entry) => !wrapper.has(entry));

  it('produces the events saxes produces', () => {
    assert.deepEqual(skimLog([bytes]), expected);
    assert.ok(expected.includes('" a&b 中文 é "'));
    assert.ok(expected.includes('"x < y"'));
    assert.ok(expected.includes('c 16383 b'));
  });

  it('does so wherever one chunk boundary falls, even inside a character, entity, tag or CDATA', () => {
    for (let cut = 1; cut < bytes.length; cut++) {
      assert.deepEqual(skimLog([bytes.subarray(0, cut), bytes.subarray(cut)]), expected, `cut at ${cut}`);
    }
  });

  it('does so when fed one byte at a time', () => {
    const pieces = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
    assert.deepEqual(skimLog(pieces), expected);
  });

  it('refuses malformed input', () => {
    const bad = (xml: string) => () => skimLog([Buffer.from(xml)]);
    assert.throws(bad('<row><c></row></sheetData>'), /malformed XML/);
    assert.throws(bad('<row><c><v>&nbsp;</v></c></row></sheetData>'), /malformed XML/);
    assert.throws(bad('<row><c><v>a & b</v></c></row></sheetData>'), /malformed XML/);
    assert.throws(bad('<!DOCTYPE x [<!ENTITY a "b">]><row/></sheetData>'), /malformed XML/);
    assert.throws(bad('<row r="1"><c r="A1"'), /malformed XML/);
    assert.throws(bad('<row a=b></row></sheetData>'), /malformed XML/);
  });

  it('finds the last </row> boundary, prefixed or not', () => {
    assert.equal(lastRowEnd(Buffer.from('<row></row><row>')), 11);
    assert.equal(lastRowEnd(Buffer.from('<x:row></x:row>tail')), 15);
    assert.equal(lastRowEnd(Buffer.from('<t>arrow></t>')), -1);
    assert.equal(lastRowEnd(Buffer.from('no rows')), -1);
  });
});

/** A sheet of `rows` numbered rows, then the tricky rows, in chunks of `chunk` bytes. */
function longSheet(rows: number, comment: boolean): string {
  const parts = ['<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="urn:main"><sheetData>'];
  if (comment) parts.push('<!-- forces saxes throughout -->');
  parts.push(
    '<row r="1"><c r="A1" t="inlineStr"><is><t>n</t></is></c><c r="B1" t="inlineStr"><is><t>label</t></is></c></row>',
  );
  for (let r = 2; r <= rows; r++) {
    parts.push(
      `<row r="${r}"${r % 700 === 0 ? ' hidden="1"' : ''}><c r="A${r}"><v>${r - 1}</v></c><c r="B${r}" t="s"><v>${r % 3}</v></c></row>`,
    );
  }
  parts.push(TRICKY.replaceAll('500', '900'));
  // Trailing rows with nothing or only blank text do not extend the block.
  parts.push(
    '<row r="9100"><c r="A9100" t="s"><v>1</v></c><c r="B9100" t="s"><v>2</v></c></row><row r="9101"><c r="C9101" t="inlineStr"><is><t>&#160;</t></is></c></row>',
  );
  parts.push('</sheetData><mergeCells count="1"><mergeCell ref="A1:B1"/></mergeCells></worksheet>');
  return parts.join('');
}

/**
 * A two-column sheet whose every row also holds cells without a value: formulas never calculated
 * (`<f>` with an empty or no `<v>`, as openpyxl writes them) and empty `<v>` of every type. B3
 * and K in the row just past `rows` hold a number that is no number; a last row holds only a formula.
 */
function noCacheSheet(rows: number, comment: boolean): string {
  const parts = ['<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="urn:main"><sheetData>'];
  if (comment) parts.push('<!-- forces saxes throughout -->');
  parts.push(
    '<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c><c r="B1" t="inlineStr"><is><t>b</t></is></c></row>',
  );
  const empty = (r: number) =>
    `<c r="C${r}"><f>1+1</f><v/></c><c r="D${r}" t="d"><v></v></c><c r="E${r}" t="b"><f>TRUE()</f><v> </v></c>` +
    `<c r="F${r}" t="e"><f>1/0</f><v/></c><c r="G${r}" t="s"><v></v></c><c r="H${r}" t="n"><f>A1</f></c>` +
    `<c r="I${r}" s="1"><v>\n</v></c>`;
  for (let r = 2; r <= rows; r++) {
    const b = r === 3 ? 'abc' : '1.5';
    parts.push(`<row r="${r}"><c r="A${r}"><v>${r}</v></c><c r="B${r}"><v>${b}</v></c>${empty(r)}</row>`);
  }
  parts.push(`<row r="${rows + 1}">${empty(rows + 1)}<c r="K${rows + 1}"><v>1e999</v></c></row>`);
  parts.push(`<row r="${rows + 3}"><c r="L${rows + 3}"><f>1/0</f><v></v></c></row>`);
  parts.push('</sheetData></worksheet>');
  return parts.join('');
}

async function profileOf(xml: string, chunk: number) {
  const strings = new SharedStrings();
  strings.add('s0', false);
  strings.add('s1', false);
  strings.add('  ', false);
  const profiler = new SheetProfiler('Long', { dateSystem: '1900', maxColumns: 512 });
  const bytes = Buffer.from(xml);
  async function* chunks() {
    for (let i = 0; i < bytes.length; i += chunk) yield bytes.subarray(i, i + chunk);
  }
  const { skimmed } = await streamSheet(
    chunks(),
    'sheet.xml',
    { strings, dateKinds: [], dateSystem: '1900', maxCellChars: 32_767 },
    profiler,
  );
  return { skimmed, ...profiler.finish() };
}

describe('streamSheet hand-over', () => {
  it('profiles a long sheet exactly as saxes alone does', async () => {
    for (const chunk of [4096, 65_536, 1_000_003]) {
      const skim = await profileOf(longSheet(8000, false), chunk);
      const plain = await profileOf(longSheet(8000, true), chunk);
      assert.equal(skim.skimmed, chunk < 1_000_003, `chunk ${chunk}`);
      assert.equal(plain.skimmed, false);
      assert.deepEqual(skim.sheet, plain.sheet);
      assert.deepEqual(skim.warnings, plain.warnings);
      assert.equal(skim.sheet.row_count, 9100 - 1);
      assert.equal(skim.sheet.range, 'Long!A1:XFD9100');
      assert.equal(skim.sheet.used_range, 'Long!A1:XFD9101');
      assert.equal(skim.sheet.profile_truncated, true);
      assert.equal(skim.sheet.hidden_rows, 7);
    }
  });
});

describe('cells without a value (a formula never calculated, an empty <v>)', () => {
  it('are empty before and past the profile cap, skimmed or not', async () => {
    const small = await profileOf(noCacheSheet(11, false), 65_536);
    assert.equal(small.sheet.range, 'Long!A1:B11');
    assert.equal(small.sheet.used_range, 'Long!A1:K12');
    assert.deepEqual(small.sheet.headers, ['a', 'b']);
    assert.equal(small.sheet.row_count, 10);
    assert.deepEqual(small.sheet.sample?.slice(0, 2), [
      { _row: 2, a: 2, b: 1.5 },
      { _row: 3, a: 3, b: null },
    ]);
    // Only a text that is no number warns (K12 lies outside the block); an empty <v> is no error.
    const warnings = ['Long!B3: error value invalid number'];
    assert.deepEqual(small.warnings, warnings);
    for (const chunk of [4096, 65_536]) {
      const skim = await profileOf(noCacheSheet(8000, false), chunk);
      const plain = await profileOf(noCacheSheet(8000, true), chunk);
      assert.equal(skim.skimmed, true);
      assert.equal(plain.skimmed, false);
      assert.deepEqual(skim.sheet, plain.sheet);
      assert.deepEqual(skim.warnings, plain.warnings);
      assert.equal(skim.sheet.range, 'Long!A1:B8000');
      assert.equal(skim.sheet.used_range, 'Long!A1:K8001');
      assert.deepEqual(skim.sheet.headers, small.sheet.headers);
      assert.deepEqual(skim.sheet.types, small.sheet.types);
      assert.equal(skim.sheet.row_count, 7999);
      assert.equal(skim.sheet.profile_truncated, true);
      assert.deepEqual(skim.warnings, warnings);
    }
  });

  it('are sensed past the cap without decoding plain numbers, and decoded otherwise', () => {
    const events: string[] = [];
    let text = '';
    const handler: SkimHandler = {
      done: false,
      collecting: false,
      sensing: false,
      openRow: () => {},
      openCell: () => {},
      open(local) {
        if (local === 'v') Object.assign(handler, { sensing: true });
        text = '';
      },
      close(local) {
        if (local === 'sheetData') Object.assign(handler, { done: true });
        if (local === 'v') {
          Object.assign(handler, { sensing: false });
          events.push(text);
        }
      },
      onText: (t) => {
        text += t;
      },
      onNumber: () => {
        if (text !== '') return false;
        text = '#';
        return true;
      },
    };
    const skimmer = new SheetSkimmer('test', handler, ['worksheet', 'sheetData']);
    skimmer.write(
      Buffer.from(
        '<row><c><v>12</v></c><c><v>-3.25</v></c><c><v> 7</v></c><c><v>1e5</v></c><c><v>1.</v></c><c><v/></c>' +
          '<c><v>&#49;</v></c><c><v>1<!-- -->2</v></c><c><v><![CDATA[4]]>5</v></c><c><v>1234567890123456789012</v></c></row></sheetData>',
      ),
    );
    skimmer.end();
    assert.deepEqual(events, ['#', '#', ' 7', '1e5', '1.', '', '1', '12', '45', '1234567890123456789012']);
  });
});
