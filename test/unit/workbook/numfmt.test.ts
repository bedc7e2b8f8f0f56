/** Which number formats make a number a date, a time or both. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyFormatCode, classifyNumFmt } from '../../../src/workbook/numfmt.ts';

describe('classifyFormatCode', () => {
  test('dates, times and date-times by their tokens', () => {
    assert.equal(classifyFormatCode('yyyy-mm-dd'), 'date');
    assert.equal(classifyFormatCode('d-mmm'), 'date');
    assert.equal(classifyFormatCode('mmm yyyy'), 'date');
    assert.equal(classifyFormatCode('hh:mm:ss'), 'time');
    assert.equal(classifyFormatCode('h:mm AM/PM'), 'time');
    assert.equal(classifyFormatCode('[h]:mm'), 'time');
    assert.equal(classifyFormatCode('yyyy-mm-dd hh:mm'), 'datetime');
  });

  test('m is a minute next to hours or seconds, a month otherwise', () => {
    assert.equal(classifyFormatCode('mm'), 'date');
    assert.equal(classifyFormatCode('mm:ss'), 'time');
  });

  test('literals, escapes, fills, colours and later sections do not count', () => {
    assert.equal(classifyFormatCode('0.00" days"'), null);
    assert.equal(classifyFormatCode('\\d0'), null);
    assert.equal(classifyFormatCode('_y0*d'), null);
    assert.equal(classifyFormatCode('[Red][<100]0.0'), null);
    assert.equal(classifyFormatCode('0;yyyy'), null);
    assert.equal(classifyFormatCode('General'), null);
    assert.equal(classifyFormatCode('0.00E+00'), null);
    assert.equal(classifyFormatCode('[$-409]yyyy'), 'date');
  });
});

describe('classifyNumFmt', () => {
  test('built-in ids have their fixed meaning; unknown ones none', () => {
    assert.equal(classifyNumFmt(14, undefined), 'date');
    assert.equal(classifyNumFmt(20, undefined), 'time');
    assert.equal(classifyNumFmt(22, undefined), 'datetime');
    assert.equal(classifyNumFmt(57, undefined), 'date');
    assert.equal(classifyNumFmt(2, undefined), null);
    assert.equal(classifyNumFmt(164, undefined), null);
  });

  test("the workbook's own code for an id wins over the built-in meaning", () => {
    assert.equal(classifyNumFmt(14, '0.00'), null);
    assert.equal(classifyNumFmt(164, 'hh:mm'), 'time');
  });
});
