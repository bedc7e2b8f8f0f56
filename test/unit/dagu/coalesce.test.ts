import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallSignal } from '../../../src/core/deadline.ts';
import { type Answer, coalescing, type Send } from '../../../src/dagu/coalesce.ts';

/** A scripted upstream: records every request and answers each when the test says so. */
function scriptedUpstream() {
  const requests: Array<{
    path: string;
    signal: CallSignal | undefined;
    answer(answer: Answer): void;
    fail(error: unknown): void;
  }> = [];
  const send: Send = (_route, path, signal) =>
    new Promise((resolve, reject) => {
      requests.push({ path, signal, answer: resolve, fail: reject });
      signal?.addEventListener('abort', () => reject(new Error('upstream aborted')), { once: true });
    });
  return { send, requests };
}

const abortedError = (signal: CallSignal) => new Error(`caller gone: ${String(signal.reason)}`);
const nextTurn = () => new Promise((done) => setImmediate(done));

describe('coalescing of identical GETs', () => {
  it('identical GETs asked for in one turn share one request; each caller gets the answer', async () => {
    const upstream = scriptedUpstream();
    const joined: string[] = [];
    const get = coalescing(upstream.send, { aborted: abortedError, onJoined: (route) => joined.push(route) });
    const answers = Promise.all([get('/r', '/a'), get('/r', '/a'), get('/r', '/a')]);
    await nextTurn();
    assert.equal(upstream.requests.length, 1);
    upstream.requests[0]!.answer({ status: 200, text: '{"x":1}' });
    assert.deepEqual(await answers, Array(3).fill({ status: 200, text: '{"x":1}' }));
    assert.deepEqual(joined, ['/r', '/r']);
  });

  it('different paths are separate requests', async () => {
    const upstream = scriptedUpstream();
    const get = coalescing(upstream.send, { aborted: abortedError });
    const both = Promise.all([get('/r', '/a'), get('/r', '/b')]);
    await nextTurn();
    assert.deepEqual(
      upstream.requests.map((request) => request.path),
      ['/a', '/b'],
    );
    for (const request of upstream.requests) request.answer({ status: 200, text: request.path });
    assert.deepEqual(
      (await both).map((answer) => answer.text),
      ['/a', '/b'],
    );
  });

  it('a GET never joins a request that was already sent: it waits for a request of its own', async () => {
    const upstream = scriptedUpstream();
    const get = coalescing(upstream.send, { aborted: abortedError });
    const first = get('/r', '/a');
    await nextTurn();
    assert.equal(upstream.requests.length, 1, 'the first request is on its way');
    const second = get('/r', '/a');
    await nextTurn();
    assert.equal(upstream.requests.length, 2, 'the later caller got a request sent after it asked');
    upstream.requests[0]!.answer({ status: 200, text: 'before' });
    upstream.requests[1]!.answer({ status: 200, text: 'after' });
    assert.equal((await first).text, 'before');
    assert.equal((await second).text, 'after');
  });

  it('a failure reaches every caller of the shared request', async () => {
    const upstream = scriptedUpstream();
    const get = coalescing(upstream.send, { aborted: abortedError });
    const calls = [get('/r', '/a'), get('/r', '/a')];
    await nextTurn();
    upstream.requests[0]!.fail(new Error('unreachable'));
    for (const call of calls) await assert.rejects(call, /unreachable/);
  });

  it('a lone caller sends with its own signal', async () => {
    const upstream = scriptedUpstream();
    const get = coalescing(upstream.send, { aborted: abortedError });
    const controller = new AbortController();
    const call = get('/r', '/a', controller.signal);
    await nextTurn();
    assert.equal(upstream.requests[0]!.signal, controller.signal);
    controller.abort('deadline');
    await assert.rejects(call, /caller gone: deadline/);
  });

  it('a caller that gives up is answered at once; the shared request goes on for the others', async () => {
    const upstream = scriptedUpstream();
    const get = coalescing(upstream.send, { aborted: abortedError });
    const leaving = new AbortController();
    const gone = get('/r', '/a', leaving.signal);
    const staying = get('/r', '/a', new AbortController().signal);
    await nextTurn();
    leaving.abort('cancelled');
    await assert.rejects(gone, /caller gone: cancelled/);
    assert.equal(upstream.requests[0]!.signal?.aborted, false, 'still wanted by the other caller');
    upstream.requests[0]!.answer({ status: 200, text: 'ok' });
    assert.equal((await staying).text, 'ok');
  });

  it('the shared request is aborted once every caller has gone', async () => {
    const upstream = scriptedUpstream();
    const get = coalescing(upstream.send, { aborted: abortedError });
    const callers = [new AbortController(), new AbortController()];
    const calls = callers.map((controller) => get('/r', '/a', controller.signal));
    await nextTurn();
    for (const controller of callers) controller.abort('gone');
    for (const call of calls) await assert.rejects(call, /caller gone/);
    assert.equal(upstream.requests[0]!.signal?.aborted, true);
  });

  it('a caller whose signal already aborted is refused without a request', async () => {
    const upstream = scriptedUpstream();
    const get = coalescing(upstream.send, { aborted: abortedError });
    await assert.rejects(get('/r', '/a', AbortSignal.abort('early')), /caller gone: early/);
    await nextTurn();
    assert.equal(upstream.requests.length, 0);
  });
});
