// Fail closed: an MCP handler that runs without its per-call context (who calls, what they may read) refuses
// the read as `unauthorized` and never reaches the read service; the observer records the refusal and logs
// it at error level. The HTTP route always supplies the context, so the SDK endpoint is driven directly here.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AuditEntry, AuditLog } from '../../../src/audit/audit-log.ts';
import type { OperationRecord } from '../../../src/mcp/operations.ts';
import { createMcpEndpoint } from '../../../src/mcp/server.ts';
import { createMetrics } from '../../../src/metrics/metrics.ts';
import { createOperationObserver } from '../../../src/observe.ts';
import type { CompletionService } from '../../../src/read/completion.ts';
import type { ReadService } from '../../../src/read/service.ts';

function neverCalledReads(): ReadService & { calls: number } {
  const service = {
    calls: 0,
    read: async () => {
      service.calls += 1;
      throw new Error('the read service must not be reached without a caller context');
    },
    readUri: async () => {
      service.calls += 1;
      throw new Error('the read service must not be reached without a caller context');
    },
  };
  return service;
}

function neverCalledCompletions(): CompletionService & { calls: number } {
  const service = {
    calls: 0,
    complete: async () => {
      service.calls += 1;
      throw new Error('completions must not be computed without a caller context');
    },
  };
  return service;
}

const LEGACY_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};

async function post(endpoint: ReturnType<typeof createMcpEndpoint>, body: unknown) {
  const request = new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: LEGACY_HEADERS,
    body: JSON.stringify(body),
  });
  const response = await endpoint.fetch(request);
  return (await response.json()) as Record<string, Record<string, unknown>>;
}

describe('no per-call context', () => {
  test('tools/call, resources/read and completion/complete are refused; nothing behind them is reached', async () => {
    const reads = neverCalledReads();
    const completions = neverCalledCompletions();
    const records: OperationRecord[] = [];
    const endpoint = createMcpEndpoint({
      version: 'test',
      reads,
      completions,
      observe: (record) => records.push(record),
      maxRequestBodySize: 65536,
    });
    try {
      const tool = await post(endpoint, {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'dagu_read', arguments: { target: 'dags' } },
      });
      assert.equal(tool.result!.isError, true);
      assert.equal((tool.result!.structuredContent as { code: string }).code, 'unauthorized');
      const resource = await post(endpoint, {
        jsonrpc: '2.0',
        id: 2,
        method: 'resources/read',
        params: { uri: 'dagu://dags' },
      });
      assert.equal((resource.error!.data as { code: string }).code, 'unauthorized');
      const completion = await post(endpoint, {
        jsonrpc: '2.0',
        id: 3,
        method: 'completion/complete',
        params: {
          ref: { type: 'ref/resource', uri: 'dagu://dags/{name}/spec' },
          argument: { name: 'name', value: 'tw' },
        },
      });
      assert.equal(completion.result, undefined, 'no completion is answered');
      assert.equal((completion.error!.data as { code: string }).code, 'unauthorized');
      assert.equal(reads.calls, 0);
      assert.equal(completions.calls, 0);
      assert.deepEqual(
        records.map((record) => [record.method, record.request, record.outcome.ok]),
        [
          ['tools/call', undefined, false],
          ['resources/read', undefined, false],
          ['completion/complete', undefined, false],
        ],
      );
    } finally {
      await endpoint.close();
    }
  });

  test('the observer audits the refusal and logs it at error level', () => {
    const entries: AuditEntry[] = [];
    const audit = { record: (entry: AuditEntry) => entries.push(entry) } as unknown as AuditLog;
    const errors: string[] = [];
    const log = {
      debug() {},
      info() {},
      warn() {},
      error: (_fields: unknown, message: string) => errors.push(message),
    };
    const observe = createOperationObserver({
      metrics: createMetrics({ defaultMetrics: false }),
      audit,
      log,
    });
    observe({
      method: 'tools/call',
      tool: 'dagu_read',
      outcome: { ok: false, error: { code: 'unauthorized', message: 'refused' }, facts: {} },
      durationSeconds: 0,
      request: undefined,
    });
    assert.deepEqual(errors, ['MCP call without per-call context refused as unauthorized']);
    assert.equal(entries[0]?.outcome, 'unauthorized');
  });
});
