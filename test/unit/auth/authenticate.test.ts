/** The authenticator: which credential kind a bearer is, and key files reloaded without a restart. */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createAuthenticator } from '../../../src/auth/authenticate.ts';
import { KEYS_YAML, noAuth, SECRET, VIEWER_KEY } from '../../support/auth-harness.ts';
import { nowSeconds, sha256Hex, signJwt, tempDir, writeTemp } from '../../support/auth-helpers.ts';

/** An authenticator of the test key file and an HS256 secret, the file not watched. */
function keysAndSecret() {
  const keysFile = writeTemp(tempDir(), 'keys.yaml', KEYS_YAML);
  return createAuthenticator(
    { host: '127.0.0.1', auth: { ...noAuth, apiKeysFile: keysFile, jwtSecret: SECRET } },
    undefined,
    { keys: { watch: false, signals: false } },
  );
}

describe('authenticator', () => {
  it('picks up a changed key file on reloadKeys() (what SIGHUP does) without a restart', async () => {
    const keysFile = writeTemp(tempDir(), 'keys.yaml', KEYS_YAML);
    const authenticator = await createAuthenticator(
      { host: '127.0.0.1', auth: { ...noAuth, apiKeysFile: keysFile } },
      undefined,
      {
        keys: { watch: false, signals: false },
      },
    );
    try {
      const newKey = 'dmg_new_0123456789abcdefghijklmnopqrstuvwxyz01';
      assert.equal((await authenticator.authenticate(`Bearer ${newKey}`)).ok, false);
      writeTemp(
        join(keysFile, '..'),
        'keys.yaml',
        `${KEYS_YAML}  - name: new\n    sha256: ${sha256Hex(newKey)}\n    surfaces: [mcp]\n    role: viewer\n`,
      );
      assert.equal(authenticator.reloadKeys(), true);
      const outcome = await authenticator.authenticate(`Bearer ${newKey}`);
      assert.equal(outcome.ok && outcome.identity.id, 'new');
      assert.equal((await authenticator.authenticate(`Bearer ${VIEWER_KEY}`)).ok, true);
    } finally {
      await authenticator.close();
    }
  });

  it('with both keys and JWT configured, routes JWT-shaped tokens to JWT and others to the key file', async () => {
    const authenticator = await keysAndSecret();
    try {
      const token = signJwt({ sub: 'u', exp: nowSeconds() + 60 }, { alg: 'HS256', key: SECRET });
      const viaJwt = await authenticator.authenticate(`Bearer ${token}`);
      assert.equal(viaJwt.ok && viaJwt.identity.kind, 'jwt');
      const viaKey = await authenticator.authenticate(`Bearer ${VIEWER_KEY}`);
      assert.equal(viaKey.ok && viaKey.identity.kind, 'api_key');
      const forged = await authenticator.authenticate(`Bearer ${token.slice(0, -4)}AAAA`);
      assert.equal(!forged.ok && forged.reason, 'invalid_token');
    } finally {
      await authenticator.close();
    }
  });

  it('answers an API key, a missing credential and anonymous access synchronously; only a JWT with a promise', async () => {
    const authenticator = await keysAndSecret();
    const anonymous = await createAuthenticator({ host: '127.0.0.1', auth: noAuth });
    try {
      // The MCP route's hook continues in the same turn when no promise comes back (authentication.ts).
      const key = authenticator.authenticate(`Bearer ${VIEWER_KEY}`);
      assert.ok(!(key instanceof Promise) && key.ok && key.identity.kind === 'api_key');
      const unknown = authenticator.authenticate('Bearer dmg_unknown_0123456789abcdefghijklmnop');
      assert.ok(!(unknown instanceof Promise) && !unknown.ok && unknown.reason === 'unknown_key');
      const missing = authenticator.authenticate(undefined);
      assert.ok(!(missing instanceof Promise) && !missing.ok && missing.reason === 'missing_credentials');
      const open = anonymous.authenticate(undefined);
      assert.ok(!(open instanceof Promise) && open.ok && open.identity.kind === 'anonymous');
      const token = signJwt({ sub: 'u', exp: nowSeconds() + 60 }, { alg: 'HS256', key: SECRET });
      const viaJwt = authenticator.authenticate(`Bearer ${token}`);
      assert.ok(viaJwt instanceof Promise);
      const verified = await viaJwt;
      assert.equal(verified.ok && verified.identity.kind, 'jwt');
    } finally {
      await authenticator.close();
      await anonymous.close();
    }
  });

  it("with AUTH_JWT_ISSUER alone, reads the JWKS URL from the issuer's discovery document and names the issuer as its authorization server", async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const server = createServer((request, response) => {
      const body =
        request.url === '/realms/dagu/.well-known/openid-configuration'
          ? { issuer, jwks_uri: `${issuer}/certs` }
          : request.url === '/realms/dagu/certs'
            ? { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig' }] }
            : undefined;
      if (body === undefined) return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/realms/dagu`;
    const publicUrl = 'http://127.0.0.1:8090';
    try {
      const authenticator = await createAuthenticator({
        host: '127.0.0.1',
        publicUrl,
        auth: { ...noAuth, jwtIssuer: issuer },
      });
      try {
        assert.equal(authenticator.jwtMode, 'jwks');
        assert.deepEqual(authenticator.authorizationServers, [issuer]);
        const claims = { sub: 'u', iss: issuer, aud: `${publicUrl}/mcp`, exp: nowSeconds() + 60 };
        const token = signJwt(
          { ...claims, scope: 'dagu.read' },
          { alg: 'RS256', key: privateKey, kid: 'k1' },
        );
        const outcome = await authenticator.authenticate(`Bearer ${token}`);
        assert.equal(outcome.ok && outcome.identity.id, 'u');
        // An authorization server's tokens need the read scope (AUTH_REQUIRE_SCOPES=auto).
        const unscoped = signJwt(claims, { alg: 'RS256', key: privateKey, kid: 'k1' });
        const refused = await authenticator.authenticate(`Bearer ${unscoped}`);
        assert.equal(!refused.ok && refused.reason, 'insufficient_scope');
      } finally {
        await authenticator.close();
      }
      await assert.rejects(
        createAuthenticator({ host: '127.0.0.1', publicUrl, auth: { ...noAuth, jwtIssuer: `${issuer}/` } }),
        new RegExp(`reports its issuer as "${issuer}"`),
      );
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
