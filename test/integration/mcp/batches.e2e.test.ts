// JSON-RPC batches over raw HTTP (and the v1 client's transport, the one client that can send them):
// every call of a batch counts toward the caller's concurrency cap and rate, a batch larger than the
// caller's free concurrency is refused whole before any call runs, revisions from 2025-06-18 on get a
// JSON-RPC error for a batch body, and older revisions get one answer per request, as an array.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import {
  bearer,
  type CapturedGateway,
  metricSum,
  newApiKey,
  postMcp,
  readsThrough,
  scrape,
  startCapturedGateway,
  toolCallBody,
  writeKeysFile,
} from '../../support/auth-fixtures.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { gatewayOnDagu } from '../../support/gateway-on-dagu.ts';

let dagu: TestDagu;
before(async () => {
  dagu = await getTestDagu();
});
after(() => dagu?.stop());

/** POSTs a body with this key; no `version` sends no MCP-Protocol-Version (2025-03-26, batches allowed). */
async function postBatch(url: string, key: string, body: unknown, version?: string) {
  const answer = await postMcp(url, { ...bearer(key), 'mcp-protocol-version': version }, body);
  // A batch answers an array.
  return { ...answer, json: () => JSON.parse(answer.text) as unknown };
}

const runCall = (id: number) => toolCallBody({ target: 'run', name: 'two-steps', dagRunId: 'latest' }, id);

describe('batches and the concurrency cap (MAX_CONCURRENT_CALLS_PER_IDENTITY=4)', () => {
  const KEY = newApiKey('batcher');
  const OTHER = newApiKey('bystander');
  const on = gatewayOnDagu(() => ({
    dagu,
    env: {
      MAX_CONCURRENT_CALLS_PER_IDENTITY: '4',
      RATE_LIMIT_PER_MINUTE: '1000',
      AUTH_API_KEYS_FILE: writeKeysFile([
        { name: 'batcher', key: KEY },
        { name: 'bystander', key: OTHER },
      ]),
    },
  }));

  const inflight = async () =>
    metricSum((await scrape(on.gateway.baseUrl)).samples, 'mcp_gateway_inflight_calls');

  test('each call of a batch takes a slot; a batch larger than the free slots is refused whole with 429', async () => {
    on.proxy.hold();
    try {
      const batch = postBatch(on.gateway.mcpUrl, KEY, [runCall(1), runCall(2), runCall(3)]);
      await on.proxy.held(3);
      assert.equal(await inflight(), 3);
      const forwarded = readsThrough(on.proxy, dagu.apiBase);
      const refused = await postBatch(on.gateway.mcpUrl, KEY, [runCall(4), runCall(5)]);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('retry-after'), '1');
      const body = refused.json() as { code: string; message: string };
      assert.equal(body.code, 'rate_limited');
      assert.match(body.message, /the batch holds 2 calls, 1 of at most 4 are free/);
      assert.equal(
        readsThrough(on.proxy, dagu.apiBase),
        forwarded,
        'no call of the refused batch reached Dagu',
      );
      assert.equal(on.gateway.auditLines().at(-1)?.reason, 'concurrency');
      // The last free slot still serves a single call, and other callers are not affected.
      assert.equal((await postMcp(on.gateway.mcpUrl, bearer(KEY))).status, 200);
      assert.equal(
        (await postBatch(on.gateway.mcpUrl, OTHER, [toolCallBody({ target: 'references' })])).status,
        200,
      );
      on.proxy.release();
      const answered = await batch;
      assert.equal(answered.status, 200);
      const answers = answered.json() as Array<{
        id: number;
        result: { structuredContent: { target: string } };
      }>;
      assert.deepEqual(answers.map((answer) => answer.id).sort(), [1, 2, 3]);
      for (const answer of answers) assert.equal(answer.result.structuredContent.target, 'run');
    } finally {
      on.proxy.release();
    }
    assert.equal(await inflight(), 0);
  });

  test('a batch that holds more calls than the cap never runs any of them', async () => {
    const forwarded = readsThrough(on.proxy, dagu.apiBase);
    const audited = on.gateway.auditLines().length;
    const refused = await postBatch(
      on.gateway.mcpUrl,
      KEY,
      Array.from({ length: 5 }, (_, index) => runCall(index + 1)),
    );
    assert.equal(refused.status, 429);
    assert.match((refused.json() as { message: string }).message, /the batch holds 5 calls, 4 of at most 4/);
    assert.equal(readsThrough(on.proxy, dagu.apiBase), forwarded);
    const lines = on.gateway.auditLines().slice(audited);
    assert.deepEqual(
      lines.map((line) => line.event),
      ['mcp.request_denied'],
    );
    assert.equal(await inflight(), 0);
    // Nothing of the refused batch stays reserved: the cap's worth runs at once.
    const full = await postBatch(
      on.gateway.mcpUrl,
      KEY,
      Array.from({ length: 4 }, (_, index) => runCall(index + 1)),
    );
    assert.equal(full.status, 200);
    assert.equal((full.json() as unknown[]).length, 4);
  });
});

describe('batches and the rate (RATE_LIMIT_PER_MINUTE=5)', () => {
  const KEY = newApiKey('rater');
  let gateway: CapturedGateway;
  before(async () => {
    gateway = await startCapturedGateway({
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      RATE_LIMIT_PER_MINUTE: '5',
      AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'rater', key: KEY }]),
    });
  });
  after(() => gateway?.close());

  test('every call of a batch counts toward the rate; list methods in it do not', async () => {
    const list = { jsonrpc: '2.0', id: 99, method: 'tools/list' };
    const first = await postBatch(gateway.mcpUrl, KEY, [
      toolCallBody({ target: 'references' }, 1),
      toolCallBody({ target: 'references' }, 2),
      toolCallBody({ target: 'references' }, 3),
      list,
    ]);
    assert.equal(first.status, 200);
    assert.equal((first.json() as unknown[]).length, 4);
    const second = await postBatch(gateway.mcpUrl, KEY, [
      toolCallBody({ target: 'references' }, 4),
      toolCallBody({ target: 'references' }, 5),
      toolCallBody({ target: 'references' }, 6),
    ]);
    assert.equal(second.status, 429);
    assert.match((second.json() as { message: string }).message, /at most 5 tool calls per minute/);
    const samples = (await scrape(gateway.baseUrl)).samples;
    assert.equal(metricSum(samples, 'mcp_gateway_rate_limited_total', { reason: 'rate' }), 1);
  });
});

describe('batches and protocol revisions', () => {
  const KEY = newApiKey('reviser');
  const on = gatewayOnDagu(() => ({
    dagu,
    env: { AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'reviser', key: KEY }]) },
  }));

  for (const version of ['2025-06-18', '2025-11-25', '2026-07-28']) {
    test(`MCP-Protocol-Version ${version}: a batch body is a JSON-RPC error, and nothing runs`, async () => {
      const forwarded = readsThrough(on.proxy, dagu.apiBase);
      const answer = await postBatch(on.gateway.mcpUrl, KEY, [runCall(1), runCall(2)], version);
      assert.equal(answer.status, 400);
      const body = answer.json() as {
        jsonrpc: string;
        id: unknown;
        error: { code: number; message: string };
      };
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(body.id, null);
      assert.equal(body.error.code, -32600);
      assert.match(body.error.message, new RegExp(`revision ${version} has no JSON-RPC batches`));
      assert.equal(readsThrough(on.proxy, dagu.apiBase), forwarded);
      // A batch of one is still a batch under these revisions.
      assert.equal((await postBatch(on.gateway.mcpUrl, KEY, [runCall(3)], version)).status, 400);
    });
  }

  for (const version of [undefined, '2025-03-26']) {
    test(`${version ?? 'no MCP-Protocol-Version'}: a batch gets an array of answers, a batch of one too`, async () => {
      const answer = await postBatch(on.gateway.mcpUrl, KEY, [runCall(1), runCall(2)], version);
      assert.equal(answer.status, 200);
      const answers = answer.json() as Array<{
        id: number;
        result: { structuredContent: { target: string } };
      }>;
      assert.deepEqual(answers.map((item) => item.id).sort(), [1, 2]);
      const one = await postBatch(on.gateway.mcpUrl, KEY, [runCall(7)], version);
      assert.equal(one.status, 200);
      const single = one.json() as Array<{ id: number; result: { structuredContent: { target: string } } }>;
      assert.ok(Array.isArray(single), 'a batch of one answers with an array of one');
      assert.equal(single.length, 1);
      assert.equal(single[0]!.id, 7);
      assert.equal(single[0]!.result.structuredContent.target, 'run');
      // The same call outside a batch answers with the object itself.
      const plain = await postBatch(on.gateway.mcpUrl, KEY, runCall(8), version);
      assert.equal((plain.json() as { id: number }).id, 8);
    });
  }

  test('each message of a batch is answered on its own: bad arguments, lists, resources, notifications', async () => {
    const answer = await postBatch(on.gateway.mcpUrl, KEY, [
      toolCallBody('not an object', 1),
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'dagu://reference/tools' } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      toolCallBody({ target: 'references' }, 4),
    ]);
    assert.equal(answer.status, 200);
    const byId = new Map((answer.json() as Array<{ id: number }>).map((item) => [item.id, item as unknown]));
    assert.deepEqual([...byId.keys()].sort(), [1, 2, 3, 4]);
    const bad = byId.get(1) as { result: { isError: boolean; structuredContent: { code: string } } };
    assert.equal(bad.result.isError, true);
    assert.equal(bad.result.structuredContent.code, 'invalid_tool_input');
    assert.equal(
      (byId.get(2) as { result: { tools: Array<{ name: string }> } }).result.tools[0]!.name,
      'dagu_read',
    );
    const resource = byId.get(3) as { result: { contents: Array<{ uri: string }> } };
    assert.equal(resource.result.contents[0]!.uri, 'dagu://reference/tools');
    const notifications = await postBatch(on.gateway.mcpUrl, KEY, [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ]);
    assert.equal(notifications.status, 202);
    assert.equal(notifications.text, '');
  });

  test('malformed batches are refused whole before anything counts them', async () => {
    for (const body of [
      [],
      [{ jsonrpc: '2.0', id: 1 }],
      Array.from({ length: 101 }, (_, id) => runCall(id)),
    ]) {
      const answer = await postBatch(on.gateway.mcpUrl, KEY, body);
      assert.equal(answer.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal((answer.json() as { error: { code: number } }).error.code, -32600);
    }
  });

  test('the v1 client transport: refused under its negotiated 2025-11-25, answered under 2025-03-26', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(on.gateway.mcpUrl), {
      requestInit: { headers: bearer(KEY) },
    });
    const received: JSONRPCMessage[] = [];
    transport.onmessage = (message) => received.push(message);
    await transport.start();
    try {
      const batch = [runCall(1), runCall(2)] as JSONRPCMessage[];
      transport.setProtocolVersion('2025-11-25');
      await assert.rejects(transport.send(batch), (error: Error & { code?: unknown }) => {
        assert.equal(error.code, 400);
        assert.match(error.message, /"code":-32600/);
        return true;
      });
      transport.setProtocolVersion('2025-03-26');
      await transport.send(batch);
      const ids = received.map((message) => (message as { id: number }).id).sort();
      assert.deepEqual(ids, [1, 2]);
    } finally {
      await transport.close();
    }
  });
});
