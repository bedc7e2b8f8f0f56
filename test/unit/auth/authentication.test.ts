import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { type AuditLog, createAuditLog } from '../../../src/audit/audit-log.ts';
import { type AuthenticatorConfig, createAuthenticator } from '../../../src/auth/authenticate.ts';
import { authenticationPlugin, meteredCaller } from '../../../src/auth/authentication.ts';
import { accessPolicyFor } from '../../../src/auth/identity.ts';
import { callMeteringPlugin } from '../../../src/http/call-metering.ts';
import { hostOriginPlugin } from '../../../src/http/security.ts';
import { createMetrics, type GatewayMetrics } from '../../../src/metrics/metrics.ts';
import {
  nowSeconds,
  type RecordedLog,
  recordingLog,
  sha256Hex,
  signJwt,
  tempDir,
  writeTemp,
} from '../../support/auth-helpers.ts';

const SECRET = 'dagu-token-secret-0123456789abcdef0123456789';
const VIEWER_KEY = 'dmg_viewer_0123456789abcdefghijklmnopqrstuvwx';
const PLAIN_KEY = 'dmg_plain_0123456789abcdefghijklmnopqrstuvwxy';
const REST_KEY = 'dmg_rest_0123456789abcdefghijklmnopqrstuvwxyz';
const BODY_LIMIT = 1024;

const KEYS_YAML = `keys:
  - name: ci-viewer
    sha256: ${sha256Hex(VIEWER_KEY)}
    surfaces: [mcp]
    role: viewer
    dags: ["etl-*"]
  - name: dev-plain
    key: ${PLAIN_KEY}
    surfaces: [mcp, rest_api]
    role: developer
  - name: rest-only
    sha256: ${sha256Hex(REST_KEY)}
    surfaces: [rest_api]
    role: admin
`;

const noAuth: AuthenticatorConfig['auth'] = {
  apiKeysFile: undefined,
  jwtSecret: undefined,
  jwtPublicKey: undefined,
  jwksUrl: undefined,
  jwtIssuer: undefined,
  jwtAudience: undefined,
  allowAnonymous: false,
};

interface Harness {
  app: FastifyInstance;
  metrics: GatewayMetrics;
  audit: AuditLog;
  auditFile: string;
  log: RecordedLog;
  /** Resolves the pending handlers (for the concurrency test). */
  release(): void;
  /** Resolves once `count` handlers are held (for the concurrency test). */
  held(count: number): Promise<void>;
  auditLines(): Array<Record<string, unknown>>;
}

async function harness(
  auth: Partial<AuthenticatorConfig['auth']>,
  options: {
    host?: string;
    publicUrl?: string;
    limits?: { ratePerMinute: number; maxConcurrent: number };
    hold?: boolean;
  } = {},
): Promise<Harness> {
  const dir = tempDir();
  const log = recordingLog();
  const metrics = createMetrics({ defaultMetrics: false });
  const auditFile = join(dir, 'audit.log');
  const audit = createAuditLog(auditFile, { metrics, log, signals: false });
  const authenticator = await createAuthenticator(
    {
      host: options.host ?? '127.0.0.1',
      auth: { ...noAuth, ...auth },
      ...(options.publicUrl ? { publicUrl: options.publicUrl, mcpPath: '/mcp' } : {}),
    },
    log,
    { keys: { watch: false, signals: false } },
  );
  let waiting: Array<() => void> = [];
  let onHeld = () => {};
  const app = Fastify({ bodyLimit: BODY_LIMIT });
  await app.register(hostOriginPlugin, {
    allowedHosts: ['localhost', '127.0.0.1'],
    allowedOrigins: [],
    audit,
  });
  await app.register(authenticationPlugin, {
    authenticator,
    mcpPath: '/mcp',
    publicUrl: options.publicUrl,
    metrics,
    audit,
  });
  if (options.limits) {
    await app.register(callMeteringPlugin, {
      ...options.limits,
      caller: meteredCaller,
      log,
      metrics,
      audit,
    });
  }
  app.post(
    '/mcp',
    {
      onRequest: [app.authenticate],
      preHandler: [app.checkCallScopes, ...(options.limits ? [app.meterCalls] : [])],
    },
    async (request) => {
      if (options.hold)
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          onHeld();
        });
      const identity = request.identity!;
      const access = accessPolicyFor(identity);
      return {
        identity,
        etl: access.canReadDag('etl-nightly'),
        ops: access.canReadWorkspace('ops'),
        dev: access.canReadWorkspace('dev'),
        workbooks: access.readsWorkbooks,
      };
    },
  );
  // The authentication plugin closes the authenticator with the app.
  app.addHook('onClose', async () => audit.close());
  return {
    app,
    metrics,
    audit,
    auditFile,
    log,
    release() {
      for (const resolve of waiting) resolve();
      waiting = [];
    },
    held: (count) =>
      new Promise<void>((resolve) => {
        onHeld = () => {
          if (waiting.length >= count) resolve();
        };
        onHeld();
      }),
    auditLines: () =>
      readFileSync(auditFile, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const toolCall = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'dagu_read', arguments: {} },
};
const call = (app: FastifyInstance, authorization?: string, body: unknown = toolCall, url = '/mcp') =>
  app.inject({
    method: 'POST',
    url,
    headers: authorization === undefined ? {} : { authorization },
    payload: body as Record<string, unknown>,
  });

async function metricValue(metrics: GatewayMetrics, name: string, labels: Record<string, string> = {}) {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((family) => family.name === name);
  const values = (metric?.values ?? []) as Array<{ labels: Record<string, string | number>; value: number }>;
  return values.find((value) => Object.entries(labels).every(([key, label]) => value.labels[key] === label))
    ?.value;
}

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

describe('rate limits and concurrency', () => {
  it('limits tool calls per identity with 429 + Retry-After, never initialize or lists', async () => {
    const keysFile = writeTemp(tempDir(), 'keys.yaml', KEYS_YAML);
    const h = await harness({ apiKeysFile: keysFile }, { limits: { ratePerMinute: 2, maxConcurrent: 4 } });
    try {
      const viewer = `Bearer ${VIEWER_KEY}`;
      assert.equal((await call(h.app, viewer)).statusCode, 200);
      const read = { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'dagu://dags/x' } };
      assert.equal((await call(h.app, viewer, read)).statusCode, 200);
      const limited = await call(h.app, viewer);
      assert.equal(limited.statusCode, 429);
      assert.ok(Number(limited.headers['retry-after']) >= 1 && Number(limited.headers['retry-after']) <= 60);
      assert.deepEqual(limited.json(), {
        code: 'rate_limited',
        message: 'Rate limit exceeded: at most 2 tool calls per minute per caller.',
      });
      for (const method of ['initialize', 'tools/list', 'resources/templates/list', 'ping']) {
        assert.equal((await call(h.app, viewer, { jsonrpc: '2.0', id: 3, method })).statusCode, 200, method);
      }
      assert.equal(
        (await call(h.app, `Bearer ${PLAIN_KEY}`)).statusCode,
        200,
        'another identity has its own budget',
      );
      assert.equal(await metricValue(h.metrics, 'mcp_gateway_rate_limited_total', { reason: 'rate' }), 1);
      const denial = h.auditLines().at(-1)!;
      assert.deepEqual(
        [denial.identity, denial.method, denial.tool, denial.outcome, denial.reason, denial.http_status],
        ['ci-viewer', 'tools/call', 'dagu_read', 'rate_limited', 'rate', 429],
      );
    } finally {
      await h.app.close();
    }
  });

  it('caps concurrent calls per identity and releases the slot when the response ends', async () => {
    const keysFile = writeTemp(tempDir(), 'keys.yaml', KEYS_YAML);
    const h = await harness(
      { apiKeysFile: keysFile },
      { limits: { ratePerMinute: 100, maxConcurrent: 1 }, hold: true },
    );
    try {
      const viewer = `Bearer ${VIEWER_KEY}`;
      // Waits until `count` handlers are held; a call answered without reaching its handler fails.
      const reached = (count: number, pending: ReturnType<typeof call>) =>
        Promise.race([
          h.held(count),
          pending.then((answer) => assert.fail(`answered ${answer.statusCode} before its handler held it`)),
        ]);
      const first = call(h.app, viewer);
      await reached(1, first);
      assert.equal(await metricValue(h.metrics, 'mcp_gateway_inflight_calls'), 1);
      const second = await call(h.app, viewer);
      assert.equal(second.statusCode, 429);
      assert.equal(second.headers['retry-after'], '1');
      assert.equal(second.json().code, 'rate_limited');
      const other = call(h.app, `Bearer ${PLAIN_KEY}`);
      await reached(2, other);
      h.release();
      assert.equal((await first).statusCode, 200);
      assert.equal((await other).statusCode, 200, 'the cap is per identity');
      await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(await metricValue(h.metrics, 'mcp_gateway_inflight_calls'), 0);
      const third = call(h.app, viewer);
      await reached(1, third);
      h.release();
      assert.equal((await third).statusCode, 200);
      assert.equal(
        await metricValue(h.metrics, 'mcp_gateway_rate_limited_total', { reason: 'concurrency' }),
        1,
      );
    } finally {
      await h.app.close();
    }
  });
});

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
    const keysFile = writeTemp(tempDir(), 'keys.yaml', KEYS_YAML);
    const authenticator = await createAuthenticator(
      { host: '127.0.0.1', auth: { ...noAuth, apiKeysFile: keysFile, jwtSecret: SECRET } },
      undefined,
      { keys: { watch: false, signals: false } },
    );
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
