// Every credential path end to end over real HTTP: raw `fetch` for the exact status, challenge and body,
// and both MCP clients (v2 on 2026-07-28, v1 legacy) for what a client sees. Three gateways: API keys
// plus an HS256 secret with issuer and audience, an RS256 public key, and a JWKS URL.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import {
  bearer,
  type CapturedGateway,
  claims,
  ecKeys,
  hs256,
  httpFailure,
  metricSum,
  newApiKey,
  newSecret,
  postMcp,
  rawHttp,
  rsaKeys,
  scrape,
  signJwt,
  startCapturedGateway,
  tempDir,
  toolCallBody,
  writeKeysFile,
} from '../../support/auth-fixtures.ts';
import { CONNECTORS } from '../../support/gateway.ts';
import { gatewayOnTestDagu } from '../../support/gateway-on-dagu.ts';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'dagu-mcp-gateway';
const SECRET = newSecret();
const VIEWER_KEY = newApiKey('viewer');
const REST_KEY = newApiKey('rest');
const UNKNOWN_KEY = newApiKey('unknown');
const rsa = rsaKeys();
const otherRsa = rsaKeys();
const ec = ecKeys();

const on = gatewayOnTestDagu(() => ({
  AUTH_API_KEYS_FILE: writeKeysFile([
    { name: 'ci-viewer', key: VIEWER_KEY },
    { name: 'rest-only', key: REST_KEY, surfaces: ['rest_api'], role: 'admin' },
  ]),
  AUTH_JWT_SECRET: SECRET,
  AUTH_JWT_ISSUER: ISSUER,
  AUTH_JWT_AUDIENCE: AUDIENCE,
}));

const good = (sub: string, extra: Record<string, unknown> = {}) =>
  claims(sub, { iss: ISSUER, aud: AUDIENCE, ...extra });

interface FailureCase {
  label: string;
  /** The Authorization header; absent: none is sent. */
  authorization?: string;
  /** Appended to the MCP URL (credentials in the query string must be ignored). */
  query?: string;
  reason: string;
  /** The RFC 6750 `error` parameter of the challenge; absent when no credential was sent. */
  error?: 'invalid_request' | 'invalid_token';
}

const now = () => Math.floor(Date.now() / 1000);

const FAILURES: FailureCase[] = [
  { label: 'no Authorization header', reason: 'missing_credentials' },
  {
    label: '`Bearer` without a token',
    authorization: 'Bearer',
    reason: 'malformed_header',
    error: 'invalid_request',
  },
  {
    label: 'a Basic header',
    authorization: `Basic ${Buffer.from('admin:secret').toString('base64')}`,
    reason: 'malformed_header',
    error: 'invalid_request',
  },
  {
    label: 'an unknown API key',
    authorization: `Bearer ${UNKNOWN_KEY}`,
    reason: 'unknown_key',
    error: 'invalid_token',
  },
  {
    label: 'an expired JWT',
    authorization: `Bearer ${hs256(good('ada', { iat: now() - 900, exp: now() - 300 }), SECRET)}`,
    reason: 'expired',
    error: 'invalid_token',
  },
  {
    label: 'a JWT that is not valid yet',
    authorization: `Bearer ${hs256(good('ada', { nbf: now() + 600 }), SECRET)}`,
    reason: 'not_yet_valid',
    error: 'invalid_token',
  },
  {
    label: 'a JWT for another audience',
    authorization: `Bearer ${hs256(good('ada', { aud: 'another-service' }), SECRET)}`,
    reason: 'wrong_audience',
    error: 'invalid_token',
  },
  {
    label: 'a JWT without the configured audience',
    authorization: `Bearer ${hs256(claims('ada', { iss: ISSUER }), SECRET)}`,
    reason: 'wrong_audience',
    error: 'invalid_token',
  },
  {
    label: 'a JWT from another issuer',
    authorization: `Bearer ${hs256(good('ada', { iss: 'https://evil.test' }), SECRET)}`,
    reason: 'wrong_issuer',
    error: 'invalid_token',
  },
  {
    label: 'an `alg: none` JWT',
    authorization: `Bearer ${signJwt(good('ada', { role: 'admin' }), { alg: 'none' })}`,
    reason: 'wrong_algorithm',
    error: 'invalid_token',
  },
  {
    label: 'an RS256 JWT where HS256 is pinned',
    authorization: `Bearer ${signJwt(good('ada'), { alg: 'RS256', key: rsa.privateKey })}`,
    reason: 'wrong_algorithm',
    error: 'invalid_token',
  },
  {
    label: 'a JWT signed with another secret',
    authorization: `Bearer ${hs256(good('ada'), newSecret())}`,
    reason: 'invalid_token',
    error: 'invalid_token',
  },
  {
    label: 'a JWT with an unknown role',
    authorization: `Bearer ${hs256(good('ada', { role: 'superuser' }), SECRET)}`,
    reason: 'invalid_token',
    error: 'invalid_token',
  },
  {
    label: 'a valid API key in the query string only',
    query: `?access_token=${VIEWER_KEY}&api_key=${VIEWER_KEY}`,
    reason: 'missing_credentials',
  },
  {
    label: 'a valid JWT in the query string only',
    query: `?access_token=${hs256(good('ada'), SECRET)}`,
    reason: 'missing_credentials',
  },
];

const headersOf = (failure: FailureCase): Record<string, string> =>
  failure.authorization === undefined ? {} : { authorization: failure.authorization };

/** API keys and HS256 tokens come from no authorization server: the challenge sends no client into OAuth. */
function expectedChallenge(error?: string): string {
  return `Bearer realm="dagu-mcp-gateway"${error ? `, error="${error}"` : ''}`;
}

describe('401 over raw HTTP: status, challenge, body, audit record and metric', () => {
  for (const failure of FAILURES) {
    test(failure.label, async () => {
      const before = await scrape(on.gateway.baseUrl);
      const response = await postMcp(`${on.gateway.mcpUrl}${failure.query ?? ''}`, headersOf(failure));
      assert.equal(response.status, 401);
      assert.equal(response.headers.get('www-authenticate'), expectedChallenge(failure.error));
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      const body = response.json();
      assert.equal(body.code, 'unauthenticated');
      assert.equal(typeof body.message, 'string');
      assert.deepEqual(Object.keys(body).sort(), ['code', 'message']);

      const record = on.gateway.auditLines().at(-1)!;
      assert.equal(record.event, 'mcp.request_denied');
      assert.equal(record.outcome, 'unauthenticated');
      assert.equal(record.reason, failure.reason);
      assert.equal(record.http_status, 401);
      assert.equal(record.path, '/mcp');
      assert.equal(record.identity, undefined);

      const afterwards = await scrape(on.gateway.baseUrl);
      const counter = (samples: typeof before.samples) =>
        metricSum(samples, 'mcp_gateway_auth_failures_total', { reason: failure.reason });
      assert.equal(counter(afterwards.samples) - counter(before.samples), 1);
    });
  }

  test('the challenge names no metadata; the metadata is served and names no authorization server', async () => {
    const challenge = (await postMcp(on.gateway.mcpUrl)).headers.get('www-authenticate') ?? '';
    assert.doesNotMatch(challenge, /resource_metadata/);
    const metadataUrl = `${on.gateway.baseUrl}/.well-known/oauth-protected-resource/mcp`;
    for (const url of [metadataUrl, `${on.gateway.baseUrl}/.well-known/oauth-protected-resource`]) {
      const response = await fetch(url);
      assert.equal(response.status, 200, url);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      const metadata = (await response.json()) as Record<string, unknown>;
      assert.equal(metadata.resource, on.gateway.mcpUrl);
      assert.deepEqual(metadata.bearer_methods_supported, ['header']);
      assert.equal(typeof metadata.resource_name, 'string');
      // HS256 tokens and API keys come from no discoverable authorization server.
      assert.equal(metadata.authorization_servers, undefined);
    }
  });

  test('a key without the `mcp` surface gets 403 invalid_api_key_surface, without a challenge', async () => {
    const before = await scrape(on.gateway.baseUrl);
    const response = await postMcp(on.gateway.mcpUrl, bearer(REST_KEY));
    assert.equal(response.status, 403);
    assert.equal(response.headers.get('www-authenticate'), null);
    assert.equal(response.json().code, 'invalid_api_key_surface');
    const record = on.gateway.auditLines().at(-1)!;
    assert.deepEqual(
      [
        record.event,
        record.identity,
        record.identity_kind,
        record.outcome,
        record.reason,
        record.http_status,
      ],
      ['mcp.request_denied', 'rest-only', 'api_key', 'invalid_api_key_surface', 'surface_denied', 403],
    );
    const afterwards = await scrape(on.gateway.baseUrl);
    const counter = (samples: typeof before.samples) =>
      metricSum(samples, 'mcp_gateway_auth_failures_total', { reason: 'surface_denied' });
    assert.equal(counter(afterwards.samples) - counter(before.samples), 1);
  });
});

for (const era of ['modern', 'legacy'] as const) {
  describe(`what the ${era} MCP client sees`, () => {
    test('every refused credential fails the connection with HTTP 401 and {code: unauthenticated}', async () => {
      for (const failure of FAILURES) {
        await assert.rejects(
          CONNECTORS[era](`${on.gateway.mcpUrl}${failure.query ?? ''}`, headersOf(failure)),
          (error: unknown) => {
            const { status, body } = httpFailure(error);
            assert.equal(status, 401, `${failure.label}: ${String(error)}`);
            assert.equal(body.code, 'unauthenticated', failure.label);
            return true;
          },
          failure.label,
        );
      }
    });

    test('a key without the `mcp` surface fails with HTTP 403 invalid_api_key_surface', async () => {
      await assert.rejects(CONNECTORS[era](on.gateway.mcpUrl, bearer(REST_KEY)), (error: unknown) => {
        const { status, body } = httpFailure(error);
        assert.equal(status, 403, String(error));
        assert.equal(body.code, 'invalid_api_key_surface');
        return true;
      });
    });

    test('an API key and an HS256 JWT (issuer and audience checked) read Dagu', async () => {
      const jwt = hs256(good(`user-${era}`, { username: 'Ada', role: 'operator' }), SECRET);
      for (const [token, identity, kind] of [
        [VIEWER_KEY, 'ci-viewer', 'api_key'],
        [jwt, `user-${era}`, 'jwt'],
      ] as const) {
        const client = await CONNECTORS[era](on.gateway.mcpUrl, bearer(token));
        try {
          const result = await client.callTool({ target: 'dags', query: 'perPage=200' });
          assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
          const names = (result.structuredContent!.data as { items: Array<{ name: string }> }).items.map(
            (item) => item.name,
          );
          assert.ok(names.includes(on.dagu.seed.dags.twoSteps));
        } finally {
          await client.close();
        }
        const record = on.gateway.auditLines().at(-1)!;
        assert.deepEqual(
          [record.event, record.identity, record.identity_kind, record.target, record.outcome],
          ['mcp.tool_call', identity, kind, 'dags', 'ok'],
        );
        // 2026-07-28 requests carry clientInfo in every request; a legacy client's later calls carry
        // the session id its `initialize` was answered with, which names it. The User-Agent is its own field.
        assert.deepEqual(
          [record.client_name, record.client_version, typeof record.user_agent],
          ['gateway-tests', '1.0.0', 'string'],
        );
      }
    });
  });
}

describe('public-key mode (RS256)', () => {
  let pk: CapturedGateway;
  before(async () => {
    pk = await startCapturedGateway({
      DAGU_URL: on.dagu.url,
      DAGU_API_BASE: on.dagu.apiBase,
      AUTH_JWT_PUBLIC_KEY: rsa.publicPem,
      AUTH_JWT_ISSUER: 'https://idp.test',
    });
  });
  after(() => pk?.close());

  const rs256 = (extra: Record<string, unknown> = {}, key = rsa.privateKey) =>
    signJwt(claims('service-a', { iss: 'https://idp.test', scope: 'dagu.read', ...extra }), {
      alg: 'RS256',
      key,
    });

  test('an RS256 token from the key pair is accepted by both clients', async () => {
    for (const era of ['modern', 'legacy'] as const) {
      const client = await CONNECTORS[era](pk.mcpUrl, bearer(rs256()));
      try {
        const result = await client.callTool({ target: 'dag', name: on.dagu.seed.dags.twoSteps });
        assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
      } finally {
        await client.close();
      }
      assert.equal(pk.auditLines().at(-1)?.identity, 'service-a');
    }
  });

  test('algorithm confusion and foreign keys are refused with 401', async () => {
    const payload = claims('intruder', { iss: 'https://idp.test', role: 'admin' });
    const cases: Array<[string, string, string]> = [
      // The classic HS/RS confusion: HMAC keyed with the verifier's own public key PEM.
      [
        'HS256 keyed with the RSA public key PEM',
        signJwt(payload, { alg: 'HS256', key: rsa.publicPem }),
        'wrong_algorithm',
      ],
      ['alg: none', signJwt(payload, { alg: 'none' }), 'wrong_algorithm'],
      ['ES256', signJwt(payload, { alg: 'ES256', key: ec.privateKey }), 'wrong_algorithm'],
      ['RS256 from another key pair', rs256({}, otherRsa.privateKey), 'invalid_token'],
      ['RS256 from another issuer', rs256({ iss: 'https://evil.test' }), 'wrong_issuer'],
    ];
    for (const [label, token, reason] of cases) {
      const response = await postMcp(pk.mcpUrl, bearer(token));
      assert.equal(response.status, 401, label);
      assert.equal(response.json().code, 'unauthenticated', label);
      assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token"$/, label);
      assert.equal(pk.auditLines().at(-1)?.reason, reason, label);
      for (const era of ['modern', 'legacy'] as const) {
        await assert.rejects(CONNECTORS[era](pk.mcpUrl, bearer(token)), (error: unknown) => {
          assert.equal(httpFailure(error).status, 401, `${era}: ${label}`);
          return true;
        });
      }
    }
  });

  test('the metadata names the issuer as authorization server', async () => {
    const metadata = (await (
      await fetch(`${pk.baseUrl}/.well-known/oauth-protected-resource/mcp`)
    ).json()) as Record<string, unknown>;
    assert.deepEqual(metadata.authorization_servers, ['https://idp.test']);
    assert.equal(metadata.resource, pk.mcpUrl);
  });
});

describe('JWKS mode', () => {
  let jwksServer: Server;
  let jw: CapturedGateway;
  let fetches = 0;
  before(async () => {
    const jwk = (key: typeof rsa.publicKey, kid: string, alg: string) => ({
      ...key.export({ format: 'jwk' }),
      kid,
      alg,
      use: 'sig',
    });
    const document = JSON.stringify({
      keys: [jwk(rsa.publicKey, 'rsa-1', 'RS256'), jwk(ec.publicKey, 'ec-1', 'ES256')],
    });
    jwksServer = createServer((request, response) => {
      fetches += 1;
      if (request.url !== '/jwks.json') return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'application/json' }).end(document);
    });
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    const { port } = jwksServer.address() as AddressInfo;
    jw = await startCapturedGateway({
      DAGU_URL: on.dagu.url,
      DAGU_API_BASE: on.dagu.apiBase,
      AUTH_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`,
    });
  });
  after(async () => {
    await jw?.close();
    jwksServer?.closeAllConnections();
    await new Promise<void>((resolve) => (jwksServer ? jwksServer.close(() => resolve()) : resolve()));
  });

  test('RS256 and ES256 tokens whose kid is in the set are accepted by both clients', async () => {
    const tokens = [
      signJwt(claims('jwks-rsa', { scope: 'dagu.read' }), {
        alg: 'RS256',
        key: rsa.privateKey,
        kid: 'rsa-1',
      }),
      signJwt(claims('jwks-ec', { scope: 'dagu.read' }), { alg: 'ES256', key: ec.privateKey, kid: 'ec-1' }),
    ];
    for (const era of ['modern', 'legacy'] as const) {
      for (const token of tokens) {
        const client = await CONNECTORS[era](jw.mcpUrl, bearer(token));
        try {
          const result = await client.callTool({ target: 'references' });
          assert.notEqual(result.isError, true);
        } finally {
          await client.close();
        }
      }
    }
    assert.ok(fetches >= 1);
    assert.deepEqual(
      jw
        .auditLines()
        .filter((line) => line.event === 'mcp.tool_call')
        .map((line) => line.identity),
      ['jwks-rsa', 'jwks-ec', 'jwks-rsa', 'jwks-ec'],
    );
  });

  test('an unknown kid, a key used with the wrong algorithm, and HS256 are refused with 401', async () => {
    const cases: Array<[string, string]> = [
      ['unknown kid', signJwt(claims('x'), { alg: 'RS256', key: otherRsa.privateKey, kid: 'rsa-2' })],
      [
        'RSA key id on an ES256 token',
        signJwt(claims('x'), { alg: 'ES256', key: ec.privateKey, kid: 'rsa-1' }),
      ],
      [
        'HS256 keyed with the JWKS public key',
        signJwt(claims('x'), { alg: 'HS256', key: rsa.publicPem, kid: 'rsa-1' }),
      ],
    ];
    for (const [label, token] of cases) {
      const response = await postMcp(jw.mcpUrl, bearer(token));
      assert.equal(response.status, 401, label);
      assert.equal(response.json().code, 'unauthenticated', label);
    }
  });
});

test('no path variant of the MCP endpoint is served without a credential', async () => {
  for (const path of [
    '/mcp',
    '/%6dcp',
    '//mcp',
    '/mcp/',
    '/MCP',
    '/mcp;x',
    '/./mcp',
    '/x/../mcp',
    '/mcp%3F',
  ]) {
    const response = await rawHttp(`${on.gateway.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify(toolCallBody({ target: 'references' })),
    });
    assert.ok([401, 404].includes(response.status), `${path}: ${response.status}`);
  }
});

describe('anonymous mode (no credentials configured)', () => {
  test('on loopback every caller is served as "anonymous", with a loud warning', async () => {
    const open = await startCapturedGateway(
      { DAGU_URL: on.dagu.url, DAGU_API_BASE: on.dagu.apiBase },
      { logLevel: 'warn' },
    );
    try {
      assert.match(open.logText(), /NO AUTHENTICATION/);
      for (const era of ['modern', 'legacy'] as const) {
        const client = await CONNECTORS[era](open.mcpUrl);
        try {
          assert.notEqual((await client.callTool({ target: 'dags' })).isError, true);
        } finally {
          await client.close();
        }
        const record = open.auditLines().at(-1)!;
        assert.deepEqual([record.identity, record.identity_kind], ['anonymous', 'anonymous']);
      }
      // A credential is not needed, and one that is sent is not checked.
      assert.equal((await postMcp(open.mcpUrl, bearer(UNKNOWN_KEY))).status, 200);
    } finally {
      await open.close();
    }
  });

  test('on a non-loopback address the gateway refuses to start unless AUTH_ALLOW_ANONYMOUS=true', async () => {
    const env = {
      HOST: '0.0.0.0',
      PORT: '0',
      AUDIT_LOG: join(tempDir(), 'audit.log'),
      DAGU_URL: on.dagu.url,
    };
    await assert.rejects(buildApp(loadConfig(env), { logger: false }), /AUTH_ALLOW_ANONYMOUS=true/);
    const allowed = await buildApp(loadConfig({ ...env, AUTH_ALLOW_ANONYMOUS: 'true' }), { logger: false });
    await allowed.close();
  });
});
