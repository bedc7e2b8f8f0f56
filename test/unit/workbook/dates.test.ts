/** Excel serial dates and the date texts the profile accepts, as naive wall time. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  formatDateTime,
  ISO_DATE,
  ISO_DATETIME,
  parseDateText,
  serialToEpochMs,
  serialToIso,
} from '../../../src/workbook/dates.ts';

describe('serials', () => {
  test('the 1900 system, with Excel’s fictitious 1900-02-29 (serial 60)', () => {
    assert.equal(serialToIso(1, 'date', '1900'), '1900-01-01');
    assert.equal(serialToIso(59, 'date', '1900'), '1900-02-28');
    assert.equal(serialToIso(61, 'date', '1900'), '1900-03-01');
    assert.equal(serialToIso(45292, 'date', '1900'), '2024-01-01');
  });

  test('the 1904 system counts from 1904-01-01', () => {
    assert.equal(serialToIso(0, 'date', '1904'), '1904-01-01');
    assert.equal(serialToIso(45292 - 1462, 'date', '1904'), '2024-01-01');
  });

  test('outside Excel’s range, negative or not finite: no date', () => {
    assert.equal(serialToEpochMs(-1, '1900'), null);
    assert.equal(serialToEpochMs(Number.NaN, '1900'), null);
    assert.equal(serialToEpochMs(2_958_466, '1900'), null);
    assert.notEqual(serialToEpochMs(2_958_465, '1900'), null);
    assert.equal(serialToEpochMs(2_958_466 - 1462, '1904'), null);
  });

  test('rounded to whole seconds; a fraction under a date format gives a date-time; time formats give the time of day', () => {
    assert.equal(serialToIso(45292 + (5 * 60 + 5.999) / 86_400, 'datetime', '1900'), '2024-01-01T00:05:06');
    assert.equal(serialToIso(45292.5, 'date', '1900'), '2024-01-01T12:00:00');
    assert.equal(serialToIso(1.75, 'time', '1900'), '18:00:00');
    assert.equal(serialToIso(45292, 'datetime', '1900'), '2024-01-01T00:00:00');
  });
});

describe('parseDateText', () => {
  const iso = (text: string) => {
    const ms = parseDateText(text);
    return ms === null ? null : formatDateTime(ms);
  };

  test('ISO and slashed dates, date-times with T or space, RFC 3339 with its offset dropped', () => {
    assert.equal(iso('2024-02-29'), '2024-02-29T00:00:00');
    assert.equal(iso('2024/2/9'), '2024-02-09T00:00:00');
    assert.equal(iso('2024-01-02 03:04'), '2024-01-02T03:04:00');
    assert.equal(iso('2024-01-02T03:04:05'), '2024-01-02T03:04:05');
    assert.equal(iso('2024-01-02T03:04:05.123+09:00'), '2024-01-02T03:04:05');
    assert.equal(iso('0050-01-01'), '0050-01-01T00:00:00');
  });

  test('impossible dates and mixed separators are no dates', () => {
    for (const text of [
      '2023-02-29',
      '2024-13-01',
      '2024-01-32',
      '2024-01-01 24:00',
      '2024/01-02',
      '01/02/2024',
      'soon',
    ]) {
      assert.equal(parseDateText(text), null, text);
    }
  });

  test('the ISO patterns recognise exactly the profile’s output shapes', () => {
    assert.ok(ISO_DATE.test('2024-01-01'));
    assert.ok(!ISO_DATE.test('2024-1-1'));
    assert.ok(ISO_DATETIME.test('2024-01-01T00:00:00'));
    assert.ok(!ISO_DATETIME.test('2024-01-01 00:00:00'));
  });
});
