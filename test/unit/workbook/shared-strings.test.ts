/** The shared-string table: compact storage, rich text, phonetic guides, cuts and limits. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WorkbookLimitError } from '../../../src/workbook/errors.ts';
import { readSharedStrings, SharedStrings } from '../../../src/workbook/shared-strings.ts';

async function* chunksOf(...parts: string[]): AsyncGenerator<Buffer> {
  for (const part of parts) yield Buffer.from(part);
}

const LIMITS = { maxSharedStrings: 100, maxCellChars: 1000 };

describe('SharedStrings', () => {
  test('stores any number of strings, grows past its first buffers, and tells empty from blank', () => {
    const table = new SharedStrings();
    const long = 'ü'.repeat(40_000);
    for (let i = 0; i < 3000; i++) table.add(i % 1000 === 0 ? long : `s${i}`, false);
    table.add('', false);
    table.add('  ', true);
    assert.equal(table.length, 3002);
    assert.equal(table.get(0), long);
    assert.equal(table.get(2999), 's2999');
    assert.equal(table.get(2000), long);
    assert.ok(table.isEmpty(3000) && table.isBlank(3000));
    assert.ok(!table.isEmpty(3001) && table.isBlank(3001));
    assert.ok(!table.isBlank(1));
    assert.deepEqual([...table.cut], [3001]);
  });
});

describe('readSharedStrings', () => {
  test('plain and rich-text items, phonetic guides left out, _xHHHH_ undone, split across chunks', async () => {
    const table = await readSharedStrings(
      chunksOf(
        '<sst xmlns="u" uniqueCount="3"><si><t>Hel',
        'lo</t></si><si><r><t>Bo</t></r><r><t>ld</t></r><rPh><t>ぼ</t></rPh></si>',
        '<si><t>a_x000A_b</t></si></sst>',
      ),
      'xl/sharedStrings.xml',
      LIMITS,
    );
    assert.deepEqual([table.get(0), table.get(1), table.get(2)], ['Hello', 'Bold', 'a\nb']);
  });

  test('text over the cell limit is cut and marked', async () => {
    const table = await readSharedStrings(
      chunksOf(`<sst><si><t>${'x'.repeat(20)}</t></si></sst>`),
      'sst.xml',
      { maxSharedStrings: 5, maxCellChars: 8 },
    );
    assert.equal(table.get(0), 'x'.repeat(8));
    assert.ok(table.cut.has(0));
  });

  test('more strings than allowed, declared or found, is a limit error', async () => {
    await assert.rejects(
      readSharedStrings(chunksOf('<sst uniqueCount="6"></sst>'), 'sst.xml', {
        maxSharedStrings: 5,
        maxCellChars: 8,
      }),
      (error: unknown) =>
        error instanceof WorkbookLimitError && error.message === '6 shared strings, more than 5',
    );
    await assert.rejects(
      readSharedStrings(chunksOf(`<sst>${'<si><t>a</t></si>'.repeat(3)}</sst>`), 'sst.xml', {
        maxSharedStrings: 2,
        maxCellChars: 8,
      }),
      /more than 2 shared strings/,
    );
  });
});
