/** Caller values quoted in error messages: JSON-quoted, cut after 64 characters. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shownValue } from '../../../src/core/shown-value.ts';

test('a short value is JSON-quoted, escapes included', () => {
  assert.equal(shownValue('etl'), '"etl"');
  assert.equal(shownValue('a"b\n'), '"a\\"b\\n"');
  assert.equal(shownValue(''), '""');
});

test('a value over 64 characters is cut and marked with an ellipsis; 64 is kept whole', () => {
  assert.equal(shownValue('x'.repeat(64)), `"${'x'.repeat(64)}"`);
  assert.equal(shownValue('y'.repeat(65)), `"${'y'.repeat(64)}…"`);
  assert.equal(shownValue('z'.repeat(10_000)).length, 64 + 3);
});

test('a cut that falls inside an emoji keeps the emoji whole: 64 code points, then the ellipsis', () => {
  const kept = `${'x'.repeat(63)}😀`;
  assert.equal(shownValue(`${kept}tail`), `"${kept}…"`);
  assert.equal(shownValue('😀'.repeat(64)), `"${'😀'.repeat(64)}"`);
});
