/** The query parameter building blocks target definitions declare their parameters with. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { int, LABELS, LOG_LINES, once, oneOf, TEXT } from '../../../src/read/query-params.ts';

test('each builder declares one non-repeatable parameter with its rule', () => {
  assert.deepEqual(int(0), { rule: { kind: 'integer', min: 0 }, repeatable: false });
  assert.deepEqual(int(1, 9), { rule: { kind: 'integer', min: 1, max: 9 }, repeatable: false });
  assert.equal('max' in int(3).rule, false);
  assert.deepEqual(oneOf('a', 'b'), { rule: { kind: 'oneOf', values: ['a', 'b'] }, repeatable: false });
  assert.deepEqual(TEXT, { rule: { kind: 'text' }, repeatable: false });
  assert.deepEqual(LABELS, { rule: { kind: 'labels' }, repeatable: false });
  assert.deepEqual(once({ kind: 'unixSeconds' }), { rule: { kind: 'unixSeconds' }, repeatable: false });
});

test('log positions take 1 through 10000 lines', () => {
  assert.deepEqual(LOG_LINES.rule, { kind: 'integer', min: 1, max: 10000 });
});
