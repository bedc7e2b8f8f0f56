/** Fixed windows per caller key: opened by the first call, `max` calls allowed, then the seconds left. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRateWindows } from '../../../src/http/rate-windows.ts';

/** Windows on a clock the test moves. */
function windowsAt(max: number, windowMs: number) {
  const clock = { ms: 1_000_000 };
  return { clock, windows: createRateWindows({ max, windowMs, now: () => clock.ms }) };
}

describe('rate windows', () => {
  it('allows max calls in a window, then refuses with the whole seconds left (at least 1)', () => {
    const { clock, windows } = windowsAt(2, 60_000);
    assert.deepEqual(windows.hit('a'), { allowed: true });
    clock.ms += 10_000;
    assert.deepEqual(windows.hit('a'), { allowed: true });
    clock.ms += 500;
    assert.deepEqual(windows.hit('a'), { allowed: false, retryAfterSeconds: 50 });
    clock.ms += 49_400;
    assert.deepEqual(windows.hit('a'), { allowed: false, retryAfterSeconds: 1 }, '100 ms left rounds up');
  });

  it('opens a new window at the first call after the old one closed; refused calls do not extend it', () => {
    const { clock, windows } = windowsAt(1, 1000);
    assert.equal(windows.hit('a').allowed, true);
    assert.equal(windows.hit('a').allowed, false);
    clock.ms += 999;
    assert.equal(windows.hit('a').allowed, false);
    clock.ms += 1;
    assert.equal(windows.hit('a').allowed, true, 'the window closed at exactly windowMs');
    assert.equal(windows.hit('a').allowed, false);
  });

  it('counts each key apart', () => {
    const { windows } = windowsAt(1, 1000);
    assert.equal(windows.hit('a').allowed, true);
    assert.equal(windows.hit('b').allowed, true);
    assert.equal(windows.hit('a').allowed, false);
    assert.equal(windows.hit('b').allowed, false);
  });

  it('sweep forgets closed windows only', () => {
    const { clock, windows } = windowsAt(1, 1000);
    windows.hit('old');
    clock.ms += 600;
    windows.hit('new');
    clock.ms += 400;
    assert.equal(windows.size(), 2);
    windows.sweep();
    assert.equal(windows.size(), 1);
    assert.equal(windows.hit('new').allowed, false, "'new' kept its window and its count");
  });
});
