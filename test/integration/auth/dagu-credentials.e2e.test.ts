// Credentials between the gateway and Dagu, against two more real Dagu instances of the tested generation:
// - builtin auth (DAGU_AUTH_MODE=builtin, DAGU_AUTH_TOKEN_SECRET): a token from Dagu's own
//   `POST …/auth/login` is accepted by a gateway that shares the secret (AUTH_JWT_SECRET);
// - the gateway's own credential (DAGU_API_TOKEN): on 1.x Dagu's static token (DAGU_AUTH_TOKEN), on 2.x
//   (no static tokens) a Dagu API key of a viewer service account. The gateway reads with it, fails
//   with resource_unavailable without it, and never forwards the caller's bearer (a recording proxy
//   sits between the gateway and Dagu).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  bearer,
  type GatedProxy,
  hs256,
  httpFailure,
  newApiKey,
  newSecret,
  postMcp,
  startCapturedGateway,
  writeKeysFile,
} from '../../support/auth-fixtures.ts';
import { type DaguInstance, daguApi, startDagu } from '../../support/dagu.ts';
import { CONNECTORS, type TestClient } from '../../support/gateway.ts';
import { gatewayOnDagu } from '../../support/gateway-on-dagu.ts';

const TOKEN_SECRET = newSecret();
const ADMIN = { username: 'admin', password: `admin-${newSecret()}` };
const VIEWER = { username: 'ops-viewer', password: `viewer-${newSecret()}` };
const PROBE_DAG = 'auth-probe';

const PROBE_SPEC = `description: written by the auth tests
steps:
  - name: only
    command: echo probe
`;

function writeProbeDag(instance: DaguInstance): void {
  writeFileSync(join(instance.home, 'dags', `${PROBE_DAG}.yaml`), PROBE_SPEC);
}

interface Login {
  token: string;
  user: { id: string; username: string; role: string };
}

async function login(
  instance: DaguInstance,
  credentials: { username: string; password: string },
): Promise<Login> {
  const response = await fetch(`${instance.url}${instance.apiBase}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(credentials),
  });
  assert.equal(response.status, 200, `login as ${credentials.username}`);
  return (await response.json()) as Login;
}

const decode = (segment: string) =>
  JSON.parse(Buffer.from(segment, 'base64url').toString()) as Record<string, unknown>;

async function dagNames(client: TestClient): Promise<string[]> {
  const result = await client.callTool({ target: 'dags' });
  assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
  return (result.structuredContent!.data as { items: Array<{ name: string }> }).items.map(
    (item) => item.name,
  );
}

/** No recorded upstream request carries `secret` in any header or in its URL. */
function assertNeverForwarded(proxy: GatedProxy, secret: string): void {
  assert.ok(proxy.requests.length > 0, 'the gateway called Dagu');
  for (const request of proxy.requests) {
    assert.ok(!request.rawUrl.includes(secret), `URL ${request.rawUrl}`);
    for (const [name, value] of Object.entries(request.headers)) {
      assert.ok(!String(value).includes(secret), `header ${name} of ${request.method} ${request.rawUrl}`);
    }
  }
}

let builtin: DaguInstance;
let staticDagu: DaguInstance;

/** The gateway's own credential for a Dagu started with requireToken. */
function gatewayToken(instance: DaguInstance): string {
  assert.ok(instance.token !== undefined, 'Dagu was started with a token');
  return instance.token;
}

before(async () => {
  [builtin, staticDagu] = await Promise.all([
    startDagu({ requireToken: true, builtinAuth: { ...ADMIN, tokenSecret: TOKEN_SECRET } }),
    startDagu({ requireToken: true }),
  ]);
  writeProbeDag(builtin);
  writeProbeDag(staticDagu);
});
after(async () => {
  await Promise.all([builtin?.stop(), staticDagu?.stop()]);
});

describe('Dagu builtin auth: Dagu login tokens are accepted with the shared token secret', () => {
  let viewer: Login;
  let admin: Login;

  before(async () => {
    admin = await login(builtin, ADMIN);
    const created = await daguApi({ ...builtin, token: admin.token }, '/users', {
      method: 'POST',
      body: { ...VIEWER, role: 'viewer' },
    });
    if (builtin.generation === 1) {
      assert.equal(created.status, 201, JSON.stringify(created.body));
      viewer = await login(builtin, VIEWER);
    } else {
      // Dagu 2.x manages users only with a Pro license: its first admin is the only account.
      assert.equal(created.status, 403, JSON.stringify(created.body));
      assert.match(JSON.stringify(created.body), /license/);
      viewer = admin;
    }
  });
  const on = gatewayOnDagu(() => ({
    dagu: builtin,
    env: { DAGU_API_TOKEN: gatewayToken(builtin), AUTH_JWT_SECRET: TOKEN_SECRET },
  }));

  test("Dagu's login tokens are HS256 with sub, uid, username, role, iat and exp (no iss or aud)", () => {
    const [header, payload] = viewer.token.split('.') as [string, string];
    assert.deepEqual(decode(header), { alg: 'HS256', typ: 'JWT' });
    const claims = decode(payload);
    assert.deepEqual(Object.keys(claims).sort(), ['exp', 'iat', 'role', 'sub', 'uid', 'username']);
    assert.equal(claims.sub, viewer.user.id);
    assert.equal(claims.username, viewer === admin ? ADMIN.username : VIEWER.username);
    assert.equal(claims.role, viewer === admin ? 'admin' : 'viewer');
  });

  test("both MCP clients read through the gateway with a Dagu login token; the audit names Dagu's user id", async () => {
    const sessions: Array<[string, Login]> = [['admin', admin]];
    if (viewer !== admin) sessions.unshift(['viewer', viewer]);
    for (const [who, session] of sessions) {
      for (const era of ['modern', 'legacy'] as const) {
        const client = await CONNECTORS[era](on.gateway.mcpUrl, bearer(session.token));
        try {
          assert.ok((await dagNames(client)).includes(PROBE_DAG), `${who} via ${era}`);
        } finally {
          await client.close();
        }
        const record = on.gateway.auditLines().at(-1)!;
        assert.deepEqual(
          [record.identity, record.identity_kind, record.outcome],
          [session.user.id, 'jwt', 'ok'],
          `${who} via ${era}`,
        );
      }
    }
  });

  test("the gateway calls Dagu with its own token, never the caller's Dagu token", () => {
    for (const request of on.proxy.requests) {
      assert.equal(request.headers.authorization, `Bearer ${gatewayToken(builtin)}`, request.rawUrl);
    }
    assertNeverForwarded(on.proxy, viewer.token);
    assertNeverForwarded(on.proxy, admin.token);
  });

  test("a token signed with another secret, or Dagu's token with a configured audience, is refused", async () => {
    const forged = hs256(
      {
        sub: viewer.user.id,
        uid: viewer.user.id,
        username: 'admin',
        role: 'admin',
        exp: Math.floor(Date.now() / 1000) + 600,
      },
      newSecret(),
    );
    const response = await postMcp(on.gateway.mcpUrl, bearer(forged));
    assert.equal(response.status, 401);
    assert.equal(response.json().code, 'unauthenticated');

    // Dagu's tokens carry no `aud`/`iss`: setting AUTH_JWT_AUDIENCE or AUTH_JWT_ISSUER refuses them.
    const strict = await startCapturedGateway({
      DAGU_URL: builtin.url,
      DAGU_API_BASE: builtin.apiBase,
      DAGU_API_TOKEN: gatewayToken(builtin),
      AUTH_JWT_SECRET: TOKEN_SECRET,
      AUTH_JWT_AUDIENCE: 'dagu-mcp-gateway',
    });
    try {
      const refused = await postMcp(strict.mcpUrl, bearer(viewer.token));
      assert.equal(refused.status, 401);
      assert.equal(strict.auditLines().at(-1)?.reason, 'wrong_audience');
    } finally {
      await strict.close();
    }
  });

  test("without DAGU_API_TOKEN reads fail with resource_unavailable, although Dagu accepts the caller's token", async () => {
    // Dagu itself accepts the viewer's token...
    const direct = await daguApi({ ...builtin, token: viewer.token }, '/dags');
    assert.equal(direct.status, 200);
    // ...but the gateway does not pass it on, and has no credential of its own.
    const bare = await startCapturedGateway({
      DAGU_URL: builtin.url,
      DAGU_API_BASE: builtin.apiBase,
      AUTH_JWT_SECRET: TOKEN_SECRET,
    });
    try {
      for (const era of ['modern', 'legacy'] as const) {
        const client = await CONNECTORS[era](bare.mcpUrl, bearer(viewer.token));
        try {
          const result = await client.callTool({ target: 'dags' });
          assert.equal(result.isError, true);
          assert.equal(result.structuredContent?.code, 'resource_unavailable');
          assert.match(String(result.structuredContent?.message), /DAGU_API_TOKEN/);
        } finally {
          await client.close();
        }
        const record = bare.auditLines().at(-1)!;
        assert.deepEqual([record.outcome, record.upstream_status], ['resource_unavailable', 401]);
      }
    } finally {
      await bare.close();
    }
  });
});

describe("the gateway's own DAGU_API_TOKEN (1.x static token, 2.x API key)", () => {
  const CALLER_KEY = newApiKey('caller');
  let keysFile: string;
  const on = gatewayOnDagu(() => {
    keysFile = writeKeysFile([{ name: 'caller', key: CALLER_KEY }]);
    return {
      dagu: staticDagu,
      env: { DAGU_API_TOKEN: gatewayToken(staticDagu), AUTH_API_KEYS_FILE: keysFile },
    };
  });

  test('both clients read DAGs and a spec through the gateway, which sends only its own token', async () => {
    for (const era of ['modern', 'legacy'] as const) {
      const client = await CONNECTORS[era](on.gateway.mcpUrl, bearer(CALLER_KEY));
      try {
        assert.deepEqual(await dagNames(client), [PROBE_DAG]);
        const spec = await client.callTool({ target: 'dag_spec', name: PROBE_DAG });
        assert.notEqual(spec.isError, true, JSON.stringify(spec.structuredContent));
        assert.match(String((spec.structuredContent!.data as { spec: string }).spec), /echo probe/);
      } finally {
        await client.close();
      }
    }
    assert.ok(on.proxy.requests.length >= 4);
    for (const request of on.proxy.requests) {
      assert.equal(request.headers.authorization, `Bearer ${gatewayToken(staticDagu)}`, request.rawUrl);
    }
    assertNeverForwarded(on.proxy, CALLER_KEY);
  });

  test('without DAGU_API_TOKEN, or with a wrong one, reads give resource_unavailable', async () => {
    for (const token of [undefined, `wrong-${newSecret()}`]) {
      const other = await startCapturedGateway({
        DAGU_URL: staticDagu.url,
        DAGU_API_BASE: staticDagu.apiBase,
        AUTH_API_KEYS_FILE: keysFile,
        ...(token === undefined ? {} : { DAGU_API_TOKEN: token }),
      });
      try {
        for (const era of ['modern', 'legacy'] as const) {
          const client = await CONNECTORS[era](other.mcpUrl, bearer(CALLER_KEY));
          try {
            for (const args of [{ target: 'dags' }, { target: 'dag_spec', name: PROBE_DAG }]) {
              const result = await client.callTool(args);
              assert.equal(result.isError, true, JSON.stringify(args));
              assert.equal(result.structuredContent?.code, 'resource_unavailable', JSON.stringify(args));
            }
          } finally {
            await client.close();
          }
        }
      } finally {
        await other.close();
      }
    }
  });

  test('the caller is still authenticated by the gateway first: a wrong caller key never reaches Dagu', async () => {
    // The readiness probe may call Dagu's health route meanwhile; no read may reach Dagu.
    const reads = () => on.proxy.requests.filter((request) => !request.rawUrl.endsWith('/health')).length;
    const before = reads();
    const response = await postMcp(on.gateway.mcpUrl, bearer(gatewayToken(staticDagu)));
    // Dagu's own token is not a gateway credential.
    assert.equal(response.status, 401);
    for (const era of ['modern', 'legacy'] as const) {
      await assert.rejects(
        CONNECTORS[era](on.gateway.mcpUrl, bearer(newApiKey('nobody'))),
        (error: unknown) => {
          assert.equal(httpFailure(error).status, 401);
          return true;
        },
      );
    }
    assert.equal(reads(), before);
  });
});
