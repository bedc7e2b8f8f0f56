import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundedDistance, closeNames } from '../../../../src/read/upstream/suggest.ts';

describe('did-you-mean', () => {
  it('bounded edit distance', () => {
    assert.equal(boundedDistance('kitten', 'sitting', 3), 3);
    assert.equal(boundedDistance('kitten', 'sitting', 2), 3);
    assert.equal(boundedDistance('a', 'abcdefgh', 2), 3);
  });

  it('suggests close names, closest first, at most five', () => {
    const names = ['two-steps', 'two-step', 'tow-steps', 'fails', 'parent', 'dotted.name', 'two-steps-extra'];
    assert.deepEqual(closeNames('two-stepz', names), ['two-step', 'two-steps', 'tow-steps']);
    assert.deepEqual(closeNames('dotted-name', names), ['dotted.name']);
    assert.deepEqual(closeNames('zzzzzz', names), []);
    assert.deepEqual(closeNames('x'.repeat(10_000), names), []);
    assert.deepEqual(closeNames('PARENT', names), ['parent']);
    assert.deepEqual(closeNames('two-steps-ext', names), ['two-steps-extra', 'two-steps', 'two-step']);
  });
});
