import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gcLine, gcTotals } from '../../../bench/gc-trace.ts';

// Lines as Node 20's `--trace-gc-nvp` writes them (most fields left out), among other output.
const OUTPUT = [
  '[24580:0x1599cde0]    12425 ms: pause=5.2 mutator=68.5 gc=s reduce_memory=0 scavenge=5.17 allocated=6002760 promoted=696456 new_space_survived=908040',
  '{"level":30,"msg":"listening"}',
  '[24580:0x1599cde0]    12500 ms: pause=2.4 mutator=73.1 gc=s reduce_memory=0 allocated=5804696 promoted=697112 new_space_survived=762144',
  '[24580:0x1599cde0]    12571 ms: pause=31.0 mutator=12.0 gc=mc reduce_memory=0 heap.prologue=0.00 promoted=0',
  '',
].join('\n');

describe('gcTotals', () => {
  it('counts scavenges and the bytes they promoted, and mark-compacts, skipping other lines', () => {
    assert.deepEqual(gcTotals(OUTPUT), { scavenges: 2, markCompacts: 1, promotedBytes: 1_393_568 });
    assert.deepEqual(gcTotals('no collection here\n'), { scavenges: 0, markCompacts: 0, promotedBytes: 0 });
  });

  it('prints totals per call', () => {
    assert.equal(
      gcLine({ scavenges: 4, markCompacts: 2, promotedBytes: 2_787_136 }, 1000),
      'promoted 2,787 B per call; per 1,000 calls 4.0 scavenges, 2.00 mark-compacts',
    );
  });
});
