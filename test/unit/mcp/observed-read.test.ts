/**
 * One read as an MCP operation (src/mcp/observed-read.ts): the call context made from the per-call
 * facts, the fail-closed refusal without them, the record handed to the observer, and, with a tracer,
 * the span around the read, its trace id on the record and its end also when the read throws.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UNRESTRICTED_ACCESS } from '../../../src/core/access.ts';
import { observedRead, refusedWithoutContext } from '../../../src/mcp/observed-read.ts';
import type { OperationObserver, OperationRecord, OperationTracer } from '../../../src/mcp/operations.ts';
import type { McpRequestFacts } from '../../../src/mcp/request-side-channel.ts';
import type { ReadOutcome } from '../../../src/read/service.ts';
import type { CallContext } from '../../../src/read/types.ts';

const FACTS: McpRequestFacts = {
  requestId: 'req-7',
  access: UNRESTRICTED_ACCESS,
  identity: 'ci-bot',
  identityKind: 'api_key',
  role: 'viewer',
  protocolVersion: '2025-06-18',
  clientName: undefined,
  clientVersion: undefined,
  signal: new AbortController().signal,
};

const OUTCOME: ReadOutcome = {
  ok: false,
  error: { code: 'resource_not_found', message: 'gone' },
  facts: { target: 'dag' },
};

function recordingObserver(tracer?: OperationTracer) {
  const records: OperationRecord[] = [];
  const observe = Object.assign(
    (record: OperationRecord) => void records.push(record),
    tracer ? { tracer } : {},
  );
  return { records, observe: observe as OperationObserver };
}

/** A tracer that records its spans: start arguments, whether the read ran inside run(), the ended record. */
function recordingTracer(traceId: string | undefined) {
  const spans: { start: unknown[]; inside: boolean; ended?: OperationRecord }[] = [];
  let running = false;
  const tracer: OperationTracer = {
    start(...start) {
      const span: (typeof spans)[number] = { start, inside: false };
      spans.push(span);
      return {
        traceId,
        async run(operation) {
          running = true;
          try {
            return await operation();
          } finally {
            running = false;
          }
        },
        end(record) {
          span.ended = record;
        },
      };
    },
  };
  return { spans, tracer, isRunning: () => running };
}

describe('observedRead', () => {
  test('reads as the caller the facts name and hands the observer one record', async () => {
    const { records, observe } = recordingObserver();
    const calls: CallContext[] = [];
    const outcome = await observedRead('tools/call', 'dagu_read', observe, FACTS, async (call) => {
      calls.push(call);
      return OUTCOME;
    });
    assert.equal(outcome, OUTCOME);
    assert.deepEqual(calls, [
      { access: UNRESTRICTED_ACCESS, signal: FACTS.signal, caller: 'api_key:ci-bot' },
    ]);
    assert.equal(records.length, 1);
    const [record] = records;
    assert.equal(record?.method, 'tools/call');
    assert.equal(record?.tool, 'dagu_read');
    assert.equal(record?.outcome, OUTCOME);
    assert.equal(record?.request, FACTS);
    assert.ok((record?.durationSeconds ?? -1) >= 0);
    assert.ok(!('traceId' in (record ?? {})));
  });

  test('without facts the read is refused as unauthorized and never runs (fail closed)', async () => {
    const { records, observe } = recordingObserver();
    const outcome = await observedRead('resources/read', undefined, observe, undefined, () =>
      assert.fail('the read must not run'),
    );
    assert.deepEqual(outcome, refusedWithoutContext());
    assert.equal(refusedWithoutContext().error.code, 'unauthorized');
    assert.equal(records[0]?.request, undefined);
    assert.deepEqual(records[0]?.outcome, refusedWithoutContext());
  });

  test('with a tracer: the read runs inside the span, the record carries its trace id and ends it', async () => {
    const { spans, tracer, isRunning } = recordingTracer('4bf92f3577b34da6a3ce929d0e0e4736');
    const { records, observe } = recordingObserver(tracer);
    await observedRead('completion/complete', undefined, observe, FACTS, async () => {
      const span = spans[0];
      if (span) span.inside = isRunning();
      return OUTCOME;
    });
    assert.equal(spans.length, 1);
    assert.deepEqual(spans[0]?.start, ['completion/complete', undefined, FACTS]);
    assert.equal(spans[0]?.inside, true);
    assert.equal(records[0]?.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(spans[0]?.ended, records[0]);
  });

  test('with an unsampled span the record has no trace id', async () => {
    const { spans, tracer } = recordingTracer(undefined);
    const { records, observe } = recordingObserver(tracer);
    await observedRead('tools/call', 'dagu_read', observe, FACTS, async () => OUTCOME);
    assert.ok(!('traceId' in (records[0] ?? {})));
    assert.equal(spans[0]?.ended, records[0]);
  });

  test('a read that throws still ends its span, as internal_error, and is not observed', async () => {
    const { spans, tracer } = recordingTracer('abc');
    const { records, observe } = recordingObserver(tracer);
    await assert.rejects(
      observedRead('tools/call', 'dagu_read', observe, FACTS, async () => {
        throw new Error('bug');
      }),
      /bug/,
    );
    assert.equal(records.length, 0);
    assert.equal(spans[0]?.ended?.outcome.ok, false);
    const ended = spans[0]?.ended?.outcome;
    assert.equal(ended !== undefined && !ended.ok ? ended.error.code : undefined, 'internal_error');
    assert.equal(spans[0]?.ended?.request, FACTS);
  });
});
