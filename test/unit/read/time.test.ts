import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nodeStatusLabel, runStatusLabel } from '../../../src/read/status.ts';
import { toRfc3339Millis } from '../../../src/read/time.ts';

describe('toRfc3339Millis', () => {
  it('turns Dagu second-precision UTC into RFC 3339 with milliseconds', () => {
    assert.equal(toRfc3339Millis('2026-10-27T08:02:02Z'), '2026-10-27T08:02:02.000Z');
    assert.equal(toRfc3339Millis('2026-10-27t08:02:02z'), '2026-10-27T08:02:02.000Z');
  });

  it('converts a local offset to UTC', () => {
    assert.equal(toRfc3339Millis('2026-10-27T17:02:02+09:00'), '2026-10-27T08:02:02.000Z');
    assert.equal(toRfc3339Millis('2026-10-27T03:32:02-04:30'), '2026-10-27T08:02:02.000Z');
    assert.equal(toRfc3339Millis('2026-01-01T01:00:00+02:00'), '2025-12-31T23:00:00.000Z');
  });

  it('keeps milliseconds and cuts finer fractions without rounding', () => {
    assert.equal(toRfc3339Millis('2026-10-27T08:02:02.158Z'), '2026-10-27T08:02:02.158Z');
    assert.equal(toRfc3339Millis('2026-10-27T08:02:02.5Z'), '2026-10-27T08:02:02.500Z');
    assert.equal(toRfc3339Millis('2026-10-27T08:02:02.999999999Z'), '2026-10-27T08:02:02.999Z');
  });

  it('accepts a space instead of T and surrounding blanks', () => {
    assert.equal(toRfc3339Millis(' 2026-10-27 08:02:02Z '), '2026-10-27T08:02:02.000Z');
  });

  it('reads "not recorded" values as undefined', () => {
    for (const value of ['', '-', '  ', '0001-01-01T00:00:00Z', undefined, null, 0, 1_700_000_000, {}]) {
      assert.equal(toRfc3339Millis(value), undefined, JSON.stringify(value));
    }
  });

  it('rejects invalid dates, times, offsets and shapes', () => {
    for (const value of [
      '2026-02-30T00:00:00Z',
      '2025-02-29T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-10-27T24:00:00Z',
      '2026-10-27T08:60:00Z',
      '2026-10-27T08:02:60Z',
      '2026-10-27T08:02:02+24:00',
      '2026-10-27T08:02:02',
      '2026-10-27',
      'yesterday',
      '2026-10-27T08:02:02.Z',
    ]) {
      assert.equal(toRfc3339Millis(value), undefined, value);
    }
    assert.equal(toRfc3339Millis('2024-02-29T12:00:00Z'), '2024-02-29T12:00:00.000Z');
  });

  it('keeps early years literal', () => {
    assert.equal(toRfc3339Millis('0099-05-01T00:00:00Z'), '0099-05-01T00:00:00.000Z');
  });
});

describe('status labels', () => {
  it('labels run statuses 0–8', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 6, 7, 8].map((status) => runStatusLabel(status)),
      [
        'not_started',
        'running',
        'failed',
        'aborted',
        'succeeded',
        'queued',
        'partially_succeeded',
        'waiting',
        'rejected',
      ],
    );
  });

  it('labels node statuses 0–9 (9 retrying is Dagu 2.x only)', () => {
    assert.equal(nodeStatusLabel(5), 'skipped');
    assert.equal(nodeStatusLabel(7), 'waiting');
    assert.equal(nodeStatusLabel(9), 'retrying');
  });

  it("keeps Dagu's label for an unknown number, else unknown", () => {
    assert.equal(runStatusLabel(42, 'future_state'), 'future_state');
    assert.equal(runStatusLabel(42), 'unknown');
    assert.equal(nodeStatusLabel(-1, ''), 'unknown');
    assert.equal(runStatusLabel(4, 'success'), 'succeeded');
  });
});
