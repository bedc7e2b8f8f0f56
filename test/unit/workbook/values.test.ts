/** Value-level rules of the profile: kinds, keys, cuts and number text. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  cutText,
  distinctKey,
  isBlank,
  isInt64Text,
  kindOf,
  normalizeNumberText,
  parseNumberText,
  plainNumber,
  TEXT_CUT,
} from '../../../src/workbook/values.ts';

describe('kinds and keys', () => {
  test('kindOf: booleans, safe integers, other numbers, ISO dates and date-times, strings', () => {
    assert.equal(kindOf(true), 'boolean');
    assert.equal(kindOf(3), 'integer');
    assert.equal(kindOf(2 ** 54), 'number');
    assert.equal(kindOf(1.5), 'number');
    assert.equal(kindOf('2024-01-31'), 'date');
    assert.equal(kindOf('2024-01-31T08:00:00'), 'datetime');
    assert.equal(kindOf('2024-1-31'), 'string');
    assert.equal(kindOf('12'), 'string');
  });

  test('isBlank: null, empty or whitespace text', () => {
    assert.ok(isBlank(null));
    assert.ok(isBlank(' \t'));
    assert.ok(!isBlank(0));
    assert.ok(!isBlank(false));
    assert.ok(!isBlank('x'));
  });

  test('distinctKey: trimmed text, plain numbers, true/false', () => {
    assert.equal(distinctKey('  a '), 'a');
    assert.equal(distinctKey(1.0), '1');
    assert.equal(distinctKey(false), 'false');
  });

  test('plainNumber never uses an exponent', () => {
    assert.equal(plainNumber(1e21), '1000000000000000000000');
    assert.equal(plainNumber(1.5e-7), '0.00000015');
    assert.equal(plainNumber(-2.5e-7), '-0.00000025');
    assert.equal(plainNumber(1.234e22), '12340000000000000000000');
    assert.equal(plainNumber(0.5), '0.5');
  });

  test('cutText: at most 40 code points, 39 and … when longer, surrogate pairs kept whole', () => {
    assert.equal(cutText('x'.repeat(TEXT_CUT)), 'x'.repeat(TEXT_CUT));
    assert.equal(cutText('x'.repeat(TEXT_CUT + 1)), `${'x'.repeat(TEXT_CUT - 1)}…`);
    const emoji = '😀'.repeat(TEXT_CUT);
    assert.equal(cutText(emoji), emoji);
    assert.equal(cutText('😀'.repeat(TEXT_CUT + 1)), `${'😀'.repeat(TEXT_CUT - 1)}…`);
  });
});

describe('number text', () => {
  test('trimmed, full-width folded, thousands separators dropped; only decimal floats', () => {
    assert.equal(normalizeNumberText(' 1,234.5 '), '1234.5');
    assert.equal(normalizeNumberText('１２３'), '123');
    assert.equal(normalizeNumberText('-.5e3'), '-.5e3');
    assert.equal(normalizeNumberText('0x10'), null);
    assert.equal(normalizeNumberText('12abc'), null);
    assert.equal(normalizeNumberText('  '), null);
    assert.equal(parseNumberText('1,000'), 1000);
    assert.equal(parseNumberText('1e999'), null);
    assert.equal(parseNumberText('Infinity'), null);
  });

  test('isInt64Text decides on the digits, exactly at the 64-bit bounds', () => {
    assert.ok(isInt64Text('9223372036854775807'));
    assert.ok(!isInt64Text('9223372036854775808'));
    assert.ok(isInt64Text('-9223372036854775808'));
    assert.ok(!isInt64Text('-9223372036854775809'));
    assert.ok(isInt64Text('1.5e1'));
    assert.ok(!isInt64Text('1.5'));
    assert.ok(isInt64Text('120.000'));
    assert.ok(isInt64Text('0.0e5'));
    assert.ok(!isInt64Text('1e19'));
    assert.ok(!isInt64Text('abc'));
  });
});
