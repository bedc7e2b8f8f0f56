import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startDeadline } from '../../../src/core/deadline.ts';

describe('startDeadline', () => {
  it('aborts with a TimeoutError once the time has passed', async () => {
    const deadline = startDeadline(20, 'too slow');
    assert.equal(deadline.signal.aborted, false);
    await new Promise((done) => setTimeout(done, 60));
    assert.equal(deadline.signal.aborted, true);
    const reason = deadline.signal.reason as Error;
    assert.equal(reason.name, 'TimeoutError');
    assert.equal(reason.message, 'too slow');
  });

  it('never aborts once done() came first', async () => {
    const deadline = startDeadline(20);
    deadline.done();
    await new Promise((done) => setTimeout(done, 60));
    assert.equal(deadline.signal.aborted, false);
  });
});
