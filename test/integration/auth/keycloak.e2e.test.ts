// Resource-server mode against a real Keycloak (Maven Central's keycloak-quarkus-dist, installed by
// scripts/keycloak.sh; test/support/keycloak.ts), configured as docs/oauth-keycloak.md says: the
// gateway is given the realm's issuer alone and reads the JWKS URL from Keycloak's OpenID
// configuration; the v2 TypeScript SDK client discovers Keycloak through the gateway's 401, registers
// itself with Keycloak's own anonymous dynamic registration, the user signs in and consents on
// Keycloak's HTML pages, and the read comes from the real Dagu. Then the workbook step-up and a token
// for another resource. One Keycloak start for the file (30–90 s on 2 loaded cores).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Client, UnauthorizedError } from '@modelcontextprotocol/client';
import {
  bearer,
  type CapturedGateway,
  postMcp,
  startCapturedGateway,
  toolCallBody,
} from '../../support/auth-fixtures.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { freePort, getTestDagu, type TestDagu } from '../../support/dagu.ts';
import {
  authorizeWithKeycloak,
  daguRealm,
  type Keycloak,
  keycloakForTests,
  startKeycloak,
} from '../../support/keycloak.ts';
import {
  connectWithOAuth,
  HeadlessOAuthProvider,
  type OAuthConnection,
  readDags,
} from '../../support/oauth-clients.ts';
import { smallWorkbookDir } from '../../support/workbook-fixtures.ts';

const REALM = 'dagu';
/** A realm for the gateway that needs no workbook scope of its own. */
const ONE_SCOPE_REALM = 'dagu-one-scope';
const { kcScript, unavailable } = keycloakForTests();
const skip = skipUnlessCI(unavailable);

let dagu: TestDagu;
let keycloak: Keycloak;
let gateway: CapturedGateway;
let publicUrl: string;
let workbookDir: string;
const user = { login: 'alice', password: `pw-${Date.now().toString(36)}-alice` };
const open: OAuthConnection[] = [];

const decodeJwt = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;

const gatewayEnv = (port: number, issuer: string): Record<string, string> => ({
  PORT: String(port),
  DAGU_URL: dagu.url,
  DAGU_API_BASE: dagu.apiBase,
  PUBLIC_URL: `http://127.0.0.1:${port}`,
  // The issuer alone: the JWKS URL comes from Keycloak's OpenID configuration.
  AUTH_JWT_ISSUER: issuer,
  WORKBOOK_ROOTS: workbookDir,
});

const newProvider = () =>
  new HeadlessOAuthProvider({
    user,
    clientName: 'gateway-tests (TypeScript SDK at Keycloak)',
    userAgent: authorizeWithKeycloak,
  });

async function connect(): Promise<OAuthConnection> {
  const connection = await connectWithOAuth(gateway.mcpUrl, newProvider());
  open.push(connection);
  return connection;
}

const workbookArgs = () => ({ target: 'workbook', path: join(workbookDir, 'small.xlsx') });

interface ToolResult {
  isError?: boolean;
  structuredContent?: { data?: { sheets?: unknown[] } };
}

/**
 * A tool call as an MCP host makes it when the gateway asks for more scope: the SDK sends the user to
 * the authorization server (UnauthorizedError); the code that comes back is exchanged and the call
 * made again. Returns the result, or what came back to the redirect URI when it was an error.
 */
async function callWithStepUp(
  client: Client,
  provider: HeadlessOAuthProvider,
  args: Record<string, unknown>,
): Promise<ToolResult | URLSearchParams> {
  const call = async () => (await client.callTool({ name: 'dagu_read', arguments: args })) as ToolResult;
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  const params = await provider.callbackParams();
  if (params.has('error')) return params;
  const transport = open.find((connection) => connection.client === client)!.transport;
  await transport.finishAuth(params);
  return call();
}

/** The admin view of a registered client: its internal id and its default and optional scopes. */
async function clientScopes(
  clientId: string,
): Promise<{ id: string; default: string[]; optional: string[] }> {
  const response = await keycloak.admin(REALM, `/clients?clientId=${encodeURIComponent(clientId)}`);
  const [client] = (await response.json()) as Array<{
    id: string;
    defaultClientScopes: string[];
    optionalClientScopes: string[];
  }>;
  assert.ok(client, `client ${clientId} is registered`);
  return { id: client.id, default: client.defaultClientScopes, optional: client.optionalClientScopes };
}

/** What an administrator does in the console: Clients → the client → Client scopes → Add (Optional). */
async function addOptionalScope(clientId: string, scopeName: string): Promise<void> {
  const { id } = await clientScopes(clientId);
  const scopes = (await (await keycloak.admin(REALM, '/client-scopes')).json()) as Array<{
    id: string;
    name: string;
  }>;
  const scope = scopes.find((candidate) => candidate.name === scopeName);
  assert.ok(scope, scopeName);
  const response = await keycloak.admin(REALM, `/clients/${id}/optional-client-scopes/${scope.id}`, {
    method: 'PUT',
  });
  assert.equal(response.status, 204);
}

describe('resource-server mode against Keycloak', { skip }, () => {
  before(async () => {
    if (kcScript === undefined) return;
    workbookDir = await smallWorkbookDir('keycloak-workbooks-');
    dagu = await getTestDagu();
    keycloak = await startKeycloak(kcScript);
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    await keycloak.importRealm(
      daguRealm({ realm: REALM, audience: `${publicUrl}/mcp`, users: { [user.login]: user.password } }),
    );
    gateway = await startCapturedGateway(gatewayEnv(port, keycloak.issuer(REALM)), { logLevel: 'info' });
  });
  after(async () => {
    for (const connection of open) await connection.close().catch(() => {});
    await gateway?.close();
    await keycloak?.stop();
    await dagu?.stop();
  });

  test("the gateway, given the issuer alone, reads the JWKS URL from Keycloak's OpenID configuration", async () => {
    const line = gateway
      .logText()
      .split('\n')
      .find((text) => text.includes("JWKS URL read from the issuer's metadata"));
    assert.ok(line, gateway.logText());
    assert.equal(
      (JSON.parse(line) as { jwksUrl: string }).jwksUrl,
      `${keycloak.issuer(REALM)}/protocol/openid-connect/certs`,
    );
    const metadata = (await (
      await fetch(`${gateway.baseUrl}/.well-known/oauth-protected-resource/mcp`)
    ).json()) as Record<string, unknown>;
    assert.deepEqual(metadata.authorization_servers, [keycloak.issuer(REALM)]);
  });

  test('first connect → read: the SDK registers at Keycloak, the user signs in and consents, the read comes from the real Dagu', async () => {
    const { client, provider } = await connect();
    assert.equal(provider.authorizations, 1);
    const names = await readDags(client);
    for (const seeded of [dagu.seed.dags.twoSteps, dagu.seed.dags.parent]) {
      assert.ok(names.includes(seeded), `${seeded} in ${names.join(', ')}`);
    }
    // Keycloak's own registration (anonymous DCR) gave the client its id; the Audience mapper, not the
    // `resource` parameter, put the gateway's resource in `aud`.
    const claims = decodeJwt(provider.stored!.access_token);
    assert.equal(claims.iss, keycloak.issuer(REALM));
    assert.equal(claims.aud, `${publicUrl}/mcp`);
    assert.equal(claims.azp, provider.client?.client_id);
    assert.deepEqual(String(claims.scope).split(' ').sort(), ['dagu.read', 'offline_access']);
    assert.equal(claims.preferred_username, user.login);
  });

  test('step-up to dagu.workbook: Keycloak answers invalid_scope, since anonymous registration pins the client to the scopes it registered with', async () => {
    const { client, provider } = await connect();
    const refused = await callWithStepUp(client, provider, workbookArgs());
    // The SDK met the 403 insufficient_scope and sent the user to Keycloak with the union of scopes;
    // Keycloak refused before any page was shown.
    assert.equal(provider.authorizations, 2);
    const asked = provider.authorizationUrls.at(-1)!.searchParams.get('scope')!.split(' ').sort();
    assert.deepEqual(asked, ['dagu.read', 'dagu.workbook', 'offline_access']);
    assert.ok(refused instanceof URLSearchParams);
    assert.equal(refused.get('error'), 'invalid_scope');
    assert.match(refused.get('error_description') ?? '', /^Invalid scopes: /);
    // Why: the client's optional scopes are exactly what it registered with.
    assert.deepEqual((await clientScopes(provider.client!.client_id)).optional.sort(), [
      'dagu.read',
      'offline_access',
    ]);
    assert.ok(
      gateway.auditLines().some((line) => line.reason === 'insufficient_scope' && line.http_status === 403),
      'the 403 that started the step-up is audited',
    );
  });

  test('step-up to dagu.workbook succeeds once an administrator adds dagu.workbook to the registered client', async () => {
    const { client, provider } = await connect();
    await addOptionalScope(provider.client!.client_id, 'dagu.workbook');
    const result = await callWithStepUp(client, provider, workbookArgs());
    assert.ok(!(result instanceof URLSearchParams), result.toString());
    assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
    assert.ok(Array.isArray(result.structuredContent?.data?.sheets));
    const granted = String(decodeJwt(provider.stored!.access_token).scope).split(' ').sort();
    assert.deepEqual(granted, ['dagu.read', 'dagu.workbook', 'offline_access']);
  });

  test('with AUTH_WORKBOOK_SCOPE=dagu.read a workbook is read on the first connect, no step-up and no edit', async () => {
    const port = await freePort();
    await keycloak.importRealm(
      daguRealm({
        realm: ONE_SCOPE_REALM,
        audience: `http://127.0.0.1:${port}/mcp`,
        users: { [user.login]: user.password },
      }),
    );
    const oneScope = await startCapturedGateway({
      ...gatewayEnv(port, keycloak.issuer(ONE_SCOPE_REALM)),
      AUTH_WORKBOOK_SCOPE: 'dagu.read',
    });
    try {
      const provider = newProvider();
      const connection = await connectWithOAuth(oneScope.mcpUrl, provider);
      open.push(connection);
      const result = await callWithStepUp(connection.client, provider, workbookArgs());
      assert.ok(!(result instanceof URLSearchParams), result.toString());
      assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
      assert.equal(provider.authorizations, 1);
    } finally {
      await oneScope.close();
    }
  });

  test('a token Keycloak issued for another resource is refused (401 wrong_audience)', async () => {
    const { provider } = await connect();
    const token = provider.stored!.access_token;
    // A second gateway of the same issuer: the token names the first one's resource, not this one's.
    const other = await startCapturedGateway(gatewayEnv(await freePort(), keycloak.issuer(REALM)));
    try {
      const response = await postMcp(other.mcpUrl, bearer(token), toolCallBody({ target: 'dags' }));
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      assert.equal(other.auditLines().at(-1)?.reason, 'wrong_audience');
      // The same token is good where it belongs.
      const home = await postMcp(gateway.mcpUrl, bearer(token), toolCallBody({ target: 'dags' }));
      assert.equal(home.status, 200);
    } finally {
      await other.close();
    }
  });
});
