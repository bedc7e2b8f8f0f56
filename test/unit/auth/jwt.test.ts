import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  createJwtVerifier,
  identityFromClaims,
  type JwtVerifier,
  looksLikeJwt,
} from '../../../src/auth/jwt.ts';
import { nowSeconds, recordingLog, signJwt, tempDir, writeTemp } from '../../support/auth-helpers.ts';

const SECRET = 'dagu-token-secret-0123456789abcdef0123456789';
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaOther = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsaPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const ecPem = ec.publicKey.export({ type: 'spki', format: 'pem' }).toString();

/** The claims Dagu puts in its login tokens (dagu-rest-notes §5): no iss, no aud. */
const daguClaims = (overrides: Record<string, unknown> = {}) => ({
  sub: '5f0c7c1e-1111-4a5b-9c9d-000000000001',
  uid: '5f0c7c1e-1111-4a5b-9c9d-000000000001',
  username: 'alice',
  role: 'operator',
  iat: nowSeconds(),
  exp: nowSeconds() + 3600,
  ...overrides,
});

async function reasonOf(verifier: JwtVerifier, token: string): Promise<string> {
  const result = await verifier.verify(token);
  return result.ok ? 'ok' : result.reason;
}

describe('JWT with a shared HS256 secret (Dagu login tokens)', () => {
  let verifier: JwtVerifier;
  before(async () => {
    verifier = await createJwtVerifier({ secret: SECRET });
  });
  after(() => verifier.close());

  it('accepts a Dagu-style token and maps sub, username and role', async () => {
    const result = await verifier.verify(signJwt(daguClaims(), { alg: 'HS256', key: SECRET }));
    assert.deepEqual(result, {
      ok: true,
      identity: { kind: 'jwt', id: '5f0c7c1e-1111-4a5b-9c9d-000000000001', name: 'alice', role: 'operator' },
    });
  });

  it('refuses a token signed with another secret', async () => {
    const token = signJwt(daguClaims(), { alg: 'HS256', key: `${SECRET}x` });
    assert.equal(await reasonOf(verifier, token), 'invalid_token');
  });

  it('applies exp and nbf with a 30 s skew', async () => {
    const now = nowSeconds();
    const sign = (claims: Record<string, unknown>) =>
      signJwt(daguClaims(claims), { alg: 'HS256', key: SECRET });
    assert.equal(await reasonOf(verifier, sign({ exp: now - 120 })), 'expired');
    assert.equal(await reasonOf(verifier, sign({ exp: now - 10 })), 'ok', 'within the skew');
    assert.equal(await reasonOf(verifier, sign({ nbf: now + 120 })), 'not_yet_valid');
    assert.equal(await reasonOf(verifier, sign({ nbf: now + 10 })), 'ok', 'within the skew');
  });

  it('requires exp and sub, and a known role', async () => {
    const { exp: _exp, ...noExp } = daguClaims();
    assert.equal(await reasonOf(verifier, signJwt(noExp, { alg: 'HS256', key: SECRET })), 'invalid_token');
    const { sub: _sub, ...noSub } = daguClaims();
    assert.equal(await reasonOf(verifier, signJwt(noSub, { alg: 'HS256', key: SECRET })), 'invalid_token');
    const root = signJwt(daguClaims({ role: 'root' }), { alg: 'HS256', key: SECRET });
    assert.equal(await reasonOf(verifier, root), 'invalid_token');
  });

  it('refuses alg none and an RS256 token', async () => {
    assert.equal(await reasonOf(verifier, signJwt(daguClaims(), { alg: 'none' })), 'wrong_algorithm');
    const rs = signJwt(daguClaims(), { alg: 'RS256', key: rsa.privateKey });
    assert.equal(await reasonOf(verifier, rs), 'wrong_algorithm');
  });

  it('refuses garbage', async () => {
    assert.equal(await reasonOf(verifier, 'a.b.c'), 'invalid_token');
    assert.equal(await reasonOf(verifier, 'eyJhbGciOiJIUzI1NiJ9.e30.'), 'wrong_algorithm');
  });

  it('refuses a short secret at start-up', async () => {
    await assert.rejects(createJwtVerifier({ secret: 'short' }), /at least 32 characters/);
  });
});

describe('JWT with issuer and audience configured', () => {
  let verifier: JwtVerifier;
  before(async () => {
    verifier = await createJwtVerifier({
      secret: SECRET,
      issuer: 'https://idp.example',
      audience: 'https://gateway.example/mcp, dagu-mcp',
    });
  });
  after(() => verifier.close());
  const sign = (claims: Record<string, unknown>) =>
    signJwt(daguClaims(claims), { alg: 'HS256', key: SECRET });

  it('accepts a listed audience (string or array) from the configured issuer', async () => {
    assert.equal(await reasonOf(verifier, sign({ iss: 'https://idp.example', aud: 'dagu-mcp' })), 'ok');
    assert.equal(
      await reasonOf(verifier, sign({ iss: 'https://idp.example', aud: ['x', 'dagu-mcp'] })),
      'ok',
    );
  });

  it('refuses another audience or issuer, and tokens missing them', async () => {
    assert.equal(
      await reasonOf(verifier, sign({ iss: 'https://idp.example', aud: 'other' })),
      'wrong_audience',
    );
    assert.equal(await reasonOf(verifier, sign({ iss: 'https://idp.example' })), 'wrong_audience');
    assert.equal(
      await reasonOf(verifier, sign({ iss: 'https://evil.example', aud: 'dagu-mcp' })),
      'wrong_issuer',
    );
    assert.equal(await reasonOf(verifier, sign({ aud: 'dagu-mcp' })), 'wrong_issuer');
  });
  it('says once when a refused token names the configured issuer with a trailing slash more or less', async () => {
    const log = recordingLog();
    const verifier = await createJwtVerifier({
      secret: SECRET,
      issuer: 'https://idp.example/realms/dagu/',
      log,
    });
    try {
      const token = signJwt(daguClaims({ iss: 'https://idp.example/realms/dagu' }), {
        alg: 'HS256',
        key: SECRET,
      });
      assert.equal(await reasonOf(verifier, token), 'wrong_issuer');
      assert.equal(await reasonOf(verifier, token), 'wrong_issuer');
      const other = signJwt(daguClaims({ iss: 'https://other.example' }), { alg: 'HS256', key: SECRET });
      assert.equal(await reasonOf(verifier, other), 'wrong_issuer');
      const hints = log
        .text()
        .split('\n')
        .filter((line) => line.includes('only by a trailing slash'));
      assert.equal(hints.length, 1, log.text());
      assert.match(hints[0]!, /"tokenIssuer":"https:\/\/idp\.example\/realms\/dagu"/);
    } finally {
      await verifier.close();
    }
  });
});

describe('JWT with a public key', () => {
  it('pins RS256 for an RSA key and refuses the HS256-with-the-public-key confusion', async () => {
    const verifier = await createJwtVerifier({ publicKey: rsaPem.replace(/\n/g, '\\n') });
    try {
      assert.deepEqual(verifier.algorithms, ['RS256']);
      assert.equal(
        await reasonOf(verifier, signJwt(daguClaims(), { alg: 'RS256', key: rsa.privateKey })),
        'ok',
      );
      const confused = signJwt(daguClaims(), { alg: 'HS256', key: rsaPem });
      assert.equal(await reasonOf(verifier, confused), 'wrong_algorithm');
      const otherKey = signJwt(daguClaims(), { alg: 'RS256', key: rsaOther.privateKey });
      assert.equal(await reasonOf(verifier, otherKey), 'invalid_token');
      assert.equal(await reasonOf(verifier, signJwt(daguClaims(), { alg: 'none' })), 'wrong_algorithm');
    } finally {
      await verifier.close();
    }
  });

  it('pins ES256 for a P-256 key read from a file', async () => {
    const file = writeTemp(tempDir(), 'jwt.pem', ecPem);
    const verifier = await createJwtVerifier({ publicKey: file });
    try {
      assert.deepEqual(verifier.algorithms, ['ES256']);
      assert.equal(
        await reasonOf(verifier, signJwt(daguClaims(), { alg: 'ES256', key: ec.privateKey })),
        'ok',
      );
      const rs = signJwt(daguClaims(), { alg: 'RS256', key: rsa.privateKey });
      assert.equal(await reasonOf(verifier, rs), 'wrong_algorithm');
    } finally {
      await verifier.close();
    }
  });

  it('refuses unusable keys at start-up with a clear message', async () => {
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      type: 'spki',
      format: 'pem',
    });
    await assert.rejects(createJwtVerifier({ publicKey: weak.toString() }), /RSA key of 1024 bits/);
    await assert.rejects(
      createJwtVerifier({ publicKey: '/nonexistent.pem' }),
      /neither PEM text nor a readable file/,
    );
    const log = recordingLog();
    const fromPrivate = await createJwtVerifier({
      publicKey: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      log,
    });
    await fromPrivate.close();
    assert.match(log.text(), /holds a private key/);
  });
});

describe('JWT with a JWKS URL', () => {
  let server: Server;
  let url: string;
  let fetches = 0;
  let keys: Array<Record<string, unknown>> = [];
  const jwk = (key: typeof rsa.publicKey, kid: string) => ({
    ...key.export({ format: 'jwk' }),
    kid,
    use: 'sig',
  });

  before(async () => {
    server = createServer((request, response) => {
      fetches += 1;
      if (request.url !== '/jwks.json') {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('verifies RS256 and ES256 keys by kid, caches the set, and refetches for a new kid', async () => {
    keys = [
      jwk(rsa.publicKey, 'rsa-1'),
      jwk(ec.publicKey, 'ec-1'),
      { kty: 'oct', k: 'c2VjcmV0', kid: 'hmac' },
    ];
    fetches = 0;
    const verifier = await createJwtVerifier({ jwksUrl: url, jwks: { cooldownMs: 0 } });
    try {
      const rs = signJwt(daguClaims(), { alg: 'RS256', key: rsa.privateKey, kid: 'rsa-1' });
      const es = signJwt(daguClaims({ sub: 'bob' }), { alg: 'ES256', key: ec.privateKey, kid: 'ec-1' });
      assert.equal(await reasonOf(verifier, rs), 'ok');
      assert.equal(await reasonOf(verifier, es), 'ok');
      assert.equal(fetches, 1, 'one fetch serves every token');

      keys = [...keys, jwk(rsaOther.publicKey, 'rsa-2')];
      const rotated = signJwt(daguClaims(), { alg: 'RS256', key: rsaOther.privateKey, kid: 'rsa-2' });
      assert.equal(await reasonOf(verifier, rotated), 'ok');
      assert.equal(fetches, 2, 'an unknown kid triggers one refetch');

      const hmac = signJwt(daguClaims(), { alg: 'HS256', key: 'secret', kid: 'hmac' });
      assert.equal(await reasonOf(verifier, hmac), 'wrong_algorithm', 'symmetric JWKS keys are never used');
      const mismatch = signJwt(daguClaims(), { alg: 'ES256', key: ec.privateKey, kid: 'rsa-1' });
      assert.equal(await reasonOf(verifier, mismatch), 'wrong_algorithm');
      assert.equal(
        await reasonOf(verifier, signJwt(daguClaims(), { alg: 'none', kid: 'rsa-1' })),
        'wrong_algorithm',
      );
    } finally {
      await verifier.close();
    }
  });

  it('fetches at most once per cooldown for unknown kids', async () => {
    keys = [jwk(rsa.publicKey, 'rsa-1')];
    fetches = 0;
    const verifier = await createJwtVerifier({ jwksUrl: url, jwks: { cooldownMs: 60_000 } });
    try {
      assert.equal(
        await reasonOf(verifier, signJwt(daguClaims(), { alg: 'RS256', key: rsa.privateKey, kid: 'rsa-1' })),
        'ok',
      );
      for (let index = 0; index < 5; index += 1) {
        const token = signJwt(daguClaims(), { alg: 'RS256', key: rsa.privateKey, kid: `random-${index}` });
        assert.equal(await reasonOf(verifier, token), 'invalid_token');
      }
      assert.equal(fetches, 1);
    } finally {
      await verifier.close();
    }
  });

  // Issue 28 item 6: a verification cached for up to a minute outlived the key that made it.
  it('refuses a token whose key a refresh dropped from the set, though its verification was cached', async () => {
    keys = [jwk(rsa.publicKey, 'rsa-1'), jwk(rsaOther.publicKey, 'rsa-2')];
    const log = recordingLog();
    const verifier = await createJwtVerifier({ jwksUrl: url, jwks: { cooldownMs: 0 }, log });
    try {
      const leaving = signJwt(daguClaims(), { alg: 'RS256', key: rsa.privateKey, kid: 'rsa-1' });
      const staying = signJwt(daguClaims(), { alg: 'RS256', key: rsaOther.privateKey, kid: 'rsa-2' });
      assert.equal(await reasonOf(verifier, leaving), 'ok');
      assert.equal(await reasonOf(verifier, staying), 'ok');
      keys = [jwk(rsaOther.publicKey, 'rsa-2')];
      // An unknown kid makes the verifier wait for a fetch of the set: the refresh that drops rsa-1.
      const unknown = signJwt(daguClaims(), { alg: 'RS256', key: rsa.privateKey, kid: 'rsa-3' });
      assert.equal(await reasonOf(verifier, unknown), 'invalid_token');
      assert.equal(await reasonOf(verifier, leaving), 'invalid_token');
      assert.equal(await reasonOf(verifier, staying), 'ok', 'a key still published keeps its tokens');
      assert.match(log.text(), /no longer publishes some keys.*"rsa-1"/);
    } finally {
      await verifier.close();
    }
  });

  it('refuses a kid-less token once the single key that signed it is replaced', async () => {
    keys = [jwk(rsa.publicKey, 'rsa-1')];
    const verifier = await createJwtVerifier({ jwksUrl: url, jwks: { cooldownMs: 0 } });
    try {
      const kidless = signJwt(daguClaims(), { alg: 'RS256', key: rsa.privateKey });
      assert.equal(await reasonOf(verifier, kidless), 'ok');
      keys = [jwk(rsaOther.publicKey, 'rsa-2')];
      const unknown = signJwt(daguClaims(), { alg: 'RS256', key: rsa.privateKey, kid: 'rsa-3' });
      assert.equal(await reasonOf(verifier, unknown), 'invalid_token');
      assert.equal(await reasonOf(verifier, kidless), 'invalid_token');
    } finally {
      await verifier.close();
    }
  });

  it('refreshes a stale set when a cached token is used, and refuses the token after the refresh that drops its key', {
    timeout: 10_000,
  }, async () => {
    keys = [jwk(rsa.publicKey, 'rsa-1')];
    const refreshes: Array<ReadonlyArray<string | undefined>> = [];
    let refreshed: () => void = () => {};
    const verifier = await createJwtVerifier({
      jwksUrl: url,
      // Every use finds the set stale (ttlMs 0), as a use does once the refresh interval has passed.
      jwks: {
        ttlMs: 0,
        cooldownMs: 0,
        onRefresh: (kids) => {
          refreshes.push(kids);
          refreshed();
        },
      },
    });
    const nextRefresh = () => new Promise<void>((resolve) => (refreshed = resolve));
    try {
      const token = signJwt(daguClaims(), { alg: 'RS256', key: rsa.privateKey, kid: 'rsa-1' });
      assert.equal(await reasonOf(verifier, token), 'ok');
      keys = [jwk(rsaOther.publicKey, 'rsa-2')];
      const dropped = nextRefresh();
      // Served from the cache while the background refresh it started is on its way.
      assert.equal(await reasonOf(verifier, token), 'ok');
      await dropped;
      assert.deepEqual(refreshes.at(-1), ['rsa-2']);
      assert.equal(await reasonOf(verifier, token), 'invalid_token');
    } finally {
      await verifier.close();
    }
  });

  it('refuses tokens while the JWKS cannot be fetched, and logs why', async () => {
    const log = recordingLog();
    const verifier = await createJwtVerifier({ jwksUrl: url.replace('jwks.json', 'missing'), log });
    try {
      const token = signJwt(daguClaims(), { alg: 'RS256', key: rsa.privateKey, kid: 'rsa-1' });
      assert.equal(await reasonOf(verifier, token), 'invalid_token');
      assert.match(log.text(), /JWKS fetch failed; keeping the keys fetched before.*HTTP 404/);
    } finally {
      await verifier.close();
    }
  });
});

describe('claims to identity', () => {
  it('takes dags and workspaces allowlists from claims and refuses malformed ones', () => {
    assert.deepEqual(identityFromClaims({ sub: 'svc', dags: ['etl-*'], workspaces: ['ops'] }), {
      kind: 'jwt',
      id: 'svc',
      name: 'svc',
      role: 'viewer',
      dags: ['etl-*'],
      workspaces: ['ops'],
    });
    assert.equal(identityFromClaims({ sub: 'svc', dags: 'etl-*' }), undefined);
    assert.equal(identityFromClaims({ sub: 'svc', workspaces: [1] }), undefined);
    assert.equal(identityFromClaims({ sub: '' }), undefined);
  });

  it('cuts a long user name to 128 code points, an emoji at the cut kept whole', () => {
    const name = `${'u'.repeat(127)}😀`;
    assert.equal(identityFromClaims({ sub: 'svc', username: `${name}tail` })?.name, name);
  });

  it('tells JWTs from API keys by shape', () => {
    assert.equal(looksLikeJwt(signJwt(daguClaims(), { alg: 'HS256', key: SECRET })), true);
    assert.equal(looksLikeJwt(signJwt(daguClaims(), { alg: 'none' })), true);
    assert.equal(looksLikeJwt('dmg_abcdefghijklmnopqrstuvwxyz'), false);
  });
});
