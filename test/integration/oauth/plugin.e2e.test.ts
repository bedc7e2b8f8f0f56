// The built-in authorization server (AUTH_SERVER=builtin, src/oauth) end to end: the upstream is
// oidc-provider configured like Entra ID or Cognito (no registration endpoint, no resource indicators,
// one confidential client registered by an administrator for the gateway), on 127.0.0.1. MCP clients
// this project does not write (the v2 TypeScript SDK client with its OAuthClientProvider) find the
// gateway's own server through its 401 and metadata, register (dynamically, or by a Client ID Metadata
// Document served over https on loopback), get the consent page, sign in upstream, and read from the
// real Dagu with a token whose audience is the gateway. Then: refresh (rotated), step-up to the
// workbook scope, a token for another resource, revocation, and the refusals of metadata documents.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type CapturedGateway, startCapturedGateway } from '../../support/auth-fixtures.ts';
import { BrowserAgent } from '../../support/builtin-as.ts';
import { type BuiltinWorld, builtinClientRows, builtinGatewayEnv } from '../../support/builtin-as-rows.ts';
import {
  type ClientDocuments,
  clientDocument,
  startClientDocuments,
} from '../../support/client-documents.ts';
import { freePort, getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { type AuthorizationServer, startAuthorizationServer } from '../../support/oidc-provider.ts';
import { smallWorkbookDir } from '../../support/workbook-fixtures.ts';

const UPSTREAM_CLIENT = 'dagu-gateway';
const UPSTREAM_SECRET = randomBytes(24).toString('base64url');

let dagu: TestDagu;
let upstream: AuthorizationServer;
let gateway: CapturedGateway;
let documents: ClientDocuments;
let publicUrl: string;
let workbookDir: string;
const user = { login: 'alice', password: '' };

before(async () => {
  workbookDir = await smallWorkbookDir('builtin-as-workbooks-');
  dagu = await getTestDagu();
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  upstream = await startAuthorizationServer({
    mcpFeatures: false,
    accounts: { alice: randomBytes(12).toString('base64url') },
    accountClaims: { alice: { email: 'alice@example.com', groups: ['readers'] } },
    clients: [
      {
        client_id: UPSTREAM_CLIENT,
        client_secret: UPSTREAM_SECRET,
        redirect_uris: [`${publicUrl}/oauth/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
  });
  user.password = upstream.accounts.alice!;
  documents = await startClientDocuments();
  gateway = await startCapturedGateway(gatewayEnv(port, { OAUTH_CLIENT_ID_ALLOW_LOOPBACK: 'true' }));
});

after(async () => {
  await gateway?.close();
  await documents?.close();
  await upstream?.stop();
  await dagu?.stop();
});

const gatewayEnv = (port: number, extra: Record<string, string> = {}) =>
  builtinGatewayEnv(
    {
      port,
      dagu,
      upstream: {
        issuer: upstream.issuer,
        clientId: UPSTREAM_CLIENT,
        secret: UPSTREAM_SECRET,
        scopes: 'openid',
      },
      caFile: documents.caFile,
      workbookDir,
    },
    extra,
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

/** An authorization request of `clientId` straight at the gateway: its status and JSON answer. */
async function authorizeAs(
  baseUrl: string,
  clientId: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const url = new URL(`${baseUrl}/oauth/authorize`);
  url.search = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: 'http://127.0.0.1:9/oauth/callback',
    scope: 'dagu.read',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  }).toString();
  const response = await fetch(url, { redirect: 'manual' });
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
