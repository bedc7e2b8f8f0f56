/** Caller text cut for logs, the audit and error messages: whole code points only, never a lone surrogate. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cutToCodePoints, hasLoneSurrogate, wellFormed } from '../../../src/core/code-points.ts';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

test('cutToCodePoints keeps text of at most max code points whole and cuts longer text to max', () => {
  assert.equal(cutToCodePoints('', 3), '');
  assert.equal(cutToCodePoints('abc', 3), 'abc');
  assert.equal(cutToCodePoints('abcd', 3), 'abc');
  // Three emoji are six UTF-16 units and three code points: nothing to cut.
  assert.equal(cutToCodePoints('😀😀😀', 3), '😀😀😀');
  assert.equal(cutToCodePoints('😀😀😀😀', 3), '😀😀😀');
  assert.equal(cutToCodePoints('a😀b😀', 2), 'a😀');
  assert.equal(cutToCodePoints('abc', 0), '');
});

test('cutToCodePoints never ends between the halves of a pair, wherever the pair falls', () => {
  for (let at = 0; at < 10; at++) {
    const text = `${'x'.repeat(at)}😀${'y'.repeat(10)}`;
    for (let max = 0; max <= text.length; max++) {
      const cut = cutToCodePoints(text, max);
      assert.doesNotMatch(cut, LONE_SURROGATE, `pair at ${at}, cut at ${max}`);
      assert.equal(
        Array.from(cut).length,
        Math.min(max, Array.from(text).length),
        `pair at ${at}, cut at ${max}`,
      );
      assert.ok(text.startsWith(cut));
    }
  }
});

test('cutToCodePoints counts a lone surrogate already in the text as one code point and keeps it as it is', () => {
  assert.equal(cutToCodePoints('a\ud83db', 2), 'a\ud83d');
  assert.equal(cutToCodePoints('\ude00\ude00x', 2), '\ude00\ude00');
});

test('wellFormed replaces each unpaired surrogate with U+FFFD and leaves pairs and other text alone', () => {
  assert.equal(wellFormed('plain'), 'plain');
  assert.equal(wellFormed('x😀y'), 'x😀y');
  assert.equal(wellFormed('x\ud83d'), 'x\uFFFD');
  assert.equal(wellFormed('\ude00x'), '\uFFFDx');
  assert.equal(wellFormed('\ude00\ud83d'), '\uFFFD\uFFFD');
  assert.equal(wellFormed('\ud83d\ud83d\ude00'), '\uFFFD😀');
});

test('hasLoneSurrogate: an unpaired half anywhere, never a whole pair', () => {
  for (const text of ['x\ud83d', '\ude00x', 'a\ud83d\ud83db', '\ude00\ud83d'])
    assert.equal(hasLoneSurrogate(text), true, text);
  for (const text of ['', 'plain', 'x😀y', '😀😀']) assert.equal(hasLoneSurrogate(text), false, text);
});
