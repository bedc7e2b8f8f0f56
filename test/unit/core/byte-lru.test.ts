import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ByteLru, cacheSlice } from '../../../src/core/byte-lru.ts';

// Sizes count the key too (2 bytes a character): one-character keys add 2.
describe('ByteLru', () => {
  it('keeps values within maxBytes, dropping the least recently used first', () => {
    const evicted: number[] = [];
    const lru = new ByteLru<string>(100, { evicted: (count) => evicted.push(count) });
    lru.set('a', 'A', 20);
    lru.set('b', 'B', 20);
    lru.set('c', 'C', 20);
    assert.equal(lru.get('a'), 'A'); // now b is the least recent
    lru.set('d', 'D', 20);
    assert.equal(lru.bytes, 88);
    lru.set('e', 'E', 20); // 110 bytes: b, the least recently used, goes
    assert.equal(lru.get('b'), undefined);
    assert.equal(lru.bytes, 88);
    lru.set('f', 'F', 20); // then c
    assert.equal(lru.get('c'), undefined);
    assert.deepEqual(
      ['a', 'd', 'e', 'f'].map((key) => lru.get(key)),
      ['A', 'D', 'E', 'F'],
    );
    assert.deepEqual(evicted, [1, 1]);
    assert.equal(lru.size, 4);
  });

  it('does not keep a value larger than a quarter of the budget', () => {
    const lru = new ByteLru<string>(100);
    lru.set('big', 'x', 30);
    assert.equal(lru.get('big'), undefined);
    assert.equal(lru.bytes, 0);
  });

  it('keeps nothing with a budget of 0', () => {
    const lru = new ByteLru<string>(0);
    lru.set('a', 'A', 0);
    assert.equal(lru.get('a'), undefined);
  });

  it('replacing a key frees the old size', () => {
    const lru = new ByteLru<string>(100);
    lru.set('a', 'A', 10);
    lru.set('a', 'B', 20);
    assert.equal(lru.get('a'), 'B');
    assert.equal(lru.bytes, 22);
  });

  it('an entry with a TTL is gone once it expires', async () => {
    const lru = new ByteLru<string>(100);
    lru.set('a', 'A', 1, 30);
    assert.equal(lru.get('a'), 'A');
    await new Promise((done) => setTimeout(done, 50));
    assert.equal(lru.get('a'), undefined);
    assert.equal(lru.bytes, 0, 'an expired entry frees its bytes when met');
  });
});

describe('cacheSlice', () => {
  it('gives each use its own key space and counts its lookups under its name', () => {
    const lru = new ByteLru<unknown>(1000);
    const lookups: string[] = [];
    const count = (name: string, result: 'hit' | 'miss') => lookups.push(`${name}:${result}`);
    const logs = cacheSlice<number>(lru, 'step_log', count);
    const answers = cacheSlice<string>(lru, 'dagu_ttl', count);
    logs.set('k', 1, 8);
    assert.equal(answers.get('k'), undefined);
    assert.equal(logs.get('k'), 1);
    assert.deepEqual(lookups, ['dagu_ttl:miss', 'step_log:hit']);
  });
});
