import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { median, percentile, slope } from '../../../bench/stats.ts';

describe('bench statistics', () => {
  it('median of odd and even counts, whatever the order', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });

  it('percentile by nearest rank, clamped to the last value', () => {
    const sorted = [10, 20, 30, 40];
    assert.equal(percentile(sorted, 0.5), 30);
    assert.equal(percentile(sorted, 0.99), 40);
    assert.equal(percentile(sorted, 0), 10);
    assert.ok(Number.isNaN(percentile([], 0.5)));
  });

  it('slope of a least-squares line', () => {
    // y = 3x + 1 exactly, then with noise that cancels out.
    assert.equal(
      slope([
        [0, 1],
        [1, 4],
        [2, 7],
      ]),
      3,
    );
    assert.equal(
      slope([
        [2, 10],
        [2, 12],
        [150, 306],
        [150, 308],
      ]),
      2,
    );
    assert.ok(
      Number.isNaN(
        slope([
          [1, 1],
          [1, 2],
        ]),
      ),
    );
    assert.ok(Number.isNaN(slope([[1, 1]])));
  });
});
