// The HTTP edge of the MCP endpoint with raw requests: both eras answer plain JSON, arguments the SDK
// would reject still get the contract's error object, and malformed requests get JSON-RPC errors.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startCapturedGateway } from '../../support/auth-fixtures.ts';
import { type RunningGateway, startGateway } from '../../support/gateway.ts';

let gateway: RunningGateway;
before(async () => {
  // None of these requests reaches Dagu.
  gateway = await startGateway({ DAGU_URL: 'http://127.0.0.1:9', BODY_LIMIT_BYTES: '65536' });
});
after(async () => {
  await gateway?.close();
});

const LEGACY = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};
const MODERN = {
  'content-type': 'application/json',
  accept: 'application/json',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'dagu_read',
};
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

async function post(headers: Record<string, string>, body: string) {
  const response = await fetch(gateway.mcpUrl, { method: 'POST', headers, body });
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    json: JSON.parse(text),
  };
}

const toolCall = (args: unknown, meta?: object) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'dagu_read', arguments: args, ...(meta ? { _meta: meta } : {}) },
  });

test('a legacy tools/call without initialize answers plain JSON', async () => {
  const reply = await post(LEGACY, toolCall({ target: 'reference', name: 'tools' }));
  assert.equal(reply.status, 200);
  assert.match(reply.type, /^application\/json/);
  assert.equal(reply.json.id, 7);
  assert.equal(reply.json.result.structuredContent.target, 'reference');
});

test('a modern tools/call answers plain JSON', async () => {
  const reply = await post(MODERN, toolCall({ target: 'references' }, ENVELOPE));
  assert.equal(reply.status, 200);
  assert.match(reply.type, /^application\/json/);
  assert.equal(reply.json.result.structuredContent.target, 'references');
});

test('arguments the SDK would reject or mangle get the contract error object in both eras', async () => {
  const cases: Array<[unknown, string | undefined]> = [
    ['a string', undefined],
    [[1, 2], undefined],
    [null, undefined],
    [42, undefined],
  ];
  for (const [headers, meta] of [
    [LEGACY, undefined],
    [MODERN, ENVELOPE],
  ] as const) {
    for (const [args, field] of cases) {
      const reply = await post(headers, toolCall(args, meta));
      assert.equal(reply.status, 200, JSON.stringify(args));
      const result = reply.json.result;
      assert.equal(result.isError, true, JSON.stringify(args));
      assert.equal(result.structuredContent.code, 'invalid_tool_input');
      assert.equal(result.structuredContent.field, field);
    }
    // JSON.parse keeps an own `__proto__` key; the SDK would drop it silently.
    const proto = await post(
      headers,
      toolCall({ target: 'dags' }, meta).replace('"target"', '"__proto__":{"x":1},"target"'),
    );
    assert.deepEqual(proto.json.result.structuredContent, {
      code: 'invalid_tool_input',
      message: 'Unknown field "__proto__".',
      field: '__proto__',
      target: 'dags',
    });
  }
});

test('malformed requests get JSON-RPC errors, never a Fastify or empty body', async () => {
  const invalid = await post(LEGACY, '{bad json');
  assert.equal(invalid.status, 400);
  assert.deepEqual(invalid.json, {
    jsonrpc: '2.0',
    error: { code: -32700, message: 'Parse error: the body is not valid JSON.' },
    id: null,
  });
  const large = await post(LEGACY, toolCall({ target: 'dag', name: 'x'.repeat(70_000) }));
  assert.equal(large.status, 413);
  assert.equal(large.json.error.code, -32000);
  const wrongType = await fetch(gateway.mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: 'x',
  });
  assert.equal(wrongType.status, 415);
  assert.equal(((await wrongType.json()) as { jsonrpc: string }).jsonrpc, '2.0');
  const unknownRoute = await fetch(`${gateway.baseUrl}/nope`);
  assert.equal(unknownRoute.status, 404);
  assert.deepEqual(await unknownRoute.json(), { code: 'not_found', message: 'Not found.' });
});

test('deeply nested tool arguments are a tool error; deep nesting elsewhere is an invalid request', async () => {
  const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
  for (const headers of [LEGACY, MODERN]) {
    const meta = headers === MODERN ? ENVELOPE : undefined;
    const body = toolCall({ target: 'dag', name: 'PLACEHOLDER' }, meta).replace(
      '"PLACEHOLDER"',
      deep(30_000),
    );
    const reply = await post(headers, body);
    assert.equal(reply.status, 200);
    assert.equal(reply.json.result.structuredContent.code, 'invalid_tool_input');
    assert.equal(reply.json.result.structuredContent.field, 'name');
  }
  const nestedMeta = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'resources/list',
    params: { _meta: { x: JSON.parse(deep(100)) } },
  });
  const refused = await post(LEGACY, nestedMeta);
  assert.equal(refused.status, 400);
  assert.equal(refused.json.error.code, -32600);
});

test('a resources/read without a string uri is an invalid resource URI, not an internal error', async () => {
  for (const params of [{}, { uri: 5 }, { uri: null }]) {
    const reply = await post(
      LEGACY,
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'resources/read', params }),
    );
    assert.equal(reply.status, 200);
    assert.equal(reply.json.error.code, -32602, JSON.stringify(params));
    assert.equal(reply.json.error.data.code, 'invalid_resource_uri');
  }
});

test('GET and DELETE on /mcp answer 405 and write their request lines only at LOG_LEVEL=debug, like POST', async () => {
  const requestLines = (text: string) =>
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { msg?: string })
      .filter((line) => line.msg === 'incoming request' || line.msg === 'request completed');
  for (const level of ['info', 'debug'] as const) {
    const captured = await startCapturedGateway({ DAGU_URL: 'http://127.0.0.1:9' }, { logLevel: level });
    try {
      for (const method of ['GET', 'DELETE']) {
        const response = await fetch(captured.mcpUrl, { method, headers: LEGACY });
        assert.equal(response.status, 405, method);
        await response.arrayBuffer();
      }
      const lines = requestLines(captured.logText()).map((line) => line.msg);
      // At debug (and trace) the two request lines of each are written, as for POST.
      if (level === 'info') assert.deepEqual(lines, []);
      else assert.equal(lines.length, 4, lines.join(', '));
    } finally {
      await captured.close();
    }
  }
});
