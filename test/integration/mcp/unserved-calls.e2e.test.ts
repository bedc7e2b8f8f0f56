// Every call accounted for: messages outside what the gateway serves (an unknown tool, an unknown
// method), a batch refused whole and oversized headers each leave one audit record and move
// `mcp_gateway_refused_requests_total` by one, under a bounded reason (never the name that was sent).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  bearer,
  metricSum,
  newApiKey,
  postMcp,
  rawHttp,
  scrape,
  writeKeysFile,
} from '../../support/auth-fixtures.ts';
import { gatewayOnTestDagu } from '../../support/gateway-on-dagu.ts';

const KEY = newApiKey('unserved');

describe('calls the gateway does not serve are audited and counted', () => {
  const on = gatewayOnTestDagu(() => ({
    AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'unserved', key: KEY }]),
  }));

  const refusedCount = async (reason: string) =>
    metricSum((await scrape(on.gateway.baseUrl)).samples, 'mcp_gateway_refused_requests_total', { reason });
  const denied = (reason: string) =>
    on.gateway.auditLines().filter((line) => line.event === 'mcp.request_denied' && line.reason === reason);

  test('an unknown tool: -32602, one audit record naming it, one count', async () => {
    const before = await refusedCount('unknown_tool');
    const response = await postMcp(on.gateway.mcpUrl, bearer(KEY), {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'dagu_write', arguments: {} },
    });
    const body = response.json() as { error?: { code: number }; result?: { isError?: boolean } };
    // The SDK answers an unknown tool with -32602 (or a tool error result in some revisions).
    assert.ok(body.error?.code === -32602 || body.result?.isError === true, response.text);
    assert.equal((await refusedCount('unknown_tool')) - before, 1);
    const [record] = denied('unknown_tool');
    assert.equal(record?.tool, 'dagu_write');
    assert.equal(record?.method, 'tools/call');
    assert.equal(record?.identity, 'unserved');
  });

  test('an unknown method: -32601, one audit record, one count; a notification is not counted', async () => {
    const before = await refusedCount('unknown_method');
    const response = await postMcp(on.gateway.mcpUrl, bearer(KEY), {
      jsonrpc: '2.0',
      id: 8,
      method: 'dagu/delete_everything',
      params: {},
    });
    assert.equal((response.json() as { error?: { code: number } }).error?.code, -32601, response.text);
    await postMcp(on.gateway.mcpUrl, bearer(KEY), { jsonrpc: '2.0', method: 'notifications/unknown' });
    assert.equal((await refusedCount('unknown_method')) - before, 1);
    assert.equal(denied('unknown_method')[0]?.method, 'dagu/delete_everything');
  });

  test('a batch refused whole: 400, one audit record, one count', async () => {
    const before = await refusedCount('batch');
    const message = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const response = await postMcp(
      on.gateway.mcpUrl,
      { ...bearer(KEY), 'mcp-protocol-version': '2025-06-18' },
      [message, { ...message, id: 2 }],
    );
    assert.equal(response.status, 400);
    assert.equal((await refusedCount('batch')) - before, 1);
    assert.equal(denied('batch')[0]?.http_status, 400);
  });

  test('oversized headers: 431 in the gateway shape, one audit record, one count', async () => {
    const before = await refusedCount('headers_too_large');
    const response = await rawHttp(`${on.gateway.baseUrl}/healthz`, {
      headers: { 'x-padding': 'a'.repeat(20_000) },
    });
    assert.equal(response.status, 431);
    assert.deepEqual(JSON.parse(response.text), {
      code: 'headers_too_large',
      message: 'The request headers are too large.',
    });
    assert.equal((await refusedCount('headers_too_large')) - before, 1);
    assert.equal(denied('headers_too_large').length, 1);
  });
});
