/** Per-sheet warnings: 20 listed, then a count, and the failure always last. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SheetWarnings, WARNINGS_PER_SHEET } from '../../../src/workbook/warnings.ts';

test('a warning names the sheet, or the sheet and the cell', () => {
  const warnings = new SheetWarnings('Data');
  warnings.add('merged cells', 'C1');
  warnings.add('hidden rows');
  assert.deepEqual(warnings.list(), ['Data!C1: merged cells', 'Data: hidden rows']);
});

test('past 20 listed, warnings are counted, also those counted without text', () => {
  const warnings = new SheetWarnings('S');
  for (let i = 0; i < WARNINGS_PER_SHEET + 3; i++) warnings.add(`w${i}`);
  warnings.addUnlisted(4);
  const list = warnings.list();
  assert.equal(list.length, WARNINGS_PER_SHEET + 1);
  assert.equal(list[WARNINGS_PER_SHEET - 1], `S: w${WARNINGS_PER_SHEET - 1}`);
  assert.equal(list.at(-1), 'S: 7 more warnings');
});

test('the first failure is always listed, after the count', () => {
  const warnings = new SheetWarnings('S');
  for (let i = 0; i < WARNINGS_PER_SHEET + 1; i++) warnings.add('x');
  warnings.fail('sheet stops at row 9');
  warnings.fail('a second failure is not kept');
  assert.deepEqual(warnings.list().slice(-2), ['S: 1 more warnings', 'S: sheet stops at row 9']);
  assert.deepEqual(new SheetWarnings('T').list(), []);
});
