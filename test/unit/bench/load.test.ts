import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { warmUpInTurns } from '../../../bench/load.ts';

describe('warmUpInTurns', () => {
  it('serves each process its calls in turns of at most 2,000, one process after the other per turn', async () => {
    const served: Array<[string, number]> = [];
    await warmUpInTurns(['gateway', 'floor'], 5000, async (name, calls) => {
      served.push([name, calls]);
    });
    assert.deepEqual(served, [
      ['gateway', 1667],
      ['floor', 1667],
      ['gateway', 1667],
      ['floor', 1667],
      ['gateway', 1667],
      ['floor', 1667],
    ]);
  });

  it('serves a warm-up smaller than a turn in one turn', async () => {
    const served: Array<[string, number]> = [];
    await warmUpInTurns(['gateway'], 300, async (name, calls) => {
      served.push([name, calls]);
    });
    assert.deepEqual(served, [['gateway', 300]]);
  });
});
