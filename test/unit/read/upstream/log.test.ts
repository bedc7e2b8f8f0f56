/** Dagu's `Log` body read with defaults, and refused without content. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ReadError } from '../../../../src/read/errors.ts';
import { EMPTY_LOG, parseLogBody } from '../../../../src/read/upstream/log.ts';

test('a full body is read as is', () => {
  assert.deepEqual(
    parseLogBody({ content: 'a\nb', lineCount: 2, totalLines: 10, hasMore: true, isEstimate: true }),
    { content: 'a\nb', lineCount: 2, totalLines: 10, hasMore: true, isEstimate: true },
  );
});

test('an empty file answers content only: the counters default to zero and false', () => {
  assert.deepEqual(parseLogBody({ content: '' }), { ...EMPTY_LOG });
});

test('counters that are not non-negative finite numbers read as zero; a total never below the lines returned', () => {
  assert.deepEqual(
    parseLogBody({ content: 'x', lineCount: 5, totalLines: 3, hasMore: 'yes', isEstimate: 1 }),
    { content: 'x', lineCount: 5, totalLines: 5, hasMore: false, isEstimate: false },
  );
  const odd = parseLogBody({ content: 'x', lineCount: -1, totalLines: Number.POSITIVE_INFINITY });
  assert.equal(odd.lineCount, 0);
  assert.equal(odd.totalLines, 0);
});

test('a body without string content is an internal error', () => {
  for (const body of [null, [], 'text', { content: 3 }, {}]) {
    assert.throws(
      () => parseLogBody(body),
      (error: unknown) => error instanceof ReadError && error.code === 'internal_error',
      JSON.stringify(body),
    );
  }
});
