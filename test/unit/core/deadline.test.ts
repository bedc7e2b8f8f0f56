import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startDeadline } from '../../../src/core/deadline.ts';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('startDeadline', () => {
  it('aborts with a TimeoutError once the time has passed', async () => {
    const deadline = startDeadline(20, 'too slow');
    assert.equal(deadline.signal.aborted, false);
    await sleep(60);
    assert.equal(deadline.signal.aborted, true);
    const reason = deadline.signal.reason as Error;
    assert.equal(reason.name, 'TimeoutError');
    assert.equal(reason.message, 'too slow');
  });

  it('never aborts once done() came first', async () => {
    const deadline = startDeadline(20);
    deadline.done();
    await sleep(60);
    assert.equal(deadline.signal.aborted, false);
  });

  it('calls each listener once, in the order they were added; a removed one not at all', async () => {
    const deadline = startDeadline(15);
    const heard: string[] = [];
    const removed = () => heard.push('removed');
    deadline.signal.addEventListener('abort', () => heard.push('first'), { once: true });
    deadline.signal.addEventListener('abort', removed);
    deadline.signal.addEventListener('abort', () => heard.push('second'));
    deadline.signal.removeEventListener('abort', removed);
    await sleep(50);
    assert.deepEqual(heard, ['first', 'second']);
    deadline.signal.addEventListener('abort', () => heard.push('late'));
    await sleep(30);
    assert.deepEqual(heard, ['first', 'second']);
  });

  it('deadlines of one duration expire in turn, whichever of them finished before', async () => {
    const first = startDeadline(200);
    await sleep(100);
    const second = startDeadline(200);
    const third = startDeadline(200);
    first.done();
    second.done();
    await sleep(100);
    const fourth = startDeadline(200);
    await sleep(150);
    // 350 ms after the first: the third (due at 300) has expired, the fourth (due at 400) not yet.
    assert.equal(first.signal.aborted, false);
    assert.equal(second.signal.aborted, false);
    assert.equal(third.signal.aborted, true);
    assert.equal(fourth.signal.aborted, false);
    await sleep(100);
    assert.equal(fourth.signal.aborted, true);
  });

  it('deadlines of different durations keep their own time', async () => {
    const long = startDeadline(200);
    const short = startDeadline(10);
    await sleep(40);
    assert.equal(short.signal.aborted, true);
    assert.equal(long.signal.aborted, false);
    long.done();
  });
});
