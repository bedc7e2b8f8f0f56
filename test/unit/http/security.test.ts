import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import type { AuditEntry } from '../../../src/audit/audit-log.ts';
import { protectedResourcePlugin, resourceMetadataPath } from '../../../src/http/protected-resource.ts';
import { hostOriginHook, originMatcher } from '../../../src/http/security.ts';

async function app(allowedHosts: string[], allowedOrigins: string[], audited: AuditEntry[] = []) {
  const instance = Fastify();
  instance.addHook(
    'onRequest',
    hostOriginHook({ allowedHosts, allowedOrigins, audit: { record: (e) => audited.push(e) } }),
  );
  instance.get('/healthz', async () => ({ status: 'ok' }));
  await instance.ready();
  return instance;
}

describe('Host and Origin checks', () => {
  it('accepts allowed hosts on any port, IPv6 loopback in either spelling, and refuses others with 403', async () => {
    const audited: AuditEntry[] = [];
    const server = await app(['localhost', '127.0.0.1', '::1', 'Gateway.Example'], [], audited);
    const get = (host: string) => server.inject({ method: 'GET', url: '/healthz?x=1', headers: { host } });
    for (const host of ['localhost:8090', '127.0.0.1', '[::1]:8090', 'gateway.example']) {
      assert.equal((await get(host)).statusCode, 200, host);
    }
    const refused = [
      'evil.example',
      'localhost.evil.example:8090',
      '127.0.0.2',
      'bad host',
      // Only a host and a port: anything more would flow into metadata built from the Host.
      'localhost/", authorization_uri="https://evil.example/x',
      'localhost/evil',
      '127.0.0.1\\evil.example',
      'localhost.',
      'localhost:80:80',
    ];
    for (const host of refused) {
      const response = await get(host);
      assert.equal(response.statusCode, 403, host);
      assert.equal(response.json().code, 'invalid_host');
    }
    assert.equal(audited.length, refused.length);
    assert.deepEqual(
      [audited[0]!.event, audited[0]!.outcome, audited[0]!.httpStatus, audited[0]!.path],
      ['mcp.request_denied', 'invalid_host', 403, '/healthz'],
    );
  });

  it('lets `*` accept any well-formed Host', async () => {
    const server = await app(['*'], []);
    const get = (host: string) => server.inject({ method: 'GET', url: '/healthz', headers: { host } });
    assert.equal((await get('anything.example')).statusCode, 200);
    assert.equal((await get('anything.example/", x="y')).statusCode, 403);
  });

  it('passes requests without Origin and refuses every Origin when none is allowed', async () => {
    const server = await app(['localhost'], []);
    assert.equal((await server.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    const response = await server.inject({
      method: 'GET',
      url: '/healthz',
      headers: { origin: 'http://localhost:6274' },
    });
    assert.equal(response.statusCode, 403);
    assert.deepEqual(response.json(), {
      code: 'invalid_origin',
      message: 'Requests from this Origin are not allowed.',
    });
  });

  it('matches hostnames, exact origins and extension schemes', () => {
    const allowed = originMatcher([
      'localhost',
      'https://app.example:8443',
      'chrome-extension://*',
      'https://*',
    ]);
    assert.equal(allowed('http://localhost:6274'), true);
    assert.equal(allowed('https://localhost'), true);
    assert.equal(allowed('https://app.example:8443'), true);
    assert.equal(allowed('https://app.example'), false, 'a full origin needs the same port');
    assert.equal(allowed('http://app.example:8443'), false, 'and the same scheme');
    assert.equal(allowed('chrome-extension://abcdefghijklmnop'), true);
    assert.equal(allowed('https://evil.example'), false, 'https://* is not honoured');
    assert.equal(allowed('null'), false);
    assert.equal(allowed('not a url'), false);
  });
});

describe('loopback origins (a loopback bind with ALLOWED_ORIGINS unset)', () => {
  it('accepts http:// origins on localhost, 127.0.0.1 and [::1] with any port, and nothing else', () => {
    const allowed = originMatcher([], { loopback: true });
    for (const origin of [
      'http://localhost:6274',
      'http://LOCALHOST:1',
      'http://localhost',
      'http://127.0.0.1:8090',
      'http://[::1]:5173',
    ]) {
      assert.equal(allowed(origin), true, origin);
    }
    for (const origin of [
      'https://localhost:6274',
      'http://127.0.0.2:8090',
      'http://localhost.evil.example',
      'http://evil.example',
      'http://0.0.0.0:8090',
      'http://[::ffff:127.0.0.1]:80',
      'null',
      'file://',
    ]) {
      assert.equal(allowed(origin), false, origin);
    }
    assert.equal(originMatcher([])('http://localhost:6274'), false, 'off unless asked for');
  });

  it('lets the hook serve a loopback Origin and still refuse a foreign one', async () => {
    const instance = Fastify();
    instance.addHook(
      'onRequest',
      hostOriginHook({ allowedHosts: ['localhost'], allowedOrigins: [], loopbackOrigins: true }),
    );
    instance.get('/healthz', async () => ({ status: 'ok' }));
    const get = (origin: string) =>
      instance.inject({ method: 'GET', url: '/healthz', headers: { host: 'localhost:8090', origin } });
    assert.equal((await get('http://localhost:6274')).statusCode, 200);
    assert.equal((await get('http://evil.example')).statusCode, 403);
  });
});

describe('protected-resource metadata (RFC 9728)', () => {
  it('serves the document at the path-suffixed and the bare well-known URL', async () => {
    const server = Fastify();
    await server.register(protectedResourcePlugin, { mcpPath: '/mcp', publicUrl: undefined });
    for (const url of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const response = await server.inject({ method: 'GET', url, headers: { host: 'gw.example:8090' } });
      assert.equal(response.statusCode, 200, url);
      assert.match(String(response.headers['content-type']), /^application\/json/);
      assert.deepEqual(response.json(), {
        resource: 'http://gw.example:8090/mcp',
        bearer_methods_supported: ['header'],
        resource_name: 'Dagu MCP Gateway',
      });
    }
  });

  it('uses PUBLIC_URL and lists an authorization server when tokens come from one', async () => {
    const server = Fastify();
    await server.register(protectedResourcePlugin, {
      mcpPath: '/tools/mcp',
      publicUrl: 'https://gateway.example/',
      authorizationServers: ['https://idp.example/realms/ops'],
      scopesSupported: ['dagu.read', 'dagu.workbook'],
    });
    const response = await server.inject({
      method: 'GET',
      url: '/.well-known/oauth-protected-resource/tools/mcp',
    });
    assert.deepEqual(response.json(), {
      resource: 'https://gateway.example/tools/mcp',
      bearer_methods_supported: ['header'],
      resource_name: 'Dagu MCP Gateway',
      authorization_servers: ['https://idp.example/realms/ops'],
      scopes_supported: ['dagu.read', 'dagu.workbook'],
    });
  });

  it('puts the metadata path after the well-known prefix, without a trailing slash', () => {
    assert.equal(resourceMetadataPath('/mcp/'), '/.well-known/oauth-protected-resource/mcp');
  });
});
