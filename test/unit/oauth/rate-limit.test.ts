// The built-in server's per-address request limit (src/oauth/rate-limit.ts), on a Fastify app of its own.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import type { OAuthAuditEntry } from '../../../src/oauth/provider.ts';
import { isBrowserRequest, isOpenRead, limitOAuthRequests } from '../../../src/oauth/rate-limit.ts';

async function limitedApp(perMinute: number): Promise<{ app: FastifyInstance; audited: OAuthAuditEntry[] }> {
  const audited: OAuthAuditEntry[] = [];
  const app = Fastify();
  await app.register(async (scope) => {
    await limitOAuthRequests(scope, { perMinute, audit: (entry) => audited.push(entry) });
    scope.all('/oauth/*', async () => ({ served: true }));
    scope.get('/.well-known/openid-configuration', async () => ({ issuer: 'x' }));
  });
  // A route outside the plugin's context is not counted.
  app.get('/healthz', async () => 'ok');
  return { app, audited };
}

describe('limitOAuthRequests', () => {
  test('the request past the limit gets 429 temporarily_unavailable with Retry-After, audited', async () => {
    const { app, audited } = await limitedApp(2);
    const token = () => app.inject({ method: 'POST', url: '/oauth/token', payload: {} });
    assert.equal((await token()).statusCode, 200);
    assert.equal((await token()).statusCode, 200);
    const refused = await token();
    assert.equal(refused.statusCode, 429);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal(refused.headers['cache-control'], 'no-store');
    assert.deepEqual(refused.json(), {
      error: 'temporarily_unavailable',
      error_description: 'Too many requests from this address: at most 2 a minute.',
    });
    assert.deepEqual(audited, [
      {
        event: 'oauth.refused',
        outcome: 'temporarily_unavailable',
        reason: 'more than 2 requests a minute from one address',
        httpMethod: 'POST',
        path: '/oauth/token',
        httpStatus: 429,
      },
    ]);
    await app.close();
  });

  test('a browser gets a page; another address has its own count; discovery, keys and other routes are not counted', async () => {
    const { app } = await limitedApp(1);
    for (let i = 0; i < 3; i += 1) {
      assert.equal((await app.inject('/.well-known/openid-configuration')).statusCode, 200);
      assert.equal((await app.inject('/oauth/jwks')).statusCode, 200);
      assert.equal((await app.inject('/healthz')).statusCode, 200);
    }
    assert.equal((await app.inject('/oauth/authorize?client_id=a')).statusCode, 200);
    const page = await app.inject('/oauth/authorize?client_id=a');
    assert.equal(page.statusCode, 429);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, /Too many requests/);
    const other = await app.inject({ url: '/oauth/authorize?client_id=a', remoteAddress: '10.0.0.9' });
    assert.equal(other.statusCode, 200);
    await app.close();
  });
});

test('which requests count and how a refusal is answered: isOpenRead (discovery and keys), isBrowserRequest (GETs and the consent form)', () => {
  const cases: Array<[method: string, path: string, open: boolean, browser: boolean]> = [
    ['GET', '/.well-known/oauth-authorization-server', true, true],
    ['GET', '/oauth/jwks', true, true],
    ['POST', '/oauth/jwks', false, false],
    ['GET', '/oauth/authorize', false, true],
    ['POST', '/oauth/interaction/u1/consent', false, true],
    ['POST', '/oauth/token', false, false],
    ['POST', '/oauth/register', false, false],
    ['POST', '/oauth/revoke', false, false],
  ];
  for (const [method, path, open, browser] of cases) {
    assert.equal(isOpenRead(method, path), open, `${method} ${path} open`);
    assert.equal(isBrowserRequest(method, path), browser, `${method} ${path} browser`);
  }
});
