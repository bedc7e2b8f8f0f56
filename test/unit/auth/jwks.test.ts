/**
 * The JWKS client (src/auth/jwks.ts) against a key set served from a local HTTP server: which keys it
 * accepts, kid lookup and rotation, the cooldown, keeping keys when a fetch fails, and fetch coalescing.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { algorithmForKey, createJwksCache, JwksKeyError } from '../../../src/auth/jwks.ts';
import type { Log } from '../../../src/core/log.ts';
import { ecKeys, rsaKeys } from '../../support/auth-fixtures.ts';

type Jwk = Record<string, unknown>;
const jwkOf = (key: KeyObject, extra: Jwk = {}): Jwk => ({ ...key.export({ format: 'jwk' }), ...extra });

const rsa = rsaKeys();
const ec = ecKeys();
const rsaNext = rsaKeys();

/** What the server answers next: a key set, or a status with a body. */
let answer: { status: number; body: string } = { status: 200, body: '{"keys":[]}' };
let fetches = 0;
const serveKeys = (keys: unknown[]): void => {
  answer = { status: 200, body: JSON.stringify({ keys }) };
};

let server: Server;
let url: string;

before(async () => {
  server = createServer((request, response) => {
    fetches += 1;
    assert.equal(request.url, '/jwks.json');
    response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  fetches = 0;
  serveKeys([jwkOf(rsa.publicKey, { kid: 'rsa-1' }), jwkOf(ec.publicKey, { kid: 'ec-1' })]);
});

function recordingLog(): Log & {
  lines: { level: string; fields: Record<string, unknown>; message: string }[];
} {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, message: string): void => {
      lines.push({ level, fields, message });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

async function rejects(
  promise: Promise<unknown>,
  reason: 'wrong_algorithm' | 'invalid_token',
): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof JwksKeyError, String(error));
    assert.equal(error.reason, reason);
    return true;
  });
}

describe('algorithmForKey', () => {
  it('gives RS256 to RSA of 2048 bits or more and ES256 to EC P-256, and refuses the rest', () => {
    assert.equal(algorithmForKey(rsa.publicKey), 'RS256');
    assert.equal(algorithmForKey(ec.publicKey), 'ES256');
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    assert.deepEqual(algorithmForKey(small), { unusable: 'RSA key of 1024 bits (at least 2048 needed)' });
    const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey;
    assert.match((algorithmForKey(p384) as { unusable: string }).unusable, /^ec key on secp384r1 /);
    const ed = generateKeyPairSync('ed25519').publicKey;
    assert.match((algorithmForKey(ed) as { unusable: string }).unusable, /^ed25519 key \(use RSA/);
  });
});

describe('createJwksCache', () => {
  it('fetches once on first use and finds each key by kid, as SPKI PEM with its algorithm', async () => {
    const cache = createJwksCache(url);
    assert.equal(cache.size, 0);
    const key = await cache.keyFor({ kid: 'rsa-1', alg: 'RS256' });
    assert.deepEqual(key, { kid: 'rsa-1', alg: 'RS256', pem: rsa.publicPem });
    assert.deepEqual(await cache.keyFor({ kid: 'ec-1', alg: 'ES256' }), {
      kid: 'ec-1',
      alg: 'ES256',
      pem: ec.publicPem,
    });
    assert.equal(cache.size, 2);
    assert.equal(fetches, 1);
  });

  it("refuses a non-asymmetric algorithm before fetching, and a token whose alg is not its key's", async () => {
    const cache = createJwksCache(url);
    await rejects(cache.keyFor({ kid: 'rsa-1', alg: 'HS256' }), 'wrong_algorithm');
    await rejects(cache.keyFor({ kid: 'rsa-1' }), 'wrong_algorithm');
    assert.equal(fetches, 0);
    await rejects(cache.keyFor({ kid: 'rsa-1', alg: 'ES256' }), 'wrong_algorithm');
    assert.equal(fetches, 1);
  });

  it('without a kid uses the only key, and refuses when the set holds several', async () => {
    serveKeys([jwkOf(rsa.publicKey)]);
    const single = createJwksCache(url);
    assert.equal((await single.keyFor({ alg: 'RS256' })).pem, rsa.publicPem);
    serveKeys([jwkOf(rsa.publicKey, { kid: 'a' }), jwkOf(rsaNext.publicKey, { kid: 'b' })]);
    const several = createJwksCache(url);
    await rejects(several.keyFor({ alg: 'RS256' }), 'invalid_token');
  });

  it('skips keys it must not use and says why at debug; private members are dropped', async () => {
    const log = recordingLog();
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    serveKeys([
      jwkOf(rsa.publicKey, { kid: 'enc', use: 'enc' }),
      { kty: 'oct', kid: 'oct', k: 'c2VjcmV0' },
      jwkOf(weak, { kid: 'weak' }),
      jwkOf(rsa.publicKey, { kid: 'mislabelled', alg: 'ES256' }),
      { kty: 'RSA', kid: 'broken', n: 'AQAB' },
      'not an object',
      // A key set that leaks a private key: only its public half is kept.
      jwkOf(rsa.privateKey, { kid: 'leaked', use: 'sig', alg: 'RS256' }),
    ]);
    const cache = createJwksCache(url, { log });
    await cache.refresh();
    assert.equal(cache.size, 1);
    assert.deepEqual(await cache.keyFor({ kid: 'leaked', alg: 'RS256' }), {
      kid: 'leaked',
      alg: 'RS256',
      pem: rsa.publicPem,
    });
    const skipped = log.lines.filter((line) => line.message.startsWith('JWKS key skipped'));
    assert.deepEqual(
      skipped.map((line) => line.fields.kid),
      ['enc', 'oct', 'weak', 'mislabelled', 'broken'],
    );
    assert.ok(skipped.every((line) => line.level === 'debug'));
    assert.match(skipped[0]?.message ?? '', /use "enc"/);
    assert.match(skipped[1]?.message ?? '', /kty "oct"/);
    assert.match(skipped[2]?.message ?? '', /1024 bits/);
    assert.match(skipped[3]?.message ?? '', /alg "ES256" is not accepted/);
    assert.match(skipped[4]?.message ?? '', /unreadable key/);
  });

  it('fetches again for an unknown kid (key rotation), at most once per cooldown', async () => {
    const rotating = createJwksCache(url, { cooldownMs: 0 });
    await rotating.refresh();
    serveKeys([jwkOf(rsaNext.publicKey, { kid: 'rsa-2' })]);
    assert.equal((await rotating.keyFor({ kid: 'rsa-2', alg: 'RS256' })).pem, rsaNext.publicPem);
    assert.equal(rotating.size, 1, 'the rotated set replaces the old one');
    assert.equal(fetches, 2);

    fetches = 0;
    serveKeys([jwkOf(rsa.publicKey, { kid: 'rsa-1' })]);
    const cooling = createJwksCache(url, { cooldownMs: 60_000 });
    await rejects(cooling.keyFor({ kid: 'unknown', alg: 'RS256' }), 'invalid_token');
    await rejects(cooling.keyFor({ kid: 'unknown', alg: 'RS256' }), 'invalid_token');
    assert.equal(fetches, 1, 'an unknown kid within the cooldown does not fetch again');
  });

  it('keeps the keys it has when a fetch fails, and warns', async () => {
    const log = recordingLog();
    const cache = createJwksCache(url, { log, maxBytes: 4096 });
    await cache.refresh();
    assert.equal(cache.size, 2);
    const failures: [string, RegExp][] = [
      ['http', /HTTP 500/],
      ['json', /JSON/],
      ['shape', /no "keys" array/],
      ['size', /larger than 4096 bytes/],
    ];
    for (const [kind, expected] of failures) {
      if (kind === 'http') answer = { status: 500, body: '{}' };
      if (kind === 'json') answer = { status: 200, body: '{"keys":' };
      if (kind === 'shape') answer = { status: 200, body: '{"key":[]}' };
      if (kind === 'size') serveKeys([{ kty: 'oct', k: 'x'.repeat(5000) }]);
      await cache.refresh();
      assert.equal(cache.size, 2, kind);
      const warning = log.lines.at(-1);
      assert.equal(warning?.level, 'warn', kind);
      assert.match(String(warning?.fields.error), expected, kind);
      assert.equal(warning?.fields.keptKeys, 2, kind);
    }
    assert.equal((await cache.keyFor({ kid: 'ec-1', alg: 'ES256' })).pem, ec.publicPem);
  });

  it('warns when a set holds no usable key', async () => {
    const log = recordingLog();
    serveKeys([{ kty: 'oct', k: 'c2VjcmV0' }]);
    const cache = createJwksCache(url, { log });
    await rejects(cache.keyFor({ kid: 'any', alg: 'RS256' }), 'invalid_token');
    assert.ok(log.lines.some((line) => line.level === 'warn' && /no RS256 or ES256/.test(line.message)));
  });

  it('shares one fetch between concurrent refreshes, and refreshes stale keys in the background', async () => {
    const cache = createJwksCache(url, { ttlMs: 0, cooldownMs: 0 });
    const first = cache.refresh();
    assert.equal(cache.refresh(), first);
    await first;
    assert.equal(fetches, 1);
    serveKeys([jwkOf(rsaNext.publicKey, { kid: 'rsa-1' })]);
    // Stale: the old key is served at once while a fetch replaces it.
    assert.equal((await cache.keyFor({ kid: 'rsa-1', alg: 'RS256' })).pem, rsa.publicPem);
    await cache.refresh();
    assert.equal((await cache.keyFor({ kid: 'rsa-1', alg: 'RS256' })).pem, rsaNext.publicPem);
  });
});
