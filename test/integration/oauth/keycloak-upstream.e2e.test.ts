// The built-in authorization server (AUTH_SERVER=builtin) with a real Keycloak as its upstream, set up
// as docs/oauth-builtin.md's Keycloak recipe says: one confidential client with the gateway's callback
// as redirect URI and a Group Membership mapper (`groups` in the ID token), no client scopes, audience
// mapper or registration policy for the gateway. The v2 TypeScript SDK client registers with the
// gateway, passes its consent page, signs in on Keycloak's own HTML login form, and reads from the
// real Dagu; the groups claim goes through AUTH_GROUPS_FILE; the workbook step-up needs no edit at
// Keycloak. One Keycloak start for the file (30–90 s on 2 loaded cores).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type CapturedGateway, startCapturedGateway } from '../../support/auth-fixtures.ts';
import { BrowserAgent, GatewayOAuthProvider, readWorkbookAfterStepUp } from '../../support/builtin-as.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { freePort, getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { answerKeycloakPage, type Keycloak, keycloakScript, startKeycloak } from '../../support/keycloak.ts';
import { connectWithOAuth, type OAuthConnection, readDags } from '../../support/oauth-clients.ts';
import { writeSmallWorkbook } from '../../support/workbook-fixtures.ts';

const REALM = 'company';
const CLIENT_ID = 'dagu-mcp-gateway';
const CLIENT_SECRET = randomBytes(24).toString('base64url');
const installed = keycloakScript();
const skip = skipUnlessCI('reason' in installed ? installed.reason : false);

let dagu: TestDagu;
let keycloak: Keycloak;
let gateway: CapturedGateway;
let publicUrl: string;
let dir: string;
const user = { login: 'alice', password: `pw-${randomBytes(9).toString('base64url')}` };
const open: OAuthConnection[] = [];

const decodeJwt = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;

/** The recipe's realm: a user in group `readers`, the gateway's confidential client, its groups mapper. */
function companyRealm(redirectUri: string): Record<string, unknown> {
  return {
    realm: REALM,
    enabled: true,
    sslRequired: 'external',
    groups: [{ name: 'readers' }],
    users: [
      {
        username: user.login,
        enabled: true,
        email: 'alice@example.test',
        emailVerified: true,
        firstName: 'Alice',
        lastName: 'Example',
        credentials: [{ type: 'password', value: user.password, temporary: false }],
        groups: ['/readers'],
      },
    ],
    clients: [
      {
        clientId: CLIENT_ID,
        enabled: true,
        protocol: 'openid-connect',
        publicClient: false,
        clientAuthenticatorType: 'client-secret',
        secret: CLIENT_SECRET,
        standardFlowEnabled: true,
        directAccessGrantsEnabled: false,
        redirectUris: [redirectUri],
        protocolMappers: [
          {
            name: 'groups',
            protocol: 'openid-connect',
            protocolMapper: 'oidc-group-membership-mapper',
            config: {
              'claim.name': 'groups',
              'full.path': 'false',
              'id.token.claim': 'true',
              'access.token.claim': 'false',
              'userinfo.token.claim': 'true',
            },
          },
        ],
      },
    ],
  };
}

function newProvider(agent: BrowserAgent): GatewayOAuthProvider {
  return new GatewayOAuthProvider({
    user,
    agent,
    upstreamOrigin: keycloak.url,
    scope: 'dagu.read',
    clientName: 'builtin-server tests (TypeScript SDK, Keycloak upstream)',
  });
}

describe('the built-in authorization server signing users in at Keycloak', { skip }, () => {
  let agent: BrowserAgent;
  let provider: GatewayOAuthProvider;
  let connection: OAuthConnection;

  before(async () => {
    if ('reason' in installed) return;
    dir = mkdtempSync(join(tmpdir(), 'keycloak-upstream-'));
    await writeSmallWorkbook(join(dir, 'small.xlsx'));
    const groupsFile = join(dir, 'groups.yaml');
    writeFileSync(groupsFile, 'groups:\n  readers: {}\n');
    dagu = await getTestDagu();
    keycloak = await startKeycloak(installed.path);
    console.log(`keycloak: ready in ${keycloak.startupMs} ms at ${keycloak.url}`);
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    await keycloak.importRealm(companyRealm(`${publicUrl}/oauth/callback`));
    gateway = await startCapturedGateway({
      PORT: String(port),
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      PUBLIC_URL: publicUrl,
      AUTH_SERVER: 'builtin',
      OAUTH_UPSTREAM_ISSUER: keycloak.issuer(REALM),
      OAUTH_UPSTREAM_CLIENT_ID: CLIENT_ID,
      OAUTH_UPSTREAM_CLIENT_SECRET: CLIENT_SECRET,
      OAUTH_STATE_DIR: join(dir, 'oauth-state'),
      AUTH_GROUPS_FILE: groupsFile,
      WORKBOOK_ROOTS: dir,
    });
    agent = new BrowserAgent(user, publicUrl, 'allow', answerKeycloakPage);
    provider = newProvider(agent);
    connection = await connectWithOAuth(`${publicUrl}/mcp`, provider);
    open.push(connection);
  });
  after(async () => {
    for (const each of open) await each.close().catch(() => {});
    await gateway?.close();
    await keycloak?.stop();
    await dagu?.stop();
  });

  test("first connect → read: the gateway's consent page, Keycloak's login form, a token of the gateway carrying Keycloak's groups, the read", async () => {
    assert.ok((await readDags(connection.client)).includes(dagu.seed.dags.twoSteps));
    assert.equal(agent.consentPages, 1);
    assert.ok(
      agent.steps.some((step) => step.method === 'POST' && step.url.startsWith(`${keycloak.url}/realms/`)),
      'the user signed in on Keycloak',
    );
    const claims = decodeJwt(provider.tokens()!.access_token);
    assert.equal(claims.iss, publicUrl);
    assert.equal(claims.aud, `${publicUrl}/mcp`);
    assert.equal(claims.scope, 'dagu.read');
    assert.equal(claims.email, 'alice@example.test');
    assert.deepEqual(claims.groups, ['readers']);
    const grant = gateway.auditLines().find((line) => line.event === 'oauth.grant');
    assert.equal(grant?.outcome, 'ok');
  });

  test('step-up to dagu.workbook: the registered client gets it with no edit at Keycloak and no second consent page', async () => {
    const result = await readWorkbookAfterStepUp(connection, provider, join(dir, 'small.xlsx'));
    assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
    assert.deepEqual(String(decodeJwt(provider.tokens()!.access_token).scope).split(' ').sort(), [
      'dagu.read',
      'dagu.workbook',
    ]);
    assert.equal(agent.consentPages, 1);
  });
});
