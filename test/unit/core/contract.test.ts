/** The words of the contract several layers share. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DEPRECATED_TARGET_ALIASES,
  ERROR_CODES,
  isReadTarget,
  READ_INPUT_FIELDS,
  READ_TARGETS,
  TARGET_FIELDS,
} from '../../../src/core/contract.ts';

test('isReadTarget knows the advertised targets only, not the deprecated aliases', () => {
  for (const target of READ_TARGETS) assert.ok(isReadTarget(target), target);
  for (const alias of Object.keys(DEPRECATED_TARGET_ALIASES)) assert.ok(!isReadTarget(alias), alias);
  assert.ok(!isReadTarget('DAGS'));
  assert.ok(!isReadTarget(''));
});

test('every alias stands for an advertised target', () => {
  for (const target of Object.values(DEPRECATED_TARGET_ALIASES)) assert.ok(isReadTarget(target));
});

test('input fields: target first, uri last, the target fields between, no name twice', () => {
  assert.equal(READ_INPUT_FIELDS[0], 'target');
  assert.equal(READ_INPUT_FIELDS.at(-1), 'uri');
  assert.deepEqual(READ_INPUT_FIELDS.slice(1, -1), [...TARGET_FIELDS]);
  assert.equal(new Set(READ_INPUT_FIELDS).size, READ_INPUT_FIELDS.length);
  assert.equal(new Set(READ_TARGETS).size, READ_TARGETS.length);
  assert.equal(new Set(ERROR_CODES).size, ERROR_CODES.length);
  assert.ok(ERROR_CODES.includes('invalid_tool_input'));
});
