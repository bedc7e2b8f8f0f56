import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expiryOf } from '../../../../src/oauth/state/record-store.ts';

test('a lifetime in seconds is an expiry in milliseconds; none, or an infinite one, never expires', () => {
  assert.equal(expiryOf(60, 1_000), 61_000);
  assert.equal(expiryOf(undefined, 1_000), Number.POSITIVE_INFINITY);
  assert.equal(expiryOf(Number.POSITIVE_INFINITY, 1_000), Number.POSITIVE_INFINITY);
});
