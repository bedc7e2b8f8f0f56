import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nestsDeeperThan } from '../../../src/http/mcp-route.ts';

/** `levels` objects (or arrays) nested in one another, a string at the bottom. */
function nested(levels: number, array = false): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = array ? [value] : { child: value };
  return value;
}

describe('nestsDeeperThan', () => {
  it('is false up to the limit and true one level past it, for objects and arrays alike', () => {
    for (const array of [false, true]) {
      assert.equal(nestsDeeperThan(nested(3, array), 3), false);
      assert.equal(nestsDeeperThan(nested(4, array), 3), true);
    }
    assert.equal(nestsDeeperThan('text', 0), false);
    assert.equal(nestsDeeperThan(null, 0), false);
    assert.equal(nestsDeeperThan({}, 0), true);
  });

  it('finds a deep value beside shallow ones, under any key, `__proto__` included', () => {
    const deep = nested(5);
    assert.equal(nestsDeeperThan({ a: 1, b: [2, 3], c: { d: deep } }, 5), true);
    assert.equal(nestsDeeperThan({ a: 1, b: [2, 3], c: { d: 'x' } }, 5), false);
    const poisoned = JSON.parse(`{"__proto__":${JSON.stringify(nested(4))}}`) as unknown;
    assert.equal(nestsDeeperThan(poisoned, 4), true);
    assert.equal(nestsDeeperThan(poisoned, 5), false);
  });

  it('answers a body nested far deeper than the limit without overflowing the stack', () => {
    assert.equal(nestsDeeperThan(JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`), 32), true);
  });
});
