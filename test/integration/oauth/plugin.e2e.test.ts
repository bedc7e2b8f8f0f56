// The built-in authorization server (AUTH_SERVER=builtin, src/oauth) end to end: the upstream is
// oidc-provider configured like Entra ID or Cognito (no registration endpoint, no resource indicators,
// one confidential client registered by an administrator for the gateway), on 127.0.0.1. MCP clients
// this project does not write (the v2 TypeScript SDK client with its OAuthClientProvider) find the
// gateway's own server through its 401 and metadata, register (dynamically, or by a Client ID Metadata
// Document served over https on loopback), get the consent page, sign in upstream, and read from the
// real Dagu with a token whose audience is the gateway. Then: refresh (rotated), step-up to the
// workbook scope, a token for another resource, revocation, and the refusals of metadata documents.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { OAuthError, refreshAuthorization } from '@modelcontextprotocol/client';
import { type CapturedGateway, startCapturedGateway } from '../../support/auth-fixtures.ts';
import {
  BrowserAgent,
  decodeJwt,
  type GatewayOAuthProvider,
  type GatewayUpstream,
  serverMetadata as metadataAt,
  newGatewayProvider,
  readWorkbookAfterStepUp,
  startGatewayUpstream,
} from '../../support/builtin-as.ts';
import { freePort, getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { connectWithOAuth, type OAuthConnection, readDags } from '../../support/oauth-clients.ts';
import type { AuthorizationServer } from '../../support/oidc-provider.ts';
import { until } from '../../support/record-store-contract.ts';
import { createTestCa, type TestCa } from '../../support/tls.ts';
import { writeSmallWorkbook } from '../../support/workbook-fixtures.ts';

const OTHER_RESOURCE = 'https://other.example/mcp';
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
let ca: TestCa;
let documents: Server;
let documentsUrl: string;
let publicUrl: string;
let resource: string;
let workbookDir: string;
let user: GatewayUpstream['user'];
const open: OAuthConnection[] = [];
/** Client ID Metadata Documents and other answers served over https, by path. */
const served = new Map<string, { status: number; headers?: Record<string, string>; body: string | Buffer }>();

before(async () => {
  workbookDir = mkdtempSync(join(tmpdir(), 'builtin-as-workbooks-'));
  await writeSmallWorkbook(join(workbookDir, 'small.xlsx'));
  dagu = await getTestDagu();
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  resource = `${publicUrl}/mcp`;
  writeFileSync(clientsFile(), PRE_REGISTERED);
  upstreamSettings = await startGatewayUpstream([publicUrl]);
  upstream = upstreamSettings.server;
  user = upstreamSettings.user;
  ca = createTestCa();
  const certificate = ca.issue('documents');
  documents = createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
    const answer = served.get(req.url ?? '');
    if (answer === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
  documentsUrl = `https://127.0.0.1:${(documents.address() as AddressInfo).port}`;
  gateway = await startCapturedGateway(gatewayEnv(port, { OAUTH_CLIENT_ID_ALLOW_LOOPBACK: 'true' }));
});

after(async () => {
  for (const connection of open) await connection.close().catch(() => {});
  await gateway?.close();
  documents?.closeAllConnections();
  await new Promise((resolve) => documents?.close(resolve));
  ca?.remove();
  await upstream?.stop();
  await dagu?.stop();
});

function gatewayEnv(port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PORT: String(port),
    DAGU_URL: dagu.url,
    DAGU_API_BASE: dagu.apiBase,
    ...upstreamSettings.gatewayEnv(`http://127.0.0.1:${port}`),
    OAUTH_CLIENT_ID_CA_FILE: ca.caFile,
    WORKBOOK_ROOTS: workbookDir,
    OAUTH_STATE_DIR: join(workbookDir, 'oauth-state'),
    OAUTH_CLIENTS_FILE: clientsFile(),
    // A browser-based host may call the MCP endpoint; it may still not answer the consent page.
    ALLOWED_ORIGINS: BROWSER_HOST,
    ...extra,
  };
}

// ---- helpers ----------------------------------------------------------------------------------

const newProvider = (agent: BrowserAgent, options: { clientMetadataUrl?: string } = {}) =>
  newGatewayProvider(agent, user, upstream.issuer, options);

async function connect(provider: GatewayOAuthProvider): Promise<OAuthConnection> {
  const connection = await connectWithOAuth(`${publicUrl}/mcp`, provider);
  open.push(connection);
  return connection;
}

const serverMetadata = () => metadataAt(publicUrl);

const auditOf = (event: string) => gateway.auditLines().filter((line) => line.event === event);

async function tokenRequest(
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${publicUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

// ---- dynamic registration ---------------------------------------------------------------------

describe('TypeScript SDK client, dynamic registration, upstream without registration or resource indicators', () => {
  const agent = () => new BrowserAgent(user, publicUrl);
  let shared: { agent: BrowserAgent; provider: GatewayOAuthProvider; connection: OAuthConnection };

  before(async () => {
    const browser = agent();
    const provider = newProvider(browser);
    shared = { agent: browser, provider, connection: await connect(provider) };
  });

  test('first connect → read: the consent page once, the upstream sign-in, a token for this gateway only, the read', async () => {
    const { provider, connection, agent: browser } = shared;
    assert.ok((await readDags(connection.client)).includes(dagu.seed.dags.twoSteps));
    assert.equal(browser.consentPages, 1);
    const claims = decodeJwt(provider.tokens()!.access_token);
    assert.equal(claims.iss, publicUrl);
    assert.equal(claims.aud, resource);
    assert.equal(claims.sub, 'alice');
    assert.equal(claims.scope, 'dagu.read');
    assert.equal(claims.email, 'alice@example.com');
    // The consent came before the user was sent upstream.
    const consentAt = browser.steps.findIndex(
      (step) => step.method === 'POST' && step.url.includes('/consent'),
    );
    const upstreamAt = browser.steps.findIndex((step) => step.url.startsWith(upstream.issuer));
    assert.ok(consentAt >= 0 && consentAt < upstreamAt, JSON.stringify(browser.steps));
    const clientId = provider.client!.client_id;
    assert.equal(
      auditOf('oauth.registration').some((line) => line.client_id === clientId),
      true,
    );
    assert.equal(
      auditOf('oauth.consent').some((line) => line.client_id === clientId && line.outcome === 'ok'),
      true,
    );
    assert.equal(
      auditOf('oauth.grant').some((line) => line.client_id === clientId && line.identity === 'alice'),
      true,
    );
  });

  test('refresh: a new access token and a new refresh token; the old refresh token is then refused', async () => {
    const { provider } = shared;
    const before = provider.tokens()!;
    assert.ok(before.refresh_token, 'a refresh token was issued');
    const refreshed = await refreshAuthorization(publicUrl, {
      metadata: await serverMetadata(),
      clientInformation: provider.client!,
      refreshToken: before.refresh_token,
      resource: new URL(resource),
    });
    assert.notEqual(refreshed.refresh_token, before.refresh_token);
    assert.equal(decodeJwt(refreshed.access_token).aud, resource);
    provider.saveTokens(refreshed);
    const reused = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: before.refresh_token,
      client_id: provider.client!.client_id,
    });
    assert.equal(reused.status, 400);
    assert.equal(reused.body.error, 'invalid_grant');
  });

  test('step-up: a workbook read with dagu.read gets 403, the SDK re-authorizes with dagu.workbook without a second consent page, reads', async () => {
    const { provider, connection, agent: browser } = shared;
    const result = await readWorkbookAfterStepUp(connection, provider, join(workbookDir, 'small.xlsx'));
    assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
    assert.deepEqual(decodeJwt(provider.tokens()!.access_token).scope?.split(' ').sort(), [
      'dagu.read',
      'dagu.workbook',
    ]);
    assert.equal(browser.consentPages, 1, 'the consent is remembered for this client and user');
  });

  test('a token for another resource is refused at the token endpoint (invalid_target)', async () => {
    const { provider } = shared;
    const answer = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: provider.tokens()!.refresh_token!,
      client_id: provider.client!.client_id,
      resource: OTHER_RESOURCE,
    });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error, 'invalid_target');
  });

  test('a revoked refresh token is refused, and the revocation is audited', async () => {
    const { provider } = shared;
    const refreshToken = provider.tokens()!.refresh_token!;
    const revoked = await fetch(`${publicUrl}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refreshToken, client_id: provider.client!.client_id }).toString(),
    });
    assert.equal(revoked.status, 200);
    await assert.rejects(
      refreshAuthorization(publicUrl, {
        metadata: await serverMetadata(),
        clientInformation: provider.client!,
        refreshToken,
        resource: new URL(resource),
      }),
      (error: unknown) => error instanceof OAuthError && error.code === 'invalid_grant',
    );
    assert.equal(
      auditOf('oauth.revocation').some((line) => line.client_id === provider.client!.client_id),
      true,
    );
  });

  test('a redirect URI of another host than the registered one is refused at the gateway, before any upstream request', async () => {
    const { provider } = shared;
    const browser = agent();
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
});

// ---- Client ID Metadata Documents ------------------------------------------------------------

/** Serves a document at `path` on the https server and returns its URL (the client id). */
function serveDocument(
  path: string,
  document: (url: string) => unknown,
  answer: { status?: number; headers?: Record<string, string> } = {},
): string {
  const url = `${documentsUrl}${path}`;
  served.set(path, {
    status: answer.status ?? 200,
    ...(answer.headers ? { headers: answer.headers } : {}),
    body: JSON.stringify(document(url)),
  });
  return url;
}

const clientDocument = (url: string) => ({
  client_id: url,
  client_name: 'builtin-server tests (metadata document)',
  redirect_uris: ['http://127.0.0.1:9/oauth/callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  application_type: 'native',
});

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

describe('TypeScript SDK client, Client ID Metadata Document served over https on loopback', () => {
  let shared: { agent: BrowserAgent; provider: GatewayOAuthProvider; connection: OAuthConnection };

  before(async () => {
    const clientId = serveDocument('/clients/sdk.json', clientDocument, {
      headers: { 'cache-control': 'max-age=600' },
    });
    const browser = new BrowserAgent(user, publicUrl);
    const provider = newProvider(browser, { clientMetadataUrl: clientId });
    shared = { agent: browser, provider, connection: await connect(provider) };
  });

  test('first connect → read: the URL is the client id, no registration, the consent names the document’s client', async () => {
    const { provider, connection, agent: browser } = shared;
    assert.ok((await readDags(connection.client)).includes(dagu.seed.dags.twoSteps));
    assert.equal(provider.client?.client_id, `${documentsUrl}/clients/sdk.json`);
    assert.equal(browser.consentPages, 1);
    const claims = decodeJwt(provider.tokens()!.access_token);
    assert.equal(claims.aud, resource);
    assert.equal(
      auditOf('oauth.registration').some((line) => line.client_id === provider.client?.client_id),
      false,
    );
    assert.equal(
      auditOf('oauth.grant').some(
        (line) => line.client_id === provider.client?.client_id && line.identity === 'alice',
      ),
      true,
    );
  });

  test('refresh: rotated; the old refresh token is refused', async () => {
    const { provider } = shared;
    const before = provider.tokens()!;
    const refreshed = await refreshAuthorization(publicUrl, {
      metadata: await serverMetadata(),
      clientInformation: provider.client!,
      refreshToken: before.refresh_token!,
      resource: new URL(resource),
    });
    assert.notEqual(refreshed.refresh_token, before.refresh_token);
    provider.saveTokens(refreshed);
    const reused = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: before.refresh_token!,
      client_id: provider.client!.client_id,
    });
    assert.equal(reused.body.error, 'invalid_grant');
  });

  test('step-up to dagu.workbook without a second consent page', async () => {
    const { provider, connection, agent: browser } = shared;
    const result = await readWorkbookAfterStepUp(connection, provider, join(workbookDir, 'small.xlsx'));
    assert.notEqual(result.isError, true);
    assert.deepEqual(decodeJwt(provider.tokens()!.access_token).scope?.split(' ').sort(), [
      'dagu.read',
      'dagu.workbook',
    ]);
    assert.equal(browser.consentPages, 1);
  });

  test('a token for another resource is refused (invalid_target)', async () => {
    const { provider } = shared;
    const answer = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: provider.tokens()!.refresh_token!,
      client_id: provider.client!.client_id,
      resource: OTHER_RESOURCE,
    });
    assert.equal(answer.body.error, 'invalid_target');
  });

  test('a revoked refresh token is refused', async () => {
    const { provider } = shared;
    const refreshToken = provider.tokens()!.refresh_token!;
    const revoked = await fetch(`${publicUrl}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refreshToken, client_id: provider.client!.client_id }).toString(),
    });
    assert.equal(revoked.status, 200);
    const reused = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: provider.client!.client_id,
    });
    assert.equal(reused.body.error, 'invalid_grant');
  });
});

describe('Client ID Metadata Documents the gateway refuses, each with an audit record', () => {
  test('a document answered with a redirect', async () => {
    const clientId = serveDocument('/clients/moved.json', clientDocument, {
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
    const clientId = `${documentsUrl}/clients/huge.json`;
    served.set('/clients/huge.json', {
      status: 200,
      body: JSON.stringify({ ...clientDocument(clientId), padding: 'x'.repeat(5 * 1024 * 1024) }),
    });
    const answer = await authorizeAs(publicUrl, clientId);
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error, 'invalid_client');
    assert.match(String(refusalFor(gateway.auditLines(), clientId)?.reason), /larger than 16384 bytes/);
  });

  test('a document whose client_id is not its URL', async () => {
    const clientId = serveDocument('/clients/other.json', () =>
      clientDocument(`${documentsUrl}/clients/sdk.json`),
    );
    const answer = await authorizeAs(publicUrl, clientId);
    assert.equal(answer.status, 400);
    assert.match(String(answer.body.error), /invalid_client/);
    assert.match(String(refusalFor(gateway.auditLines(), clientId)?.reason), /client_id does not match/);
  });

  test('a document on loopback while OAUTH_CLIENT_ID_ALLOW_LOOPBACK is off', async () => {
    const clientId = serveDocument('/clients/sdk-strict.json', clientDocument);
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
    const provider = newProvider(agent);
    provider.client = { client_id: 'team-agent' };
    preRegistered = provider;
    const registrationsBefore = auditOf('oauth.registration').length;
    const connection = await connect(provider);
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
    const refresh = await tokenRequest({
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
