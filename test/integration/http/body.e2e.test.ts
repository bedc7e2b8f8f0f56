// Bytes are checked at the door: a JSON body that is not valid UTF-8 is a JSON-RPC parse error (400)
// and nothing of it reaches Dagu; a body in a Content-Encoding the gateway does not decode gets 415.
// Authentication still answers first.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { bearer, newApiKey, rawHttp, readsThrough, writeKeysFile } from '../../support/auth-fixtures.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { gatewayOnDagu } from '../../support/gateway-on-dagu.ts';

const KEY = newApiKey('door');
let dagu: TestDagu;
const on = gatewayOnDagu(async () => {
  dagu = await getTestDagu();
  return { dagu, env: { AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'door', key: KEY }]) } };
});
after(() => dagu?.stop());

const ENVELOPE =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}';
const ERA_HEADERS = {
  legacy: { 'mcp-protocol-version': '2025-11-25' },
  modern: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'dagu_read' },
};

/** A dag_spec tools/call whose `name` is `nameBytes` as sent, byte for byte. */
function toolCallBytes(era: 'modern' | 'legacy', nameBytes: Buffer): Buffer {
  const meta = era === 'modern' ? `,${ENVELOPE}` : '';
  return Buffer.concat([
    Buffer.from(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"dagu_read","arguments":{"target":"dag_spec","name":"',
    ),
    nameBytes,
    Buffer.from(`"}${meta}}}`),
  ]);
}

/** POSTs raw bytes (rawHttp: node:http keeps every byte and header ours). */
function post(body: Buffer, headers: Record<string, string>) {
  return rawHttp(on.gateway.mcpUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'content-length': String(body.length),
      ...headers,
    },
    body,
  });
}

for (const era of ['legacy', 'modern'] as const) {
  describe(`${era} era`, () => {
    test('valid UTF-8 reaches Dagu as sent; invalid UTF-8 is a JSON-RPC parse error and reaches nothing', async () => {
      const valid = await post(toolCallBytes(era, Buffer.from('two-steps')), {
        ...bearer(KEY),
        ...ERA_HEADERS[era],
      });
      assert.equal(valid.status, 200);
      assert.equal(JSON.parse(valid.text).result.structuredContent.target, 'dag_spec');
      const forwarded = readsThrough(on.proxy, dagu.apiBase);
      const audited = on.gateway.auditLines().length;
      for (const bad of [
        Buffer.from([0xc3, 0x28, 0xff]), // the probe: a broken two-byte sequence and a stray 0xff
        Buffer.from([0xed, 0xa0, 0x80]), // an encoded UTF-16 surrogate
        Buffer.from([0xc0, 0xaf]), // an overlong '/'
        Buffer.from([0x74, 0x77, 0x6f, 0xe2, 0x82]), // cut short at the end of the value
      ]) {
        const refused = await post(toolCallBytes(era, bad), { ...bearer(KEY), ...ERA_HEADERS[era] });
        assert.equal(refused.status, 400, bad.toString('hex'));
        assert.deepEqual(JSON.parse(refused.text), {
          jsonrpc: '2.0',
          error: { code: -32700, message: 'Parse error: the body is not valid UTF-8.' },
          id: null,
        });
      }
      assert.equal(readsThrough(on.proxy, dagu.apiBase), forwarded, 'no invalid body reached Dagu');
      assert.deepEqual(
        on.gateway
          .auditLines()
          .slice(audited)
          .filter((line) => line.event === 'mcp.tool_call'),
        [],
      );
    });
  });
}

describe('text that is valid UTF-8 stays what it was', () => {
  test('a byte-order mark is dropped as before; multi-byte names arrive intact, do not exist, and never reach Dagu', async () => {
    const bom = await post(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), toolCallBytes('legacy', Buffer.from('two-steps'))]),
      { ...bearer(KEY), ...ERA_HEADERS.legacy },
    );
    assert.equal(bom.status, 200);
    assert.notEqual(JSON.parse(bom.text).result.isError, true, bom.text);
    const sentBefore = on.proxy.requests.length;
    const name = 'caf\u00e9-\u{1f600}';
    const accented = await post(toolCallBytes('legacy', Buffer.from(name)), {
      ...bearer(KEY),
      ...ERA_HEADERS.legacy,
    });
    assert.equal(accented.status, 200);
    // Decoded byte for byte: the error's URI carries exactly this name, escaped. Dagu cannot hold a
    // non-ASCII name (issue 12: names Dagu cannot hold never reach Dagu), so it simply does not exist.
    const content = JSON.parse(accented.text).result.structuredContent;
    const escaped = encodeURIComponent(name);
    assert.equal(content.code, 'resource_not_found', accented.text);
    assert.equal(content.uri, `dagu://dags/${escaped}/spec`);
    const paths = on.proxy.requests.slice(sentBefore).map((request) => request.rawUrl);
    assert.ok(
      paths.every((path) => !path.includes(escaped) && !path.includes(name)),
      paths.join(' '),
    );
  });
});

describe('Content-Encoding', () => {
  const plain = toolCallBytes('legacy', Buffer.from('two-steps'));

  for (const coding of ['gzip', 'deflate', 'br', 'gzip, identity', 'x-custom']) {
    test(`${coding}: 415 with Accept-Encoding: identity, for a plain or an encoded body alike`, async () => {
      const forwarded = readsThrough(on.proxy, dagu.apiBase);
      for (const body of [plain, gzipSync(plain)]) {
        const refused = await post(body, {
          ...bearer(KEY),
          ...ERA_HEADERS.legacy,
          'content-encoding': coding,
        });
        assert.equal(refused.status, 415);
        assert.equal(refused.headers['accept-encoding'], 'identity');
        const answer = JSON.parse(refused.text);
        assert.equal(answer.jsonrpc, '2.0');
        assert.equal(answer.error.code, -32000);
        assert.match(answer.error.message, /Content-Encoding .* is not accepted/);
      }
      assert.equal(readsThrough(on.proxy, dagu.apiBase), forwarded);
    });
  }

  test('identity is no encoding at all', async () => {
    const served = await post(plain, {
      ...bearer(KEY),
      ...ERA_HEADERS.legacy,
      'content-encoding': 'identity',
    });
    assert.equal(served.status, 200);
  });

  test('without a credential the answer is still 401: authentication comes first', async () => {
    const refused = await post(gzipSync(plain), { ...ERA_HEADERS.legacy, 'content-encoding': 'gzip' });
    assert.equal(refused.status, 401);
  });
});
