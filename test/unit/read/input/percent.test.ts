/** Percent-encoding as Go's net/url does it (Dagu builds and parses its URIs with it). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pathEscape, percentDecode, queryEscape } from '../../../../src/read/input/percent.ts';

describe('pathEscape (url.PathEscape)', () => {
  test('keeps unreserved bytes and the segment sub-delimiters $&+:=@', () => {
    assert.equal(pathEscape('etl-job_1.v2~'), 'etl-job_1.v2~');
    assert.equal(pathEscape('a$&+:=@b'), 'a$&+:=@b');
  });

  test("escapes what encodeURIComponent leaves alone (!'()*), the slash, space, and UTF-8 bytes in upper-case hex", () => {
    assert.equal(pathEscape("!'()*"), '%21%27%28%29%2A');
    assert.equal(pathEscape('a/b c'), 'a%2Fb%20c');
    assert.equal(pathEscape('é€'), '%C3%A9%E2%82%AC');
  });
});

describe('queryEscape (url.QueryEscape)', () => {
  test('space as +, and every reserved byte escaped, the path-safe ones included', () => {
    assert.equal(queryEscape('a b'), 'a+b');
    assert.equal(queryEscape('a+b&c=d:@$'), 'a%2Bb%26c%3Dd%3A%40%24');
    assert.equal(queryEscape('plain-1.2_~'), 'plain-1.2_~');
  });
});

describe('percentDecode', () => {
  test('decodes escapes; + is a space only in query components', () => {
    assert.equal(percentDecode('a%2Fb+c', false), 'a/b+c');
    assert.equal(percentDecode('a%2Fb+c', true), 'a/b c');
    assert.equal(percentDecode('plain', true), 'plain');
  });

  test('a % without two hex digits, or escapes that are not UTF-8, are undefined', () => {
    assert.equal(percentDecode('100%', false), undefined);
    assert.equal(percentDecode('%zz', true), undefined);
    assert.equal(percentDecode('%C3', false), undefined);
    assert.equal(percentDecode('%FF%FE', false), undefined);
  });

  test('round-trips what the escapers produce', () => {
    for (const value of ['a b/c', "é!'()*", '$&+:=@', '😀 %']) {
      assert.equal(percentDecode(pathEscape(value), false), value);
      assert.equal(percentDecode(queryEscape(value), true), value);
    }
  });
});
