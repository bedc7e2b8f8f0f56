/** Cell addresses, columns and ranges. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  cellAddress,
  columnLetters,
  columnOfRef,
  MAX_COLUMNS,
  quoteSheetName,
  rangeAddress,
} from '../../../src/workbook/cells.ts';

test('column letters run A…Z, AA…, up to XFD', () => {
  assert.equal(columnLetters(0), 'A');
  assert.equal(columnLetters(25), 'Z');
  assert.equal(columnLetters(26), 'AA');
  assert.equal(columnLetters(701), 'ZZ');
  assert.equal(columnLetters(MAX_COLUMNS - 1), 'XFD');
  assert.equal(cellAddress(27, 12), 'AB12');
});

test('columnOfRef reads the column of a reference, $ and lower case allowed, and refuses what is past the grid', () => {
  assert.equal(columnOfRef('A1'), 0);
  assert.equal(columnOfRef('$AB$12'), 27);
  assert.equal(columnOfRef('xfd1'), MAX_COLUMNS - 1);
  assert.equal(columnOfRef('XFE1'), -1);
  assert.equal(columnOfRef('12'), -1);
  assert.equal(columnOfRef(''), -1);
  for (let col = 0; col < 1000; col += 37) assert.equal(columnOfRef(cellAddress(col, 1)), col);
});

test('sheet names are quoted unless plain, and never when they could be read as a cell', () => {
  assert.equal(quoteSheetName('Sales'), 'Sales');
  assert.equal(quoteSheetName('Q1.data_x'), 'Q1.data_x');
  assert.equal(quoteSheetName('Umsätze'), 'Umsätze');
  assert.equal(quoteSheetName('My Sheet'), "'My Sheet'");
  assert.equal(quoteSheetName("Bob's"), "'Bob''s'");
  assert.equal(quoteSheetName('AB12'), "'AB12'");
  assert.equal(quoteSheetName('2024'), "'2024'");
  assert.equal(rangeAddress('My Sheet', 0, 1, 2, 10), "'My Sheet'!A1:C10");
});
