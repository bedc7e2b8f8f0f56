import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import {
  CORS_ALLOWED_HEADERS,
  CORS_EXPOSED_HEADERS,
  CORS_MAX_AGE_SECONDS,
  corsPlugin,
} from '../../../src/http/cors.ts';
import { httpAnswersPlugin } from '../../../src/http/errors.ts';
import { protectedResourcePlugin } from '../../../src/http/protected-resource.ts';
import { refuse } from '../../../src/http/refusals.ts';
import { hostOriginPlugin } from '../../../src/http/security.ts';

const APP = 'https://app.example';

/** The plugins in buildApp's order, with stand-ins for authentication and the MCP route. */
async function gateway(allowedOrigins: string[], loopbackOrigins = false): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(httpAnswersPlugin, { mcpPath: '/mcp' });
  await app.register(hostOriginPlugin, { allowedHosts: ['localhost'], allowedOrigins, loopbackOrigins });
  await app.register(corsPlugin, { mcpPath: '/mcp', allowedOrigins, loopbackOrigins });
  await app.register(protectedResourcePlugin, { mcpPath: '/mcp' });
  app.post(
    '/mcp',
    {
      onRequest: async (request, reply) => {
        if (request.headers.authorization === undefined) {
          return refuse(reply, 'unauthenticated', {
            message: 'No credential.',
            headers: { 'www-authenticate': 'Bearer realm="dagu-mcp-gateway"' },
          });
        }
        if (request.headers.authorization === 'Bearer slow') {
          return refuse(reply, 'rate_limited', { message: 'Later.', headers: { 'retry-after': '7' } });
        }
      },
    },
    async () => ({ jsonrpc: '2.0', id: 1, result: {} }),
  );
  app.get('/mcp', async (_request, reply) => refuse(reply, 'method_not_allowed'));
  app.get('/healthz', async () => ({ status: 'ok' }));
  await app.ready();
  return app;
}

const preflight = (app: FastifyInstance, url: string, origin: string, method = 'POST') =>
  app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      host: 'localhost:8090',
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'content-type,mcp-protocol-version,authorization',
    },
  });

const corsHeaders = (headers: Record<string, unknown>) =>
  Object.keys(headers).filter((name) => name.startsWith('access-control-'));

describe('CORS (corsPlugin)', () => {
  it('answers a preflight on /mcp from an admitted origin with 204 and the MCP methods and headers', async () => {
    const app = await gateway([APP]);
    const response = await preflight(app, '/mcp', APP);
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    assert.equal(response.headers['access-control-allow-origin'], APP);
    assert.equal(response.headers['access-control-allow-methods'], 'GET, POST, DELETE');
    assert.equal(response.headers['access-control-allow-headers'], CORS_ALLOWED_HEADERS.join(', '));
    assert.equal(response.headers['access-control-expose-headers'], CORS_EXPOSED_HEADERS.join(', '));
    assert.equal(response.headers['access-control-max-age'], String(CORS_MAX_AGE_SECONDS));
    assert.equal(response.headers['access-control-allow-credentials'], undefined);
    assert.match(String(response.headers.vary), /Origin/);
    await app.close();
  });

  it('answers a preflight on the discovery documents with GET only', async () => {
    const app = await gateway([APP]);
    for (const url of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const response = await preflight(app, url, APP, 'GET');
      assert.equal(response.statusCode, 204, url);
      assert.equal(response.headers['access-control-allow-methods'], 'GET', url);
      const document = await app.inject({ url, headers: { host: 'localhost', origin: APP } });
      assert.equal(document.statusCode, 200, url);
      assert.equal(document.headers['access-control-allow-origin'], APP, url);
    }
    await app.close();
  });

  it('gives another origin the Host/Origin 403 and no CORS header, preflight or not', async () => {
    const app = await gateway([APP]);
    for (const response of [
      await preflight(app, '/mcp', 'https://evil.example'),
      await app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { host: 'localhost', origin: 'https://evil.example', authorization: 'Bearer k' },
        payload: {},
      }),
    ]) {
      assert.equal(response.statusCode, 403);
      assert.equal(response.json().code, 'invalid_origin');
      assert.deepEqual(corsHeaders(response.headers), []);
    }
    await app.close();
  });

  it('adds nothing on other routes, without an Origin, or to an OPTIONS that is no preflight', async () => {
    const app = await gateway([APP]);
    const health = await preflight(app, '/healthz', APP, 'GET');
    assert.equal(health.statusCode, 404);
    assert.deepEqual(corsHeaders(health.headers), []);
    const healthGet = await app.inject({ url: '/healthz', headers: { host: 'localhost', origin: APP } });
    assert.equal(healthGet.statusCode, 200);
    assert.deepEqual(corsHeaders(healthGet.headers), []);
    const plainOptions = await app.inject({
      method: 'OPTIONS',
      url: '/mcp',
      headers: { host: 'localhost', origin: APP },
    });
    assert.equal(plainOptions.statusCode, 404);
    assert.equal(plainOptions.json().code, 'not_found');
    assert.deepEqual(corsHeaders(plainOptions.headers), []);
    const noOrigin = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { host: 'localhost', authorization: 'Bearer k' },
      payload: {},
    });
    assert.equal(noOrigin.statusCode, 200);
    assert.deepEqual(corsHeaders(noOrigin.headers), []);
    await app.close();
  });

  it('keeps the CORS headers on answers and on refusals (401 with its challenge, 429, 405)', async () => {
    const app = await gateway([APP]);
    const post = (authorization?: string) =>
      app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { host: 'localhost', origin: APP, ...(authorization ? { authorization } : {}) },
        payload: {},
      });
    const served = await post('Bearer k');
    const unauthenticated = await post();
    const limited = await post('Bearer slow');
    const get = await app.inject({ url: '/mcp', headers: { host: 'localhost', origin: APP } });
    assert.deepEqual(
      [served.statusCode, unauthenticated.statusCode, limited.statusCode, get.statusCode],
      [200, 401, 429, 405],
    );
    for (const response of [served, unauthenticated, limited, get]) {
      assert.equal(response.headers['access-control-allow-origin'], APP);
      assert.equal(response.headers['access-control-expose-headers'], CORS_EXPOSED_HEADERS.join(', '));
      // Preflight-only headers stay off actual answers.
      assert.equal(response.headers['access-control-allow-methods'], undefined);
    }
    assert.equal(unauthenticated.headers['www-authenticate'], 'Bearer realm="dagu-mcp-gateway"');
    assert.equal(limited.headers['retry-after'], '7');
    await app.close();
  });

  it('admits exactly the origins the Host/Origin check admits (same matcher, loopback rule included)', async () => {
    const origins = [
      'http://localhost:6274',
      'http://127.0.0.1:5173',
      'http://[::1]:6274',
      'https://localhost:6274',
      APP,
      'https://app.example:8443',
      'https://evil.example',
      'null',
      'chrome-extension://abcdef',
    ];
    for (const [list, loopback] of [
      [[], true],
      [[APP], false],
      [['localhost', 'chrome-extension://*'], false],
    ] as Array<[string[], boolean]>) {
      const app = await gateway(list, loopback);
      for (const origin of origins) {
        const response = await preflight(app, '/mcp', origin);
        const admitted = response.statusCode === 204;
        assert.equal(
          response.headers['access-control-allow-origin'],
          admitted ? origin : undefined,
          `${origin} with ${JSON.stringify(list)}`,
        );
        if (!admitted) assert.equal(response.json().code, 'invalid_origin', origin);
      }
      await app.close();
    }
  });
});
