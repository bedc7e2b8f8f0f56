/** What a file is from its first bytes. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SNIFF_BYTES, sniff } from '../../../src/workbook/sniff.ts';

test('zip (local header or empty-zip end record), CFB, empty, other', () => {
  assert.equal(sniff(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 0, 0])), 'zip');
  assert.equal(sniff(Buffer.from([0x50, 0x4b, 0x05, 0x06])), 'zip');
  assert.equal(sniff(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])), 'cfb');
  assert.equal(sniff(Buffer.alloc(0)), 'empty');
  assert.equal(sniff(Buffer.from('PK')), 'other');
  assert.equal(sniff(Buffer.from([0x50, 0x4b, 0x07, 0x08])), 'other');
  assert.equal(sniff(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a])), 'other');
  assert.equal(sniff(Buffer.from('name,value\n')), 'other');
  assert.equal(SNIFF_BYTES, 8);
});
