import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  COLLECTIONS_PER_BURST,
  type MemoryProbe,
  memorySettler,
  processMemoryProbe,
} from '../../src/memory-settle.ts';

const MiB = 2 ** 20;
const OPTIONS = { checkMs: 5000, growthBytes: 16 * MiB, quietUtilization: 0.05 };

/** A heap and event loop set by the test; `collect` drops the heap to `live`. */
function fakeProbe(start: number) {
  const state = { used: start, live: start, busy: 0, collections: 0 };
  const probe: MemoryProbe = {
    usedHeapBytes: () => state.used,
    utilization: () => state.busy,
    collect: () => {
      state.collections++;
      state.used = state.live;
    },
  };
  return { state, probe };
}

test('a burst is collected at the next three quiet checks, then no more until the heap grows again', () => {
  const { state, probe } = fakeProbe(40 * MiB);
  const settler = memorySettler(probe, OPTIONS);
  state.used = 120 * MiB;
  state.busy = 0.01;
  assert.deepEqual(
    Array.from({ length: 4 }, () => settler.check()),
    [true, true, true, false],
  );
  assert.equal(state.collections, COLLECTIONS_PER_BURST);
  // 10 MiB more than the collected heap is no burst.
  state.used = 50 * MiB;
  assert.equal(settler.check(), false);
  state.used = 60 * MiB;
  assert.equal(settler.check(), true, 'a new burst');
});

test('no collection while the loop is busy, however much the heap grew', () => {
  const { state, probe } = fakeProbe(40 * MiB);
  const settler = memorySettler(probe, OPTIONS);
  state.used = 200 * MiB;
  state.busy = 0.5;
  assert.equal(settler.check(), false);
  state.busy = 0.02;
  assert.equal(settler.check(), true, 'once the burst is over');
});

test('no collection for growth under the threshold, and the baseline follows the heap down', () => {
  const { state, probe } = fakeProbe(60 * MiB);
  const settler = memorySettler(probe, OPTIONS);
  state.used = 70 * MiB;
  assert.equal(settler.check(), false);
  // V8 collected on its own: 30 MiB is the new baseline, and 20 MiB above it is a burst.
  state.used = 30 * MiB;
  assert.equal(settler.check(), false);
  state.used = 50 * MiB;
  state.live = 30 * MiB;
  assert.equal(settler.check(), true);
});

test("the process probe collects this process's garbage", () => {
  const probe = processMemoryProbe();
  let garbage: unknown[] | undefined = Array.from({ length: 200_000 }, (_, i) => ({ i, text: `item ${i}` }));
  const withGarbage = probe.usedHeapBytes();
  garbage = undefined;
  probe.collect();
  assert.equal(garbage, undefined);
  assert.ok(probe.usedHeapBytes() < withGarbage - 5 * MiB, `${withGarbage} → ${probe.usedHeapBytes()}`);
  const share = probe.utilization();
  assert.ok(share >= 0 && share <= 1, String(share));
});
