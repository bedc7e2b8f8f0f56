import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LinkedList } from '../../../src/core/linked-list.ts';

describe('LinkedList', () => {
  it('keeps values in the order they were pushed, and removes any link in place', () => {
    const list = new LinkedList<string>();
    const a = list.push('a');
    const b = list.push('b');
    const c = list.push('c');
    assert.deepEqual(list.values(), ['a', 'b', 'c']);
    list.remove(b);
    assert.deepEqual(list.values(), ['a', 'c']);
    list.remove(a);
    assert.deepEqual(list.values(), ['c']);
    assert.equal(list.first, c);
    list.remove(c);
    assert.deepEqual(list.values(), []);
    assert.equal(list.first, undefined);
    assert.equal(list.size, 0);
    list.push('d');
    assert.deepEqual(list.values(), ['d']);
  });

  it('clears a removed link, so that a link left on a listener holds nothing', () => {
    const list = new LinkedList<object>();
    list.push({});
    const middle = list.push({});
    list.push({});
    list.remove(middle);
    assert.deepEqual(middle, { value: undefined, previous: undefined, next: undefined });
  });

  it('ignores a link removed twice, or removed after clear()', () => {
    const list = new LinkedList<number>();
    const one = list.push(1);
    const two = list.push(2);
    list.remove(one);
    list.remove(one);
    assert.equal(list.size, 1);
    assert.deepEqual(list.values(), [2]);
    list.clear();
    list.remove(two);
    assert.equal(list.size, 0);
    assert.deepEqual(list.values(), []);
    assert.deepEqual(two, { value: undefined, previous: undefined, next: undefined });
  });

  it('moves a link to the end, making the next one first', () => {
    const list = new LinkedList<string>();
    const a = list.push('a');
    const b = list.push('b');
    list.push('c');
    list.moveToEnd(a);
    assert.deepEqual(list.values(), ['b', 'c', 'a']);
    assert.equal(list.first, b);
    list.moveToEnd(a); // already last
    assert.deepEqual(list.values(), ['b', 'c', 'a']);
    list.remove(a);
    list.moveToEnd(a); // removed: stays out
    assert.deepEqual(list.values(), ['b', 'c']);
    assert.equal(list.size, 2);
  });
});
