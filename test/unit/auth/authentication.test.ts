import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createAuthenticator } from '../../../src/auth/authenticate.ts';
import { meteredCaller, readsWorkbook } from '../../../src/auth/authentication.ts';
import { ANONYMOUS_IDENTITY, type Identity } from '../../../src/auth/identity.ts';
import {
  BODY_LIMIT,
  call,
  type Harness,
  harness,
  KEYS_YAML,
  metricValue,
  noAuth,
  PLAIN_KEY,
  REST_KEY,
  SECRET,
  toolCall,
  VIEWER_KEY,
} from '../../support/auth-harness.ts';
import { nowSeconds, recordingLog, signJwt, tempDir, writeTemp } from '../../support/auth-helpers.ts';

describe('auth plugin with API keys and an HS256 secret', () => {
  let h: Harness;
  before(async () => {
    const keysFile = writeTemp(tempDir(), 'keys.yaml', KEYS_YAML);
    h = await harness({ apiKeysFile: keysFile, jwtSecret: SECRET });
  });
  after(() => h.app.close());

  it('answers 401 with a Bearer challenge that sends no client into OAuth (no authorization server here)', async () => {
    const response = await call(h.app);
    assert.equal(response.statusCode, 401);
    assert.equal(response.headers['www-authenticate'], 'Bearer realm="dagu-mcp-gateway"');
    assert.match(String(response.headers['content-type']), /^application\/json/);
    assert.deepEqual(response.json(), {
      code: 'unauthenticated',
      message: 'Authentication is required: send `Authorization: Bearer <API key or JWT>`.',
    });
    assert.equal(
      await metricValue(h.metrics, 'mcp_gateway_auth_failures_total', { reason: 'missing_credentials' }),
      1,
    );
  });

  for (const header of [
    'Bearer',
    'Bearer a b',
    'Basic dXNlcjpwYXNzd29yZA==',
    `Token ${VIEWER_KEY}`,
    'Bearer "x"',
  ]) {
    it(`answers 401 malformed_header for \`${header}\``, async () => {
      const response = await call(h.app, header);
      assert.equal(response.statusCode, 401);
      assert.equal(response.json().code, 'unauthenticated');
      assert.match(String(response.headers['www-authenticate']), /, error="invalid_request"$/);
    });
  }

  it('answers 401 for an unknown key and ignores credentials in the query string', async () => {
    const unknown = await call(h.app, 'Bearer dmg_unknown_0123456789abcdefghijklmnop');
    assert.equal(unknown.statusCode, 401);
    assert.equal(unknown.json().message, 'The API key was not accepted.');
    assert.match(String(unknown.headers['www-authenticate']), /, error="invalid_token"$/);
    const query = await call(
      h.app,
      undefined,
      toolCall,
      `/mcp?access_token=${VIEWER_KEY}&token=${VIEWER_KEY}`,
    );
    assert.equal(query.statusCode, 401);
  });

  it('accepts a hashed key, a plaintext key (case-insensitive scheme), and carries the allowlists', async () => {
    const viewer = await call(h.app, `Bearer ${VIEWER_KEY}`);
    assert.equal(viewer.statusCode, 200);
    assert.deepEqual(viewer.json(), {
      identity: { kind: 'api_key', id: 'ci-viewer', name: 'ci-viewer', role: 'viewer', dags: ['etl-*'] },
      etl: true,
      ops: true,
      dev: true,
      workbooks: true,
    });
    const plain = await call(h.app, `bearer  ${PLAIN_KEY}`);
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.json().identity.role, 'developer');
  });

  it('answers 403 invalid_api_key_surface for a valid key without the mcp surface', async () => {
    const response = await call(h.app, `Bearer ${REST_KEY}`);
    assert.equal(response.statusCode, 403);
    assert.deepEqual(response.json(), {
      code: 'invalid_api_key_surface',
      message: 'The API key is not allowed on the MCP surface.',
    });
    assert.equal(response.headers['www-authenticate'], undefined);
    const denial = h.auditLines().at(-1)!;
    assert.equal(denial.identity, 'rest-only');
    assert.equal(denial.reason, 'surface_denied');
    assert.equal(denial.http_status, 403);
  });

  it("accepts Dagu's own login token and refuses expired, not-yet-valid and unsigned ones", async () => {
    const claims = {
      sub: 'u-1',
      uid: 'u-1',
      username: 'alice',
      role: 'manager',
      iat: nowSeconds(),
      exp: nowSeconds() + 60,
    };
    const ok = await call(h.app, `Bearer ${signJwt(claims, { alg: 'HS256', key: SECRET })}`);
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json().identity, { kind: 'jwt', id: 'u-1', name: 'alice', role: 'manager' });

    const cases = [
      [{ ...claims, exp: nowSeconds() - 600 }, 'HS256', 'expired', 'The bearer token has expired.'],
      [
        { ...claims, nbf: nowSeconds() + 600 },
        'HS256',
        'not_yet_valid',
        'The bearer token is not valid yet.',
      ],
      [claims, 'none', 'wrong_algorithm', 'The bearer token is not signed with an accepted algorithm.'],
    ] as const;
    for (const [payload, alg, reason, message] of cases) {
      const response = await call(h.app, `Bearer ${signJwt(payload, { alg, key: SECRET })}`);
      assert.equal(response.statusCode, 401, reason);
      assert.deepEqual(response.json(), { code: 'unauthenticated', message });
      assert.equal(await metricValue(h.metrics, 'mcp_gateway_auth_failures_total', { reason }), 1, reason);
    }
  });

  it('refuses an unauthenticated oversized body with 401 before reading it (not 413)', async () => {
    const big = {
      ...toolCall,
      params: { name: 'dagu_read', arguments: { pad: 'x'.repeat(BODY_LIMIT * 4) } },
    };
    assert.equal((await call(h.app, undefined, big)).statusCode, 401);
    assert.equal((await call(h.app, `Bearer ${VIEWER_KEY}`, big)).statusCode, 413);
  });

  it('audits every denial as one JSON line and never writes a credential anywhere', async () => {
    const lines = h.auditLines();
    assert.ok(lines.length >= 10);
    for (const line of lines) {
      assert.equal(line.event, 'mcp.request_denied');
      assert.equal(typeof line.request_id, 'string');
      assert.equal(line.path, '/mcp');
      assert.equal(typeof line.duration_ms, 'number');
    }
    assert.ok(lines.some((line) => line.outcome === 'unauthenticated' && line.reason === 'expired'));
    const everything = `${readFileSync(h.auditFile, 'utf8')}\n${h.log.text()}`;
    for (const secret of [VIEWER_KEY, PLAIN_KEY, REST_KEY, SECRET, 'access_token', 'dXNlcjpwYXNzd29yZA']) {
      assert.ok(!everything.includes(secret), `leaked ${secret.slice(0, 12)}…`);
    }
    assert.match(h.log.text(), /"dev-plain" is stored in plaintext/);
  });
});

describe('anonymous access', () => {
  it('serves anonymous callers on a loopback bind, with a loud warning', async () => {
    const h = await harness({});
    try {
      const response = await call(h.app, 'Bearer anything-is-ignored');
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json().identity, {
        kind: 'anonymous',
        id: 'anonymous',
        name: 'anonymous',
        role: 'viewer',
      });
      assert.match(h.log.text(), /^warn !!! NO AUTHENTICATION.*"anonymousBecause":"loopback"/m);
    } finally {
      await h.app.close();
    }
  });

  it('refuses to start without credentials on a non-loopback bind unless AUTH_ALLOW_ANONYMOUS', async () => {
    await assert.rejects(
      createAuthenticator({ host: '0.0.0.0', auth: noAuth }),
      /no authentication is configured and HOST=0\.0\.0\.0 is not a loopback address/,
    );
    const log = recordingLog();
    const open = await createAuthenticator(
      { host: '0.0.0.0', auth: { ...noAuth, allowAnonymous: true } },
      log,
    );
    assert.equal(open.anonymous, true);
    assert.match(log.text(), /NO AUTHENTICATION.*"anonymousBecause":"AUTH_ALLOW_ANONYMOUS"/);
  });

  it('ignores AUTH_ALLOW_ANONYMOUS when credentials are configured', async () => {
    const log = recordingLog();
    const authenticator = await createAuthenticator(
      { host: '0.0.0.0', auth: { ...noAuth, jwtSecret: SECRET, allowAnonymous: true } },
      log,
    );
    try {
      assert.equal((await authenticator.authenticate(undefined)).ok, false);
      assert.match(log.text(), /AUTH_ALLOW_ANONYMOUS is ignored/);
    } finally {
      await authenticator.close();
    }
  });
});

describe("an authorization server's tokens (public key): audience, scopes, step-up", () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ISSUER = 'https://idp.example/realms/ops';
  const RESOURCE = 'https://gateway.example/mcp';
  const token = (claims: Record<string, unknown>) =>
    `Bearer ${signJwt({ sub: 'agent-7', iss: ISSUER, aud: RESOURCE, exp: nowSeconds() + 300, ...claims }, { alg: 'RS256', key: rsa.privateKey })}`;
  let h: Harness;
  before(async () => {
    h = await harness(
      { jwtPublicKey: rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString(), jwtIssuer: ISSUER },
      { publicUrl: 'https://gateway.example' },
    );
  });
  after(() => h.app.close());

  it('401 names the metadata and the read scope', async () => {
    const response = await call(h.app);
    assert.equal(response.statusCode, 401);
    assert.equal(
      response.headers['www-authenticate'],
      'Bearer realm="dagu-mcp-gateway", resource_metadata="https://gateway.example/.well-known/oauth-protected-resource/mcp", scope="dagu.read"',
    );
    assert.deepEqual(h.app.authenticator.authorizationServers, [ISSUER]);
  });

  it('the audience defaults to <PUBLIC_URL>/mcp: a token for another resource is refused', async () => {
    const other = await call(h.app, token({ aud: 'https://other.example.com/mcp', scope: 'dagu.read' }));
    assert.equal(other.statusCode, 401);
    assert.match(String(other.headers['www-authenticate']), /error="invalid_token"/);
    assert.equal(h.auditLines().at(-1)?.reason, 'wrong_audience');
    assert.equal((await call(h.app, token({ scope: 'dagu.read' }))).statusCode, 200);
  });

  it('a token without the read scope gets 403 insufficient_scope naming it (step-up), audited', async () => {
    for (const claims of [{}, { scope: 'openid profile' }, { scp: ['dagu.workbook'] }]) {
      const response = await call(h.app, token(claims));
      assert.equal(response.statusCode, 403);
      assert.deepEqual(response.json(), {
        code: 'unauthorized',
        message: 'The bearer token lacks the scope dagu.read this endpoint requires.',
      });
      assert.equal(
        response.headers['www-authenticate'],
        'Bearer realm="dagu-mcp-gateway", resource_metadata="https://gateway.example/.well-known/oauth-protected-resource/mcp", scope="dagu.read", error="insufficient_scope"',
      );
      const line = h.auditLines().at(-1);
      assert.equal(line?.reason, 'insufficient_scope');
      assert.equal(line?.identity, 'agent-7');
    }
  });

  it('the workbook target needs the workbook scope as well (403 step-up naming both); other reads do not', async () => {
    const workbookCall = {
      ...toolCall,
      params: { name: 'dagu_read', arguments: { target: 'workbook', path: 'a.xlsx' } },
    };
    const refused = await call(h.app, token({ scope: 'dagu.read' }), workbookCall);
    assert.equal(refused.statusCode, 403);
    assert.match(
      String(refused.headers['www-authenticate']),
      /scope="dagu.read dagu.workbook", error="insufficient_scope"/,
    );
    const granted = await call(h.app, token({ scope: 'dagu.read dagu.workbook' }), workbookCall);
    assert.equal(granted.statusCode, 200);
    assert.equal(granted.json().workbooks, true);
    const plain = await call(h.app, token({ scope: 'dagu.read' }));
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.json().workbooks, false);
  });

  it('"workbook" padded with whitespace is the workbook target: the same 403 step-up, body and audit', async () => {
    const workbookCall = (target: string) => ({
      ...toolCall,
      params: { name: 'dagu_read', arguments: { target, path: 'a.xlsx' } },
    });
    const answer = async (target: string) => {
      const response = await call(h.app, token({ scope: 'dagu.read' }), workbookCall(target));
      const audit = h.auditLines().at(-1);
      return {
        status: response.statusCode,
        challenge: response.headers['www-authenticate'],
        body: response.body,
        audit: [audit?.reason, audit?.http_status],
      };
    };
    const plain = await answer('workbook');
    assert.equal(plain.status, 403);
    for (const target of ['workbook ', ' workbook', '\tworkbook\n', '\u00a0workbook\ufeff']) {
      assert.deepEqual(await answer(target), plain, JSON.stringify(target));
    }
    // Strings that name no target are the read's to refuse, for callers with the scope or without.
    for (const target of ['Workbook', 'workbooks', 'work book', 'workbook\u200b']) {
      const response = await call(h.app, token({ scope: 'dagu.read' }), workbookCall(target));
      assert.equal(response.statusCode, 200, JSON.stringify(target));
    }
  });

  it('readsWorkbook: a tools/call of dagu_read whose arguments name the workbook target, in a batch too', () => {
    const message = (target: unknown, name = 'dagu_read', method = 'tools/call') => ({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: { name, arguments: { target } },
    });
    assert.equal(readsWorkbook(message('workbook')), true);
    assert.equal(readsWorkbook(message(' workbook\t')), true);
    assert.equal(readsWorkbook([message('dags'), message('workbook ')]), true);
    for (const body of [
      message('Workbook'),
      message('workbooks'),
      message(['workbook']),
      message('workbook', 'other_tool'),
      message('workbook', 'dagu_read', 'resources/read'),
      [message('dags')],
      null,
      'workbook',
    ]) {
      assert.equal(readsWorkbook(body), false, JSON.stringify(body));
    }
  });

  it('workspace scopes narrow the workspaces read, and alone grant reading them', async () => {
    const narrowed = (await call(h.app, token({ scope: 'dagu.read dagu.read:workspace/ops' }))).json();
    assert.deepEqual([narrowed.ops, narrowed.dev, narrowed.etl], [true, false, true]);
    const only = await call(h.app, token({ scp: 'dagu.read:workspace/dev' }));
    assert.equal(only.statusCode, 200);
    assert.deepEqual([only.json().ops, only.json().dev], [false, true]);
  });

  it('without PUBLIC_URL or AUTH_JWT_AUDIENCE: refuses to start off loopback, warns on it', async () => {
    const auth = {
      ...noAuth,
      jwtPublicKey: rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    };
    await assert.rejects(
      createAuthenticator({ host: '0.0.0.0', auth }),
      /set PUBLIC_URL .* or AUTH_JWT_AUDIENCE/,
    );
    const log = recordingLog();
    const loopback = await createAuthenticator({ host: '127.0.0.1', auth }, log);
    await loopback.close();
    assert.match(log.text(), /no token audience/);
  });

  it("Dagu's HS256 login tokens need no scope (AUTH_REQUIRE_SCOPES=auto)", async () => {
    const dagu = await createAuthenticator({ host: '127.0.0.1', auth: { ...noAuth, jwtSecret: SECRET } });
    try {
      const outcome = await dagu.authenticate(
        `Bearer ${signJwt({ sub: 'u1', exp: nowSeconds() + 60 }, { alg: 'HS256', key: SECRET })}`,
      );
      assert.equal(outcome.ok, true);
      assert.equal(dagu.scopes, undefined);
    } finally {
      await dagu.close();
    }
  });
});

describe('meteredCaller', () => {
  const key: Identity = Object.freeze({ kind: 'api_key', id: 'ci', name: 'ci', role: 'viewer' });

  it('gives one identity the same frozen caller on every request, whatever its address', () => {
    const first = meteredCaller({ identity: key, ip: '127.0.0.1' });
    assert.deepEqual(first, { key: 'api_key:ci', identity: 'ci', identityKind: 'api_key' });
    assert.equal(meteredCaller({ identity: key, ip: '127.0.0.2' }), first);
    assert.ok(Object.isFrozen(first));
  });

  it('keys anonymous callers by address and meters nothing without an identity', () => {
    assert.equal(
      meteredCaller({ identity: ANONYMOUS_IDENTITY, ip: '127.0.0.1' })?.key,
      'anonymous:127.0.0.1',
    );
    assert.equal(meteredCaller({ identity: ANONYMOUS_IDENTITY, ip: '::1' })?.key, 'anonymous:::1');
    assert.equal(meteredCaller({ identity: null, ip: '127.0.0.1' }), undefined);
  });
});
