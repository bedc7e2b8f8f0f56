/**
 * The transport-less core (src/gateway-core.ts), built from a real configuration pointing at a Dagu
 * that is not there (127.0.0.1:9, a closed port): what it builds, that a read through it is audited
 * and counted, that the cache settings decide what it creates, and that close() releases the Dagu client.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { UNRESTRICTED_ACCESS } from '../../src/core/access.ts';
import { silentLog } from '../../src/core/log.ts';
import { createGatewayCore } from '../../src/gateway-core.ts';
import { GATEWAY_VERSION } from '../../src/version.ts';
import { tempDir } from '../support/temp.ts';

const CLOSED_PORT_DAGU = 'http://127.0.0.1:9';

const configWith = (env: Record<string, string>) =>
  loadConfig({ DAGU_URL: CLOSED_PORT_DAGU, DAGU_PROBE_INTERVAL_MS: '0', AUDIT_LOG: 'stderr', ...env });

describe('createGatewayCore', () => {
  test('builds the server options from the configuration, and a fresh MCP server each time', async () => {
    const core = createGatewayCore(configWith({ TOOL_TEXT: 'json' }), silentLog);
    try {
      assert.equal(core.server.version, GATEWAY_VERSION);
      assert.equal(core.server.toolText, 'json');
      assert.equal(core.server.observe.tracer, undefined, 'no tracing given, no tracer');
      const first = core.createMcpServer();
      assert.notEqual(core.createMcpServer(), first);
    } finally {
      await core.close();
    }
  });

  test('a read of the absent Dagu is refused with the contract error, audited and counted', async () => {
    const auditPath = join(tempDir(), 'audit.log');
    const core = createGatewayCore(configWith({ AUDIT_LOG: auditPath }), silentLog);
    try {
      const outcome = await core.server.reads.read({ target: 'dags' }, { access: UNRESTRICTED_ACCESS });
      assert.equal(outcome.ok, false);
      assert.equal(outcome.ok ? undefined : outcome.error.code, 'resource_unavailable');
      core.server.observe({
        method: 'tools/call',
        tool: 'dagu_read',
        outcome,
        durationSeconds: 0.002,
        request: undefined,
      });
      const upstream = await core.metrics.registry.getSingleMetricAsString(
        'dagu_upstream_request_duration_seconds',
      );
      assert.match(
        upstream,
        /dagu_upstream_request_duration_seconds_count\{route="[^"]+",status="network_error"\} 1/,
      );
      const operations = await core.metrics.registry.getSingleMetricAsString(
        'mcp_server_operation_duration_seconds',
      );
      assert.match(operations, /error_type="resource_unavailable"\} 1/);
      const readiness = await core.readiness.refresh();
      assert.equal(readiness.reachable, false);
      assert.equal(readiness.url, CLOSED_PORT_DAGU);
    } finally {
      await core.close();
    }
    const lines = readFileSync(auditPath, 'utf8').trim().split('\n');
    assert.equal(lines.length, 1);
    const entry = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    assert.equal(entry.event, 'mcp.tool_call');
    assert.equal(entry.outcome, 'resource_unavailable');
  });

  test('the cache size gauge reports CACHE_MAX_BYTES, 0 when the cache is off', async () => {
    const cached = createGatewayCore(configWith({ CACHE_MAX_BYTES: '1048576' }), silentLog);
    const uncached = createGatewayCore(configWith({ CACHE_MAX_BYTES: '0' }), silentLog);
    try {
      const gauge = async (core: typeof cached) =>
        (await core.metrics.registry.getSingleMetricAsString('mcp_gateway_cache_max_bytes')).match(
          /^mcp_gateway_cache_max_bytes (\d+)$/m,
        )?.[1];
      assert.equal(await gauge(cached), '1048576');
      assert.equal(await gauge(uncached), '0');
    } finally {
      await cached.close();
      await uncached.close();
    }
  });

  test('close() releases the Dagu client: a read after it is refused', async () => {
    const core = createGatewayCore(configWith({}), silentLog);
    await core.close();
    await assert.rejects(core.dagu.get({ route: '/dags' }), { name: 'DaguError' });
  });

  test('close() twice, or twice at once, closes once and settles both', async () => {
    const core = createGatewayCore(configWith({}), silentLog);
    const [first, second] = [core.close(), core.close()];
    assert.equal(first, second);
    await Promise.all([first, second]);
    await core.close();
  });
});
