import assert from 'node:assert/strict';
import { test } from 'node:test';
import { displayUrl } from '../../../src/core/display-url.ts';

test('displayUrl removes user name and password and keeps the rest', () => {
  assert.equal(displayUrl('http://u:p@dagu:8080/x/'), 'http://dagu:8080/x');
  assert.equal(displayUrl('https://dagu.example'), 'https://dagu.example');
  // The Redis URL of the shared rate limit is logged the same way: no password, not even masked.
  assert.equal(displayUrl('redis://:secret@redis-master:6379/0'), 'redis://redis-master:6379/0');
  assert.equal(displayUrl('not a url'), '(invalid URL)');
});
