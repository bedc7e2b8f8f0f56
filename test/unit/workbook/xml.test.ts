/** The XML layer every part goes through: local names, escapes, refusals and the streamed guard. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WorkbookFormatError, WorkbookLimitError } from '../../../src/workbook/errors.ts';
import {
  attr,
  MarkupGuard,
  maxTextRun,
  PartDecoder,
  parseXml,
  parseXmlStream,
  prefixedAttr,
  type Tag,
  unescapeXstring,
} from '../../../src/workbook/xml.ts';

async function* chunksOf(...parts: Array<string | Buffer>): AsyncGenerator<Buffer> {
  for (const part of parts) yield typeof part === 'string' ? Buffer.from(part) : part;
}

describe('names, attributes, escapes', () => {
  test('elements by local name; attributes by local name or by prefix', () => {
    const seen: string[] = [];
    let sheet: Tag | undefined;
    parseXml('<x:sheets xmlns:x="u"><x:sheet name="A" r:id="rId1"/></x:sheets>', 'wb.xml', {
      open(local, tag) {
        seen.push(local);
        if (local === 'sheet') sheet = tag;
      },
    });
    assert.deepEqual(seen, ['sheets', 'sheet']);
    assert.ok(sheet);
    assert.equal(attr(sheet, 'name'), 'A');
    assert.equal(attr(sheet, 'id'), 'rId1');
    assert.equal(prefixedAttr(sheet, 'id'), 'rId1');
    assert.equal(prefixedAttr(sheet, 'name'), undefined);
  });

  test('_xHHHH_ escapes are undone', () => {
    assert.equal(unescapeXstring('a_x000D_b_x0041_'), 'a\rbA');
    assert.equal(unescapeXstring('plain_x00'), 'plain_x00');
  });
});

describe('refusals', () => {
  test('a DOCTYPE, an unknown entity and malformed XML are format errors naming the part', () => {
    assert.throws(
      () => parseXml('<!DOCTYPE a [<!ENTITY e "x">]><a/>', 'p1.xml', {}),
      (error: unknown) => {
        return error instanceof WorkbookFormatError && /p1\.xml declares a DOCTYPE/.test(error.message);
      },
    );
    assert.throws(() => parseXml('<a>&boom;</a>', 'p2.xml', { text() {} }), WorkbookFormatError);
    assert.throws(() => parseXml('<a><b></a>', 'p3.xml', {}), /malformed XML in p3\.xml/);
  });

  test('UTF-16BE is refused; UTF-16LE with its mark and UTF-8 split inside a character decode', () => {
    assert.throws(() => new PartDecoder('p').write(Buffer.from([0xfe, 0xff, 0, 0x3c])), /UTF-16BE/);
    const le = new PartDecoder('p');
    assert.equal(le.write(Buffer.from('\ufeff<a/>', 'utf16le')), '\ufeff<a/>');
    assert.equal(le.utf8, false);
    const utf8 = new PartDecoder('p');
    const bytes = Buffer.from('é');
    assert.equal(utf8.write(bytes.subarray(0, 1)) + utf8.write(bytes.subarray(1)) + utf8.end(), 'é');
    assert.equal(utf8.utf8, true);
  });
});

describe('MarkupGuard and parseXmlStream', () => {
  test('a run without markup longer than the limit is refused, also across chunks', () => {
    const guard = new MarkupGuard('sheet1.xml', 10);
    guard.check(Buffer.from('<a>12345'));
    assert.throws(() => guard.check(Buffer.from('678901</a>')), WorkbookLimitError);
    const ok = new MarkupGuard('sheet1.xml', 10);
    ok.check(Buffer.from('<a>1234567890</a><b>1234567890</b>'));
  });

  test('plain until a comment, CDATA, processing instruction or DOCTYPE after the declaration', () => {
    const declared = new MarkupGuard('p', 1000);
    declared.check(Buffer.from('\ufeff<?xml version="1.0"?><a>'));
    assert.equal(declared.plain, true);
    declared.check(Buffer.from('<b/><'));
    declared.check(Buffer.from('!-- c --></a>'));
    assert.equal(declared.plain, false);
    const pi = new MarkupGuard('p', 1000);
    pi.check(Buffer.from('<a><?pi x?></a>'));
    assert.equal(pi.plain, false);
  });

  test('a streamed part is parsed across chunk boundaries; an oversized run is a limit error', async () => {
    const texts: string[] = [];
    await parseXmlStream(
      chunksOf('<a><t>hel', 'lo</t><t><![CDATA[x]]></t></a>'),
      'p',
      { text: (t) => texts.push(t) },
      {
        maxRun: 100,
      },
    );
    assert.equal(texts.join(''), 'hellox');
    await assert.rejects(
      parseXmlStream(chunksOf('<a>', 'y'.repeat(200), '</a>'), 'big.xml', {}, { maxRun: 100 }),
      (error: unknown) =>
        error instanceof WorkbookLimitError &&
        /big\.xml holds a text or tag longer than 100 bytes/.test(error.message),
    );
    await assert.rejects(
      parseXmlStream(chunksOf('<a>', '</b>'), 'bad.xml', {}, { maxRun: 100 }),
      WorkbookFormatError,
    );
  });

  test('the longest run allowed is 16 bytes a kept character, at least 1 MiB', () => {
    assert.equal(maxTextRun(10), 1024 * 1024);
    assert.equal(maxTextRun(100_000), 1_600_000);
  });
});
