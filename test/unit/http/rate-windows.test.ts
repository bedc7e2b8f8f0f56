/** Fixed windows per caller key: opened by the first call, `max` calls allowed, then the seconds left. */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createRateWindows, type RateWindows } from '../../../src/http/rate-windows.ts';

const opened: RateWindows[] = [];
afterEach(() => {
  for (const windows of opened.splice(0)) windows.close();
});

/** Windows on a clock the test moves. */
function windowsAt(windowMs: number) {
  const clock = { ms: 1_000_000 };
  const windows = createRateWindows({ windowMs, now: () => clock.ms });
  opened.push(windows);
  return { clock, windows };
}

describe('rate windows', () => {
  it('allows max calls in a window, then refuses with the whole seconds left (at least 1)', () => {
    const { clock, windows } = windowsAt(60_000);
    assert.deepEqual(windows.hit('a', 2), { allowed: true });
    clock.ms += 10_000;
    assert.deepEqual(windows.hit('a', 2), { allowed: true });
    clock.ms += 500;
    assert.deepEqual(windows.hit('a', 2), { allowed: false, retryAfterSeconds: 50 });
    clock.ms += 49_400;
    assert.deepEqual(windows.hit('a', 2), { allowed: false, retryAfterSeconds: 1 }, '100 ms left rounds up');
  });

  it('opens a new window at the first call after the old one closed; refused calls do not extend it', () => {
    const { clock, windows } = windowsAt(1000);
    assert.equal(windows.hit('a', 1).allowed, true);
    assert.equal(windows.hit('a', 1).allowed, false);
    clock.ms += 999;
    assert.equal(windows.hit('a', 1).allowed, false);
    clock.ms += 1;
    assert.equal(windows.hit('a', 1).allowed, true, 'the window closed at exactly windowMs');
    assert.equal(windows.hit('a', 1).allowed, false);
  });

  it('counts each key apart', () => {
    const { windows } = windowsAt(1000);
    assert.equal(windows.hit('a', 1).allowed, true);
    assert.equal(windows.hit('b', 1).allowed, true);
    assert.equal(windows.hit('a', 1).allowed, false);
    assert.equal(windows.hit('b', 1).allowed, false);
  });

  it('count gives the calls in the window and the ms left (what the Redis store answers while Redis is away)', () => {
    const { clock, windows } = windowsAt(60_000);
    assert.deepEqual(windows.count('a'), { calls: 1, msLeft: 60_000 });
    clock.ms += 15_000;
    assert.deepEqual(windows.count('a'), { calls: 2, msLeft: 45_000 });
    assert.equal(windows.hit('a', 2).allowed, false, 'count and hit share one window');
    clock.ms += 45_000;
    assert.deepEqual(windows.count('a'), { calls: 1, msLeft: 60_000 });
  });

  it('sweep forgets closed windows only', () => {
    const { clock, windows } = windowsAt(1000);
    windows.hit('old', 1);
    clock.ms += 600;
    windows.hit('new', 1);
    clock.ms += 400;
    assert.equal(windows.size(), 2);
    windows.sweep();
    assert.equal(windows.size(), 1);
    assert.equal(windows.hit('new', 1).allowed, false, "'new' kept its window and its count");
  });
});
