/**
 * The observer of MCP operations (src/observe.ts): for one finished operation, the audit entry it
 * records, the histogram sample it adds to a fresh metrics registry, and what it logs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuditEntry, AuditLog } from '../../src/audit/audit-log.ts';
import { UNRESTRICTED_ACCESS } from '../../src/core/access.ts';
import type { OperationTracer } from '../../src/mcp/operations.ts';
import type { McpRequestFacts } from '../../src/mcp/request-side-channel.ts';
import { createMetrics } from '../../src/metrics/metrics.ts';
import { createOperationObserver } from '../../src/observe.ts';

function sinks() {
  const entries: AuditEntry[] = [];
  const timings: Array<'now' | 'turn' | undefined> = [];
  const audit = {
    record: (entry: AuditEntry, when?: 'now' | 'turn') => {
      entries.push(entry);
      timings.push(when);
    },
  } as unknown as AuditLog;
  const errors: { fields: Record<string, unknown>; message: string }[] = [];
  const log = {
    debug() {},
    info() {},
    warn() {},
    error: (fields: Record<string, unknown>, message: string) => void errors.push({ fields, message }),
  };
  const metrics = createMetrics({ defaultMetrics: false });
  return { entries, timings, errors, metrics, audit, log };
}

const facts = (extra: Partial<McpRequestFacts> = {}): McpRequestFacts => ({
  requestId: 'req-1',
  access: UNRESTRICTED_ACCESS,
  identity: 'ci-bot',
  identityKind: 'api_key',
  role: 'viewer',
  protocolVersion: '2025-06-18',
  clientName: 'inspector',
  clientVersion: '1.2.3',
  userAgent: 'curl/8',
  signal: new AbortController().signal,
  ...extra,
});

/** The `_count` samples of the operation histogram, as `labels → count`. */
async function operationCounts(metrics: ReturnType<typeof createMetrics>): Promise<Record<string, number>> {
  const text = await metrics.registry.getSingleMetricAsString('mcp_server_operation_duration_seconds');
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^mcp_server_operation_duration_seconds_count\{(.*)\} (\d+)$/gm)) {
    counts[match[1] ?? ''] = Number(match[2]);
  }
  return counts;
}

describe('createOperationObserver', () => {
  it('audits a tool call with the caller, its redacted arguments and the read facts, and counts it', async () => {
    const { entries, errors, metrics, audit, log } = sinks();
    const observe = createOperationObserver({ metrics, audit, log });
    assert.equal(observe.tracer, undefined);
    observe({
      method: 'tools/call',
      tool: 'dagu_read',
      outcome: {
        ok: true,
        envelope: { ok: true, target: 'step_log', data: {} } as never,
        facts: { target: 'step_log', upstreamStatus: 200 },
      },
      durationSeconds: 0.0126,
      request: facts({
        rawArguments: { value: { target: 'step_log', name: ' etl ', password: 'hunter2', query: 'tail=5' } },
      }),
      traceId: '0af7651916cd43dd8448eb211c80319c',
    });
    assert.deepEqual(errors, []);
    assert.equal(entries.length, 1);
    // The whole record: the caller, the client, the call, the redacted arguments (the name trimmed, the
    // password only as present, the query by its keys) and the outcome, nothing else.
    assert.deepEqual(entries[0], {
      event: 'mcp.tool_call',
      requestId: 'req-1',
      identity: 'ci-bot',
      identityKind: 'api_key',
      role: 'viewer',
      clientName: 'inspector',
      clientVersion: '1.2.3',
      userAgent: 'curl/8',
      protocolVersion: '2025-06-18',
      method: 'tools/call',
      tool: 'dagu_read',
      target: 'step_log',
      name: 'etl',
      hasPassword: true,
      queryKeys: ['tail'],
      outcome: 'ok',
      durationMs: 13,
      upstreamStatus: 200,
      traceId: '0af7651916cd43dd8448eb211c80319c',
    });
    assert.ok(!JSON.stringify(entries[0]).includes('hunter2'));
    assert.deepEqual(await operationCounts(metrics), {
      'mcp_method_name="tools/call",gen_ai_tool_name="dagu_read",dagu_read_target="step_log",mcp_protocol_version="2025-06-18"': 1,
    });
  });

  it('queues the record to the end of the turn only when the answer waits for it', () => {
    const { timings, metrics, audit, log } = sinks();
    const observe = createOperationObserver({ metrics, audit, log });
    const outcome = {
      ok: true as const,
      envelope: { target: 'dags', data: {} } as never,
      facts: { target: 'dags' },
    };
    for (const request of [facts({ auditInTurn: true }), facts(), undefined]) {
      observe({ method: 'tools/call', tool: 'dagu_read', outcome, durationSeconds: 0.001, request });
    }
    assert.deepEqual(timings, ['turn', 'now', 'now']);
  });

  it('audits a failed resource read by its URI and error code, never its arguments, and labels the error', async () => {
    const { entries, errors, metrics, audit, log } = sinks();
    const observe = createOperationObserver({ metrics, audit, log });
    observe({
      method: 'resources/read',
      tool: undefined,
      outcome: {
        ok: false,
        error: { code: 'resource_not_found', message: 'no such DAG' },
        facts: { uri: 'dagu://dags/missing', target: 'dag', upstreamStatus: 404 },
      },
      durationSeconds: 0.001,
      request: facts({
        rawArguments: { value: { name: 'leaked' } },
        clientName: undefined,
        userAgent: undefined,
      }),
    });
    assert.deepEqual(errors, [], 'an expected error is not logged');
    const entry = entries[0];
    assert.ok(entry);
    assert.equal(entry.event, 'mcp.resource_read');
    assert.equal(entry.uri, 'dagu://dags/missing');
    assert.equal(entry.outcome, 'resource_not_found');
    assert.equal(entry.upstreamStatus, 404);
    assert.equal(entry.name, undefined);
    assert.equal(entry.tool, undefined);
    assert.ok(!('clientName' in entry) && !('userAgent' in entry) && !('traceId' in entry));
    assert.deepEqual(await operationCounts(metrics), {
      'mcp_method_name="resources/read",dagu_read_target="dag",error_type="resource_not_found",mcp_protocol_version="2025-06-18"': 1,
    });
  });

  it('logs an internal error with its cause and trace id; the caller-facing audit only has the code', () => {
    const { entries, errors, metrics, audit, log } = sinks();
    const observe = createOperationObserver({ metrics, audit, log });
    const cause = new Error('boom');
    observe({
      method: 'completion/complete',
      tool: undefined,
      outcome: { ok: false, error: { code: 'internal_error', message: 'internal error' }, facts: {}, cause },
      durationSeconds: 0,
      request: facts(),
      traceId: 'abc',
    });
    assert.deepEqual(errors, [
      { fields: { err: cause, requestId: 'req-1', trace_id: 'abc' }, message: 'read failed unexpectedly' },
    ]);
    assert.equal(entries[0]?.event, 'mcp.completion');
    assert.equal(entries[0]?.outcome, 'internal_error');
    assert.ok(!JSON.stringify(entries[0]).includes('boom'));
  });

  it('a call without per-call facts is audited as request "unknown" without a caller', () => {
    const { entries, metrics, audit, log } = sinks();
    createOperationObserver({ metrics, audit, log })({
      method: 'tools/call',
      tool: 'dagu_read',
      outcome: { ok: false, error: { code: 'unauthorized', message: 'refused' }, facts: {} },
      durationSeconds: 0,
      request: undefined,
    });
    assert.equal(entries[0]?.requestId, 'unknown');
    assert.equal(entries[0]?.identity, undefined);
    assert.equal(entries[0]?.role, undefined);
  });

  it('carries the tracer it is given', () => {
    const { metrics, audit, log } = sinks();
    const tracer: OperationTracer = {
      start: () => {
        throw new Error('not started here');
      },
    };
    assert.equal(createOperationObserver({ metrics, audit, log, tracer }).tracer, tracer);
  });
});
