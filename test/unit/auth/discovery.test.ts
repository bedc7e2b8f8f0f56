/**
 * The issuer's discovery document (src/auth/discovery.ts) served from a local HTTP server: the URLs
 * tried and their order, the issuer check (a trailing slash named in the error), and what a start-up
 * error says when no document can be read.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { discoverJwksUrl, discoveryUrls, IssuerDiscoveryError } from '../../../src/auth/discovery.ts';
import { freePort } from '../../support/dagu.ts';

/** Path → document served; anything else is a 404. Every requested path is recorded. */
let documents = new Map<string, unknown>();
let requested: string[] = [];
let server: Server;
let origin: string;

before(async () => {
  server = createServer((request, response) => {
    requested.push(request.url ?? '');
    const document = documents.get(request.url ?? '');
    if (document === undefined) return void response.writeHead(404).end();
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(typeof document === 'string' ? document : JSON.stringify(document));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  documents = new Map();
  requested = [];
});

const refused = (pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof IssuerDiscoveryError, String(error));
  assert.match(error.message, pattern);
  return true;
};

describe('discoveryUrls', () => {
  it('tries OpenID discovery, then RFC 8414 metadata, at the origin of an issuer without a path', () => {
    assert.deepEqual(discoveryUrls('https://idp.example.com'), [
      'https://idp.example.com/.well-known/openid-configuration',
      'https://idp.example.com/.well-known/oauth-authorization-server',
    ]);
  });

  it("appends OpenID's suffix to an issuer with a path, then inserts each suffix before the path", () => {
    assert.deepEqual(discoveryUrls('https://idp.example.com/realms/dagu/'), [
      'https://idp.example.com/realms/dagu/.well-known/openid-configuration',
      'https://idp.example.com/.well-known/openid-configuration/realms/dagu',
      'https://idp.example.com/.well-known/oauth-authorization-server/realms/dagu',
    ]);
  });
});

describe('discoverJwksUrl', () => {
  it("returns the jwks_uri of the issuer's OpenID configuration", async () => {
    const issuer = `${origin}/realms/dagu`;
    documents.set('/realms/dagu/.well-known/openid-configuration', {
      issuer,
      jwks_uri: `${issuer}/protocol/openid-connect/certs`,
    });
    assert.deepEqual(await discoverJwksUrl(issuer), {
      jwksUrl: `${issuer}/protocol/openid-connect/certs`,
      documentUrl: `${issuer}/.well-known/openid-configuration`,
    });
    assert.deepEqual(requested, ['/realms/dagu/.well-known/openid-configuration']);
  });

  it('falls back to RFC 8414 authorization-server metadata when no OpenID document is served', async () => {
    const issuer = `${origin}/tenant`;
    documents.set('/.well-known/oauth-authorization-server/tenant', { issuer, jwks_uri: `${origin}/keys` });
    assert.equal((await discoverJwksUrl(issuer)).jwksUrl, `${origin}/keys`);
    assert.deepEqual(requested, [
      '/tenant/.well-known/openid-configuration',
      '/.well-known/openid-configuration/tenant',
      '/.well-known/oauth-authorization-server/tenant',
    ]);
  });

  it('names the issuer the provider reports when the configured one has a trailing slash it lacks', async () => {
    const reported = `${origin}/realms/dagu`;
    documents.set('/realms/dagu/.well-known/openid-configuration', {
      issuer: reported,
      jwks_uri: `${reported}/certs`,
    });
    await assert.rejects(
      discoverJwksUrl(`${reported}/`),
      refused(
        new RegExp(
          `AUTH_JWT_ISSUER is "${reported}/" but the provider reports its issuer as "${reported}".*` +
            `set AUTH_JWT_ISSUER=${reported}$`,
        ),
      ),
    );
  });

  it('names the issuer the provider reports when the configured one lacks its trailing slash', async () => {
    documents.set('/.well-known/openid-configuration', { issuer: `${origin}/`, jwks_uri: `${origin}/keys` });
    await assert.rejects(
      discoverJwksUrl(origin),
      refused(new RegExp(`reports its issuer as "${origin}/".*set AUTH_JWT_ISSUER=${origin}/$`)),
    );
  });

  it('does not use a document that names another issuer or has no http(s) jwks_uri, and says so', async () => {
    const issuer = `${origin}/a`;
    documents.set('/a/.well-known/openid-configuration', { issuer: `${origin}/b`, jwks_uri: `${origin}/k` });
    documents.set('/.well-known/openid-configuration/a', { issuer, jwks_uri: 'file:///etc/keys' });
    documents.set('/.well-known/oauth-authorization-server/a', '<html>');
    await assert.rejects(
      discoverJwksUrl(issuer),
      refused(
        new RegExp(
          `^AUTH_JWT_ISSUER=${issuer}: cannot read the JWKS URL from the issuer's discovery document \\(` +
            `${issuer}/\\.well-known/openid-configuration: names another issuer, "${origin}/b"; ` +
            `${origin}/\\.well-known/openid-configuration/a: no http\\(s\\) "jwks_uri"; ` +
            `${origin}/\\.well-known/oauth-authorization-server/a: not JSON\\); check the issuer, or set AUTH_JWKS_URL$`,
        ),
      ),
    );
  });

  it('says which URLs answered 404 or could not be reached', async () => {
    await assert.rejects(
      discoverJwksUrl(origin),
      refused(/openid-configuration: HTTP 404; .*server: HTTP 404\)/),
    );
    const closed = `http://127.0.0.1:${await freePort()}`;
    await assert.rejects(discoverJwksUrl(closed), refused(/openid-configuration: ECONNREFUSED/));
  });
});
