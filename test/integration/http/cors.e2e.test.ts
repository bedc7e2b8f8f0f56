// CORS on the real gateway over the network (undici fetch, real Dagu behind): the preflight from an
// admitted origin, the headers on answers of both paths (lean and SDK) and on refusals, and nothing
// for any other origin. The browser's side of the same is test/integration/browser.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bearer, newApiKey, postMcp, writeKeysFile } from '../../support/auth-fixtures.ts';
import { gatewayOnTestDagu } from '../../support/gateway-on-dagu.ts';

const ORIGIN = 'http://localhost:6274';
const KEY = newApiKey('cors');
const EXPOSED = 'mcp-session-id, mcp-protocol-version, www-authenticate, retry-after';

const on = gatewayOnTestDagu(() => ({
  AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'cors-key', key: KEY }]),
  ALLOWED_ORIGINS: ORIGIN,
  RATE_LIMIT_PER_MINUTE: '3',
}));

const preflight = (origin: string) =>
  fetch(on.gateway.mcpUrl, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,mcp-protocol-version,authorization',
    },
  });

describe('CORS on the running gateway', () => {
  test('a preflight from the admitted origin: 204 with the methods, headers and max-age', async (t) => {
    const response = await preflight(ORIGIN);
    t.diagnostic(JSON.stringify(Object.fromEntries(response.headers)));
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), ORIGIN);
    assert.equal(response.headers.get('access-control-allow-methods'), 'GET, POST, DELETE');
    assert.equal(
      response.headers.get('access-control-allow-headers'),
      'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, mcp-method, mcp-name, last-event-id',
    );
    assert.equal(response.headers.get('access-control-max-age'), '7200');
    assert.equal(response.headers.get('access-control-expose-headers'), EXPOSED);
  });

  test('another origin: 403 invalid_origin, no CORS header, audited', async () => {
    const response = await preflight('http://127.0.0.1:6274');
    assert.equal(response.status, 403);
    assert.equal(((await response.json()) as { code: string }).code, 'invalid_origin');
    assert.deepEqual(
      [...response.headers.keys()].filter((name) => name.startsWith('access-control-')),
      [],
    );
    assert.ok(
      on.gateway
        .auditLines()
        .some((line) => line.outcome === 'invalid_origin' && line.http_method === 'OPTIONS'),
    );
  });

  test('answers (lean and SDK path) and refusals (401, 429) carry the CORS headers', async () => {
    const withOrigin = { origin: ORIGIN };
    const unauthenticated = await postMcp(on.gateway.mcpUrl, withOrigin);
    assert.equal(unauthenticated.status, 401);
    const initialize = await postMcp(
      on.gateway.mcpUrl,
      { ...withOrigin, ...bearer(KEY) },
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'cors', version: '1' },
        },
      },
    );
    assert.equal(initialize.status, 200);
    const calls = [];
    for (let i = 0; i < 4; i++)
      calls.push(await postMcp(on.gateway.mcpUrl, { ...withOrigin, ...bearer(KEY) }));
    assert.deepEqual(
      calls.map((call) => call.status),
      [200, 200, 200, 429],
    );
    for (const response of [unauthenticated, initialize, calls[0]!, calls[3]!]) {
      assert.equal(response.headers.get('access-control-allow-origin'), ORIGIN, String(response.status));
      assert.equal(response.headers.get('access-control-expose-headers'), EXPOSED);
    }
    assert.match(unauthenticated.headers.get('www-authenticate') ?? '', /^Bearer realm=/);
    assert.match(calls[3]!.headers.get('retry-after') ?? '', /^\d+$/);
  });
});
