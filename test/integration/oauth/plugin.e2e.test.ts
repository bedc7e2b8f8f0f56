// The built-in authorization server (AUTH_SERVER=builtin, src/oauth) end to end: the upstream is
// oidc-provider configured like Entra ID or Cognito (no registration endpoint, no resource indicators,
// one confidential client registered by an administrator for the gateway), on 127.0.0.1. MCP clients
// this project does not write (the v2 TypeScript SDK client with its OAuthClientProvider) find the
// gateway's own server through its 401 and metadata, register (dynamically, or by a Client ID Metadata
// Document served over https on loopback), get the consent page, sign in upstream, and read from the
// real Dagu with a token whose audience is the gateway (the rows of test/support/builtin-as-rows.ts,
// which upstreams.e2e runs with Keycloak as the upstream). Then: pre-registered clients, the consent
// form's own-page rule, the refusals of metadata documents, and the counts on /metrics.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type CapturedGateway, startCapturedGateway } from '../../support/auth-fixtures.ts';
import {
  BrowserAgent,
  decodeJwt,
  type GatewayOAuthProvider,
  type GatewayUpstream,
  newGatewayProvider,
  startGatewayUpstream,
  tokenRequest,
} from '../../support/builtin-as.ts';
import { type BuiltinWorld, builtinClientRows, builtinGatewayEnv } from '../../support/builtin-as-rows.ts';
import {
  type ClientDocuments,
  clientDocument,
  startClientDocuments,
} from '../../support/client-documents.ts';
import { freePort, getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { connectWithOAuth, type OAuthConnection, readDags } from '../../support/oauth-clients.ts';
import type { AuthorizationServer } from '../../support/oidc-provider.ts';
import { until } from '../../support/record-store-contract.ts';
import { smallWorkbookDir } from '../../support/workbook-fixtures.ts';

/** OAUTH_CLIENTS_FILE: a native host whose loopback redirect matches on any port (RFC 8252). */
const PRE_REGISTERED = [
  'clients:',
  '  - client_id: team-agent',
  '    client_name: Team agent (registered by the administrator)',
  '    application_type: native',
  '    redirect_uris: [http://127.0.0.1/oauth/callback]',
  '',
].join('\n');
const clientsFile = () => join(workbookDir, 'clients.yaml');
const BROWSER_HOST = 'https://host.example';

let dagu: TestDagu;
let upstream: AuthorizationServer;
let upstreamSettings: GatewayUpstream;
let gateway: CapturedGateway;
let documents: ClientDocuments;
let publicUrl: string;
let resource: string;
let workbookDir: string;
let user: GatewayUpstream['user'];
const open: OAuthConnection[] = [];

before(async () => {
  workbookDir = await smallWorkbookDir('builtin-as-workbooks-');
  dagu = await getTestDagu();
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  resource = `${publicUrl}/mcp`;
  writeFileSync(clientsFile(), PRE_REGISTERED);
  upstreamSettings = await startGatewayUpstream([publicUrl]);
  upstream = upstreamSettings.server;
  user = upstreamSettings.user;
  documents = await startClientDocuments();
  gateway = await startCapturedGateway(gatewayEnv(port, { OAUTH_CLIENT_ID_ALLOW_LOOPBACK: 'true' }));
});

after(async () => {
  for (const connection of open) await connection.close().catch(() => {});
  await gateway?.close();
  await documents?.close();
  await upstream?.stop();
  await dagu?.stop();
});

const gatewayEnv = (port: number, extra: Record<string, string> = {}) =>
  builtinGatewayEnv(
    { port, dagu, upstream: upstreamSettings.upstream, caFile: documents.caFile, workbookDir },
    {
      OAUTH_CLIENTS_FILE: clientsFile(),
      // A browser-based host may call the MCP endpoint; it may still not answer the consent page.
      ALLOWED_ORIGINS: BROWSER_HOST,
      ...extra,
    },
  );

const world = (): BuiltinWorld => ({
  publicUrl,
  upstreamOrigin: upstream.issuer,
  user,
  identity: 'alice',
  email: 'alice@example.com',
  seededDag: dagu.seed.dags.twoSteps,
  workbookPath: join(workbookDir, 'small.xlsx'),
  auditLines: () => gateway.auditLines(),
});

const auditOf = (event: string) => gateway.auditLines().filter((line) => line.event === event);

// ---- dynamic registration ---------------------------------------------------------------------

builtinClientRows(
  'TypeScript SDK client, dynamic registration, upstream without registration or resource indicators',
  world,
  { kind: 'dynamic' },
  (session) => {
    test('a redirect URI of another host than the registered one is refused at the gateway, before any upstream request', async () => {
      const { provider } = session();
      const browser = new BrowserAgent(user, publicUrl);
      const url = new URL(`${publicUrl}/oauth/authorize`);
      url.search = new URLSearchParams({
        client_id: provider.client!.client_id,
        response_type: 'code',
        redirect_uri: 'http://evil.example/callback',
        scope: 'dagu.read',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }).toString();
      await assert.rejects(browser.authorize(url, upstream.issuer), /HTTP 400/);
      assert.equal(browser.steps.length, 1);
      assert.equal(
        browser.steps.some((step) => step.url.startsWith(upstream.issuer)),
        false,
      );
      assert.equal(
        auditOf('oauth.refused').some(
          (line) => line.client_id === provider.client!.client_id && line.outcome === 'invalid_redirect_uri',
        ),
        true,
      );
    });
  },
);

// ---- Client ID Metadata Documents ------------------------------------------------------------

/** An authorization request for `dagu.read` with PKCE S256, to the loopback redirect URI. */
function authorizeUrl(baseUrl: string, clientId: string): URL {
  const url = new URL(`${baseUrl}/oauth/authorize`);
  url.search = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: 'http://127.0.0.1:9/oauth/callback',
    scope: 'dagu.read',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  }).toString();
  return url;
}

/** An authorization request of `clientId` straight at the gateway: its status and JSON answer. */
async function authorizeAs(
  baseUrl: string,
  clientId: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(authorizeUrl(baseUrl, clientId), { redirect: 'manual' });
  const text = await response.text();
  return {
    status: response.status,
    body: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

const refusalFor = (auditLines: Array<Record<string, unknown>>, clientId: string) =>
  auditLines.find((line) => line.event === 'oauth.refused' && line.client_id === clientId);

builtinClientRows('TypeScript SDK client, Client ID Metadata Document served over https on loopback', world, {
  kind: 'metadata document',
  url: () =>
    documents.serve('/clients/sdk.json', clientDocument, { headers: { 'cache-control': 'max-age=600' } }),
});

describe('Client ID Metadata Documents the gateway refuses, each with an audit record', () => {
  test('a document answered with a redirect', async () => {
    const clientId = documents.serve('/clients/moved.json', clientDocument, {
      status: 302,
      headers: { location: '/clients/sdk.json' },
    });
    const answer = await authorizeAs(publicUrl, clientId);
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error, 'invalid_client');
    assert.match(
      String(refusalFor(gateway.auditLines(), clientId)?.reason),
      /unexpected response status 302/,
    );
  });

  test('a 5 MB document', async () => {
    const clientId = `${documents.url}/clients/huge.json`;
    documents.set('/clients/huge.json', {
      status: 200,
      body: JSON.stringify({ ...clientDocument(clientId), padding: 'x'.repeat(5 * 1024 * 1024) }),
    });
    const answer = await authorizeAs(publicUrl, clientId);
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error, 'invalid_client');
    assert.match(String(refusalFor(gateway.auditLines(), clientId)?.reason), /larger than 16384 bytes/);
  });

  test('a document whose client_id is not its URL', async () => {
    const clientId = documents.serve('/clients/other.json', () =>
      clientDocument(`${documents.url}/clients/sdk.json`),
    );
    const answer = await authorizeAs(publicUrl, clientId);
    assert.equal(answer.status, 400);
    assert.match(String(answer.body.error), /invalid_client/);
    assert.match(String(refusalFor(gateway.auditLines(), clientId)?.reason), /client_id does not match/);
  });

  test('a document on loopback while OAUTH_CLIENT_ID_ALLOW_LOOPBACK is off', async () => {
    const clientId = documents.serve('/clients/sdk-strict.json', clientDocument);
    const strict = await startCapturedGateway(
      gatewayEnv(await freePort(), { OAUTH_STATE_DIR: join(workbookDir, 'oauth-state-strict') }),
    );
    try {
      const answer = await authorizeAs(strict.baseUrl, clientId);
      assert.equal(answer.status, 400);
      assert.equal(answer.body.error, 'invalid_client');
      assert.match(
        String(refusalFor(strict.auditLines(), clientId)?.reason),
        /127\.0\.0\.1 is a loopback address/,
      );
    } finally {
      await strict.close();
    }
  });
});

// ---- pre-registered clients ----------------------------------------------------------------

describe('TypeScript SDK client, pre-registered in OAUTH_CLIENTS_FILE', () => {
  let preRegistered: GatewayOAuthProvider | undefined;
  test('connects with the administrator’s client id (no registration, no document), reads; the consent names the client', async () => {
    const agent = new BrowserAgent(user, publicUrl);
    const provider = newGatewayProvider(agent, user, upstream.issuer);
    provider.client = { client_id: 'team-agent' };
    preRegistered = provider;
    const registrationsBefore = auditOf('oauth.registration').length;
    const connection = await connectWithOAuth(resource, provider);
    open.push(connection);
    assert.ok((await readDags(connection.client)).includes(dagu.seed.dags.twoSteps));
    assert.equal(provider.client?.client_id, 'team-agent');
    assert.equal(auditOf('oauth.registration').length, registrationsBefore, 'the SDK registered nothing');
    assert.equal(decodeJwt(provider.tokens()!.access_token).aud, resource);
    assert.ok(
      agent.consentPagesText.some((page) => page.includes('Team agent (registered by the administrator)')),
    );
  });

  test('dropped from the file, it is refused at the next authorization without a restart', async () => {
    assert.equal((await authorizeAs(publicUrl, 'team-agent')).status, 303);
    writeFileSync(clientsFile(), 'clients: []\n');
    await until(
      async () => (await authorizeAs(publicUrl, 'team-agent')).status === 400,
      10_000,
      'the clients file reload',
    );
    const answer = await authorizeAs(publicUrl, 'team-agent');
    assert.equal(answer.body.error, 'invalid_client');
    assert.ok(refusalFor(gateway.auditLines(), 'team-agent'), 'the refusal is audited');
    const refresh = await tokenRequest(publicUrl, {
      grant_type: 'refresh_token',
      refresh_token: preRegistered!.tokens()!.refresh_token!,
      client_id: 'team-agent',
    });
    assert.equal(refresh.body.error, 'invalid_client', 'its refresh token no longer refreshes');
    writeFileSync(clientsFile(), PRE_REGISTERED);
    await until(
      async () => (await authorizeAs(publicUrl, 'team-agent')).status === 303,
      10_000,
      'the clients file reload',
    );
  });
});

// ---- the consent form -----------------------------------------------------------------------

describe('the consent form accepts only its own page’s post', () => {
  test('another site’s post (an allowed browser origin included) and a post without the CSRF token get 403, audited; the page’s own post goes on', async () => {
    const toInteraction = await fetch(authorizeUrl(publicUrl, 'team-agent'), { redirect: 'manual' });
    const cookie = toInteraction.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ');
    const page = await fetch(new URL(toInteraction.headers.get('location')!, publicUrl), {
      headers: { cookie },
    });
    const html = await page.text();
    const action = new URL(
      /<form method="post" action="([^"]+)"/.exec(html)![1]!.replaceAll('&#38;', '&'),
      publicUrl,
    );
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const post = (headers: Record<string, string>, form: Record<string, string>) =>
      fetch(action, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(form).toString(),
      });
    const refusedBefore = auditOf('oauth.refused').length;
    assert.equal((await post({ origin: BROWSER_HOST }, { csrf, decision: 'allow' })).status, 403);
    assert.equal((await post({ 'sec-fetch-site': 'cross-site' }, { csrf, decision: 'allow' })).status, 403);
    assert.equal((await post({ origin: publicUrl }, { decision: 'allow' })).status, 403);
    assert.deepEqual(
      auditOf('oauth.refused')
        .slice(refusedBefore)
        .map((line) => line.reason),
      [
        'consent posted from another site',
        'consent posted from another site',
        'consent form without its CSRF token',
      ],
    );
    const own = await post(
      { origin: publicUrl, 'sec-fetch-site': 'same-origin' },
      { csrf, decision: 'allow' },
    );
    assert.equal(own.status, 303);
    assert.ok(own.headers.get('location')?.startsWith(upstream.issuer), 'on to the upstream sign-in');
  });
});

// ---- metrics ----------------------------------------------------------------------------------

// ---- requests per address ----------------------------------------------------------------------

test('past OAUTH_RATE_LIMIT_PER_MINUTE one address gets 429 at registration and sign-in, audited and counted; discovery and keys stay served', async () => {
  const limited = await startCapturedGateway(
    gatewayEnv(await freePort(), {
      OAUTH_STATE_DIR: join(workbookDir, 'oauth-state-limited'),
      OAUTH_RATE_LIMIT_PER_MINUTE: '10',
    }),
  );
  try {
    const register = () =>
      fetch(`${limited.baseUrl}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          redirect_uris: ['http://127.0.0.1:9/oauth/callback'],
          token_endpoint_auth_method: 'none',
        }),
      });
    for (let i = 0; i < 10; i += 1) assert.equal((await register()).status, 201);
    const refused = await register();
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal(((await refused.json()) as { error: string }).error, 'temporarily_unavailable');
    const signIn = await fetch(authorizeUrl(limited.baseUrl, 'team-agent'), { redirect: 'manual' });
    assert.equal(signIn.status, 429);
    assert.match(String(signIn.headers.get('content-type')), /^text\/html/);
    for (const path of ['/.well-known/oauth-authorization-server', '/oauth/jwks']) {
      assert.equal((await fetch(`${limited.baseUrl}${path}`)).status, 200, path);
    }
    const refusals = limited.auditLines().filter((line) => line.outcome === 'temporarily_unavailable');
    assert.deepEqual(
      refusals.map((line) => [line.event, line.path, line.http_status]),
      [
        ['oauth.refused', '/oauth/register', 429],
        ['oauth.refused', '/oauth/authorize', 429],
      ],
    );
    const metrics = await (await fetch(`${limited.baseUrl}/metrics`)).text();
    assert.match(
      metrics,
      /^mcp_gateway_oauth_events_total\{event="refused",outcome="temporarily_unavailable"\} 2$/m,
    );
  } finally {
    await limited.close();
  }
});

test('every audited event is counted on /metrics by event and outcome, as many as the audit log holds', async () => {
  const body = await (await fetch(`${publicUrl}/metrics`)).text();
  const counted = (event: string, outcome: string) =>
    Number(
      new RegExp(
        `^mcp_gateway_oauth_events_total\\{event="${event}",outcome="${outcome}"\\} (\\d+)$`,
        'm',
      ).exec(body)?.[1] ?? 0,
    );
  const audited = (event: string, outcome: string) =>
    gateway.auditLines().filter((line) => line.event === `oauth.${event}` && line.outcome === outcome).length;
  for (const [event, outcome] of [
    ['registration', 'ok'],
    ['consent', 'ok'],
    ['grant', 'ok'],
    ['token', 'ok'],
    ['revocation', 'ok'],
    ['refused', 'invalid_client'],
    ['refused', 'invalid_request'],
  ] as const) {
    assert.ok(audited(event, outcome) > 0, `${event} ${outcome} audited`);
    assert.equal(counted(event, outcome), audited(event, outcome), `${event} ${outcome}`);
  }
});
