import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDoneStep, isFinishedRun } from '../../../src/read/status.ts';

describe('statuses after which nothing changes on its own (the step-log cache relies on them)', () => {
  it('a run is finished unless it is not started, running, queued or waiting', () => {
    const finished = [0, 1, 2, 3, 4, 5, 6, 7, 8].filter(isFinishedRun);
    // failed, aborted, succeeded, partially_succeeded, rejected
    assert.deepEqual(finished, [2, 3, 4, 6, 8]);
    for (const odd of [9, -1, 4.5, '4', undefined, null])
      assert.equal(isFinishedRun(odd), false, String(odd));
  });

  it('a step is done when failed, aborted, succeeded, skipped, partially succeeded or rejected', () => {
    const done = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].filter(isDoneStep);
    // not_started, running, waiting and retrying (9) are not done
    assert.deepEqual(done, [2, 3, 4, 5, 6, 8]);
    assert.equal(isDoneStep('4'), false);
  });
});
