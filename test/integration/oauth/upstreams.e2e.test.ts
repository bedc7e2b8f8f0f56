// The built-in authorization server (AUTH_SERVER=builtin, src/oauth) federating to a real Keycloak
// (Maven Central's keycloak-quarkus-dist, installed by scripts/keycloak.sh; test/support/keycloak.ts),
// on 127.0.0.1, set up as docs/oauth-builtin.md's Keycloak recipe says: one realm, one user in group
// `readers` and ONE ordinary confidential client for the gateway with a Group Membership mapper; no
// registration policy, audience mapper or client scope of the gateway's at Keycloak. The groups claim
// goes through AUTH_GROUPS_FILE. Clients this project does not write go through the gateway's own
// server, its consent page and Keycloak's HTML login form:
// - the v2 TypeScript SDK client, by dynamic registration and by a Client ID Metadata Document served
//   over https on loopback: first connect → read; refresh; step-up to dagu.workbook; a token for
//   another resource refused; a revoked refresh token refused (test/support/builtin-as-rows.ts, the
//   rows plugin.e2e runs with oidc-provider as the upstream);
// - the Python `mcp` SDK (test/support/python/oauth_read.py), by dynamic registration: first connect →
//   read, then a read after its access token expired, which the SDK makes after a refresh grant.
// One Keycloak start for the file (30–90 s on 2 loaded cores).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, type TestContext, test } from 'node:test';
import { type CapturedGateway, startCapturedGateway } from '../../support/auth-fixtures.ts';
import { BrowserAgent, decodeJwt } from '../../support/builtin-as.ts';
import { type BuiltinWorld, builtinClientRows, builtinGatewayEnv } from '../../support/builtin-as-rows.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import {
  type ClientDocuments,
  clientDocument,
  startClientDocuments,
} from '../../support/client-documents.ts';
import { freePort, getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { type Keycloak, keycloakForTests, keycloakPages, startKeycloak } from '../../support/keycloak.ts';
import { runOAuthRead } from '../../support/python-oauth.ts';
import { smallWorkbookDir } from '../../support/workbook-fixtures.ts';

const { kcScript, unavailable } = keycloakForTests();
const skip = skipUnlessCI(unavailable);
const REALM = 'company';
const UPSTREAM_CLIENT = 'dagu-gateway';
const UPSTREAM_SECRET = randomBytes(24).toString('base64url');
/** The shortest access-token lifetime the gateway accepts: the Python client's token expires in the test. */
const SHORT_TTL_S = 30;
const groupsFile = () => join(workbookDir, 'groups.yaml');

let dagu: TestDagu;
let keycloak: Keycloak;
let documents: ClientDocuments;
let workbookDir: string;
/** The TypeScript rows' gateway, and the Python client's (short-lived access tokens). */
let gateway: CapturedGateway;
let shortLived: CapturedGateway;
const user = { login: 'alice', password: randomBytes(12).toString('base64url') };

const gatewayEnv = (port: number, extra: Record<string, string> = {}) =>
  builtinGatewayEnv(
    {
      port,
      dagu,
      upstream: {
        issuer: keycloak.issuer(REALM),
        clientId: UPSTREAM_CLIENT,
        secret: UPSTREAM_SECRET,
        scopes: 'openid profile email',
      },
      caFile: documents.caFile,
      workbookDir,
    },
    {
      // Keycloak's `sub` is a generated id; the user name is what the gateway's identity should read.
      AUTH_JWT_IDENTITY_CLAIM: 'preferred_username',
      OAUTH_CLIENT_ID_ALLOW_LOOPBACK: 'true',
      // Who may sign in, by Keycloak's groups: alice is in `readers`.
      AUTH_GROUPS_FILE: groupsFile(),
      ...extra,
    },
  );

/**
 * The operator's part at Keycloak, as docs/oauth-builtin.md's Keycloak recipe does it: a realm with a
 * user in group `readers` and ONE confidential client for the gateway, whose redirect URIs are the
 * gateways' callbacks and whose Group Membership mapper puts `groups` in the ID token. No client
 * scope, audience mapper or registration policy for the gateway: everything else is Keycloak's default.
 */
const companyRealm = (gatewayUrls: readonly string[]): Record<string, unknown> => ({
  realm: REALM,
  enabled: true,
  sslRequired: 'external',
  groups: [{ name: 'readers' }],
  users: [
    {
      username: user.login,
      enabled: true,
      email: 'alice@example.com',
      emailVerified: true,
      firstName: 'Alice',
      lastName: 'Tester',
      credentials: [{ type: 'password', value: user.password, temporary: false }],
      groups: ['/readers'],
    },
  ],
  clients: [
    {
      clientId: UPSTREAM_CLIENT,
      enabled: true,
      protocol: 'openid-connect',
      publicClient: false,
      clientAuthenticatorType: 'client-secret',
      secret: UPSTREAM_SECRET,
      standardFlowEnabled: true,
      directAccessGrantsEnabled: false,
      redirectUris: gatewayUrls.map((url) => `${url}/oauth/callback`),
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
});

describe('the built-in server federating to Keycloak (one confidential client, no registration there)', {
  skip,
}, () => {
  before(async () => {
    if (kcScript === undefined) return;
    workbookDir = await smallWorkbookDir('builtin-keycloak-');
    dagu = await getTestDagu();
    keycloak = await startKeycloak(kcScript);
    documents = await startClientDocuments();
    const [port, shortPort] = [await freePort(), await freePort()];
    await keycloak.importRealm(companyRealm([`http://127.0.0.1:${port}`, `http://127.0.0.1:${shortPort}`]));
    writeFileSync(groupsFile(), 'groups:\n  readers: {}\n');
    gateway = await startCapturedGateway(gatewayEnv(port));
    shortLived = await startCapturedGateway(
      gatewayEnv(shortPort, { OAUTH_ACCESS_TOKEN_TTL_S: String(SHORT_TTL_S) }),
    );
  });
  after(async () => {
    await gateway?.close();
    await shortLived?.close();
    await documents?.close();
    await keycloak?.stop();
    await dagu?.stop();
  });

  const world = (): BuiltinWorld => ({
    publicUrl: gateway.baseUrl,
    upstreamOrigin: keycloak.url,
    user,
    upstreamPages: keycloakPages,
    identity: user.login,
    email: 'alice@example.com',
    groups: ['readers'],
    seededDag: dagu.seed.dags.twoSteps,
    workbookPath: join(workbookDir, 'small.xlsx'),
    auditLines: () => gateway.auditLines(),
  });

  builtinClientRows('TypeScript SDK client, dynamic registration, Keycloak upstream', world, {
    kind: 'dynamic',
  });

  builtinClientRows(
    'TypeScript SDK client, Client ID Metadata Document served over https on loopback, Keycloak upstream',
    world,
    { kind: 'metadata document', url: () => documents.serve('/clients/sdk.json', clientDocument) },
  );

  describe('Python mcp SDK client, dynamic registration, Keycloak upstream', () => {
    test('first connect → read through the consent page and Keycloak; after the access token expired, a refresh grant and a second read with the new token', async (t: TestContext) => {
      const python = process.env.MCP_CLIENT_PYTHON;
      const noPython = 'no Python MCP SDK (scripts/python-fixtures.sh mcp-client; the runner prepares it)';
      if (python === undefined) {
        t.skip(skipUnlessCI(noPython));
        return;
      }
      const publicUrl = shortLived.baseUrl;
      const agent = new BrowserAgent(user, publicUrl, 'allow', keycloakPages);
      const result = await runOAuthRead(
        python,
        [`${publicUrl}/mcp`, '--browser-stdio', '--read-after-expiry'],
        { OAUTH_CLIENT_NAME: 'builtin-server tests (Python SDK)' },
        async (event) => {
          assert.equal(event.event, 'authorize');
          return (await agent.authorize(String(event.url), keycloak.url)).toString();
        },
      );
      assert.deepEqual(result.failures, []);
      assert.equal(result.reads.length, 2);
      for (const read of result.reads) {
        assert.equal(read.isError, false, JSON.stringify(read.error));
        assert.ok(read.dags.includes(dagu.seed.dags.twoSteps));
      }
      // One sign-in, one consent page: the second token came from the refresh token.
      assert.equal(result.authorizations, 1);
      assert.equal(agent.consentPages, 1);
      assert.equal(result.accessTokens.length, 2);
      const [first, second] = result.accessTokens as [string, string];
      assert.notEqual(second, first);
      for (const token of [first, second]) {
        const claims = decodeJwt(token);
        assert.equal(claims.aud, `${publicUrl}/mcp`);
        assert.equal(claims.sub, user.login);
      }
      const toGateway = result.requests.filter(({ url }) => url.startsWith(publicUrl));
      assert.deepEqual(
        toGateway.filter(({ url }) => url === `${publicUrl}/oauth/token`).map(({ status }) => status),
        [200, 200],
      );
      assert.equal(toGateway.filter(({ url }) => url === `${publicUrl}/mcp`).at(-1)?.bearer, second);
      // The gateway's audit: the code grant and then the refresh grant, for the same user.
      assert.deepEqual(
        shortLived
          .auditLines()
          .filter((line) => line.event === 'oauth.token' && line.identity === user.login)
          .map((line) => line.reason),
        ['authorization_code', 'refresh_token'],
      );
    });
  });
});
