// DNS-rebinding and cross-site protection end to end: a Host outside ALLOWED_HOSTS or an Origin outside
// ALLOWED_ORIGINS gets 403 on every route (MCP, health, readiness, metrics, metadata), before
// authentication; both MCP clients see the 403.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  bearer,
  httpFailure,
  newApiKey,
  postMcp,
  rawHttp,
  startCapturedGateway,
  toolCallBody,
  writeKeysFile,
} from '../../support/auth-fixtures.ts';
import { CONNECTORS } from '../../support/gateway.ts';
import { gatewayOnTestDagu } from '../../support/gateway-on-dagu.ts';

const KEY = newApiKey('origin');
const ALLOWED_ORIGIN = 'https://app.example';

const on = gatewayOnTestDagu(() => ({
  AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'origin-key', key: KEY }]),
  ALLOWED_ORIGINS: ALLOWED_ORIGIN,
}));

interface Route {
  method: 'GET' | 'POST';
  path: string;
}

const ROUTES: Route[] = [
  { method: 'POST', path: '/mcp' },
  { method: 'GET', path: '/mcp' },
  { method: 'GET', path: '/healthz' },
  { method: 'GET', path: '/readyz' },
  { method: 'GET', path: '/metrics' },
  { method: 'GET', path: '/.well-known/oauth-protected-resource/mcp' },
  { method: 'GET', path: '/.well-known/oauth-protected-resource' },
  { method: 'GET', path: '/no-such-route' },
];

function send(route: Route, headers: Record<string, string>) {
  const post = route.method === 'POST';
  return rawHttp(`${on.gateway.baseUrl}${route.path}`, {
    method: route.method,
    headers: {
      ...(post
        ? {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
          }
        : {}),
      ...bearer(KEY),
      ...headers,
    },
    ...(post ? { body: JSON.stringify(toolCallBody({ target: 'references' })) } : {}),
  });
}

describe('Host', () => {
  for (const host of ['evil.example', 'evil.example:8090', 'attacker.test:80', '127.0.0.2.nip.io']) {
    test(`Host: ${host} → 403 invalid_host on every route`, async () => {
      for (const route of ROUTES) {
        const response = await send(route, { host });
        assert.equal(response.status, 403, `${route.method} ${route.path}`);
        assert.equal(JSON.parse(response.text).code, 'invalid_host', `${route.method} ${route.path}`);
      }
      const record = on.gateway.auditLines().at(-1)!;
      assert.deepEqual(
        [record.event, record.outcome, record.reason, record.http_status],
        ['mcp.request_denied', 'invalid_host', 'invalid_host', 403],
      );
    });
  }

  test('loopback names with any port are served', async () => {
    const { port } = new URL(on.gateway.baseUrl);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'localhost', `[::1]:${port}`]) {
      const health = await send({ method: 'GET', path: '/healthz' }, { host });
      assert.equal(health.status, 200, host);
      const mcp = await send({ method: 'POST', path: '/mcp' }, { host });
      assert.equal(mcp.status, 200, host);
    }
  });
});

describe('Origin', () => {
  for (const origin of ['https://evil.example', 'null', 'http://app.example', 'https://app.example:8443']) {
    test(`Origin: ${origin} → 403 invalid_origin on every route, before authentication`, async () => {
      for (const route of ROUTES) {
        const response = await send(route, { origin });
        assert.equal(response.status, 403, `${route.method} ${route.path}`);
        assert.equal(JSON.parse(response.text).code, 'invalid_origin', `${route.method} ${route.path}`);
      }
      // No credential at all: still 403, not 401 (the Origin check comes first).
      const anonymous = await fetch(on.gateway.mcpUrl, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(anonymous.status, 403);
      assert.equal(anonymous.headers.get('www-authenticate'), null);
      const record = on.gateway.auditLines().at(-1)!;
      assert.deepEqual(
        [record.outcome, record.reason, record.path],
        ['invalid_origin', 'invalid_origin', '/mcp'],
      );
    });
  }

  test('the allowed origin, and requests without Origin, are served', async () => {
    for (const headers of [{ origin: ALLOWED_ORIGIN }, {}] as Array<Record<string, string>>) {
      for (const path of ['/healthz', '/metrics', '/.well-known/oauth-protected-resource/mcp']) {
        assert.equal((await fetch(`${on.gateway.baseUrl}${path}`, { headers })).status, 200, path);
      }
      assert.equal((await postMcp(on.gateway.mcpUrl, { ...bearer(KEY), ...headers })).status, 200);
    }
  });

  for (const era of ['modern', 'legacy'] as const) {
    test(`the ${era} client is refused with 403 from a foreign Origin and served from the allowed one`, async () => {
      await assert.rejects(
        CONNECTORS[era](on.gateway.mcpUrl, { ...bearer(KEY), origin: 'https://evil.example' }),
        (error: unknown) => {
          const { status, body } = httpFailure(error);
          assert.equal(status, 403, String(error));
          assert.equal(body.code, 'invalid_origin');
          return true;
        },
      );
      const client = await CONNECTORS[era](on.gateway.mcpUrl, { ...bearer(KEY), origin: ALLOWED_ORIGIN });
      try {
        const result = await client.callTool({ target: 'dag', name: on.dagu.seed.dags.twoSteps });
        assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
      } finally {
        await client.close();
      }
    });
  }
});

describe('loopback origins', () => {
  test('with ALLOWED_ORIGINS set, only its list counts: a loopback Origin is refused', async () => {
    const response = await send({ method: 'POST', path: '/mcp' }, { origin: 'http://localhost:6274' });
    assert.equal(response.status, 403);
    assert.equal(JSON.parse(response.text).code, 'invalid_origin');
  });

  for (const era of ['modern', 'legacy'] as const) {
    test(`a loopback bind without ALLOWED_ORIGINS serves the ${era} client from a loopback Origin, any port`, async () => {
      const local = await startCapturedGateway({
        DAGU_URL: on.dagu.url,
        DAGU_API_BASE: on.dagu.apiBase,
        AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'origin-key', key: KEY }]),
      });
      try {
        for (const origin of ['http://localhost:6274', 'http://127.0.0.1:5173', 'http://[::1]:80']) {
          const client = await CONNECTORS[era](local.mcpUrl, { ...bearer(KEY), origin });
          try {
            const result = await client.callTool({ target: 'dag', name: on.dagu.seed.dags.twoSteps });
            assert.notEqual(result.isError, true, `${origin}: ${JSON.stringify(result.structuredContent)}`);
          } finally {
            await client.close();
          }
        }
        for (const origin of ['https://evil.example', 'http://localhost.evil.example:6274']) {
          await assert.rejects(
            CONNECTORS[era](local.mcpUrl, { ...bearer(KEY), origin }),
            (error: unknown) => httpFailure(error).status === 403,
            origin,
          );
        }
      } finally {
        await local.close();
      }
    });
  }
});
