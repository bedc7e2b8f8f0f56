/**
 * The per-call side channel (src/mcp/request-side-channel.ts): the facts the HTTP route and stdio set
 * around a message are what a handler reads, across awaits and timers, and never another call's, even
 * when calls interleave; outside a call there are none (the handlers then refuse, fail closed).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { UNRESTRICTED_ACCESS } from '../../../src/core/access.ts';
import { type McpRequestFacts, requestSideChannel } from '../../../src/mcp/request-side-channel.ts';

const facts = (requestId: string): McpRequestFacts => ({
  requestId,
  access: UNRESTRICTED_ACCESS,
  identity: requestId,
  identityKind: 'anonymous',
  role: 'viewer',
  protocolVersion: undefined,
  clientName: undefined,
  clientVersion: undefined,
  signal: new AbortController().signal,
});

describe('requestSideChannel', () => {
  test('no facts outside a call', () => {
    assert.equal(requestSideChannel.getStore(), undefined);
  });

  test('a handler reads its own call facts after awaits, even with calls interleaved', async () => {
    const handler = async (turns: number) => {
      for (let i = 0; i < turns; i++) await nextTurn();
      return requestSideChannel.getStore()?.requestId;
    };
    const a = facts('a');
    const b = facts('b');
    const results = await Promise.all([
      requestSideChannel.run(a, () => handler(3)),
      requestSideChannel.run(b, () => handler(1)),
      requestSideChannel.run(a, async () => {
        await requestSideChannel.run(b, () => handler(2));
        return requestSideChannel.getStore()?.requestId;
      }),
    ]);
    assert.deepEqual(results, ['a', 'b', 'a']);
    assert.equal(requestSideChannel.getStore(), undefined);
  });

  test('the facts reach callbacks scheduled during the call', async () => {
    const seen = await requestSideChannel.run(
      facts('timer'),
      () =>
        new Promise<McpRequestFacts | undefined>((resolve) =>
          setTimeout(() => resolve(requestSideChannel.getStore()), 1),
        ),
    );
    assert.equal(seen?.requestId, 'timer');
  });
});
