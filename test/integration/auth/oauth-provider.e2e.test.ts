// OAuth end to end against a real authorization server (oidc-provider, test/support/oidc-provider.ts):
// MCP clients this project does not write (the v2 TypeScript SDK with its OAuthClientProvider, the
// Python SDK's mcp.client.auth, the SDK's client-credentials provider, MCP Inspector's CLI) find the
// provider through the gateway's 401 and protected-resource metadata, register, get a token bound to
// the gateway with RFC 8707 `resource`, and read from the real Dagu. Then: expiry and refresh, a token
// for another resource, a token without the read scope, the workbook step-up, a revoked client,
// signing-key rotation (last: it changes the keys every later token is signed with). The Python SDK
// client (test/support/python/oauth_read.py) goes through each of these too; its tests assert the HTTP
// exchanges it makes, since what it does on a refusal is the SDK's own choice.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, type TestContext, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import {
  Client,
  ClientCredentialsProvider,
  OAuthError,
  refreshAuthorization,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { testTools } from '../../../scripts/test-tools.mjs';
import {
  bearer,
  type CapturedGateway,
  metricSum,
  postMcp,
  scrape,
  startCapturedGateway,
  tempDir,
  toolCallBody,
} from '../../support/auth-fixtures.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { freePort, getTestDagu, type TestDagu } from '../../support/dagu.ts';
import {
  connectWithOAuth,
  HeadlessOAuthProvider,
  type OAuthConnection,
  readDags,
} from '../../support/oauth-clients.ts';
import {
  type AuthorizationServer,
  DAGU_SCOPES,
  startAuthorizationServer,
} from '../../support/oidc-provider.ts';
import { type PythonResult, runOAuthRead } from '../../support/python-oauth.ts';
import { runToEnd } from '../../support/run.ts';
import { writeSmallWorkbook } from '../../support/workbook-fixtures.ts';

/** The gateway's defaults (src/auth/jwt.ts, src/auth/jwks.ts): `exp` skew, and one JWKS fetch per 30 s. */
const GATEWAY_CLOCK_TOLERANCE_MS = 30_000;
const JWKS_COOLDOWN_MS = 30_000;
/** Registered `client_name` of the client whose access tokens live SHORT_TTL seconds. */
const SHORT_LIVED = 'gateway-tests (short-lived)';
const SHORT_TTL = 3;
const OTHER_RESOURCE = 'https://other.example/mcp';

let dagu: TestDagu;
let as: AuthorizationServer;
let gateway: CapturedGateway;
let publicUrl: string;
let resource: string;
let workbookDir: string;
const user = { login: 'alice', password: '' };
const open: OAuthConnection[] = [];

before(async () => {
  workbookDir = mkdtempSync(join(tmpdir(), 'oauth-workbooks-'));
  await writeSmallWorkbook(join(workbookDir, 'small.xlsx'));
  dagu = await getTestDagu();
  as = await startAuthorizationServer({
    accessTokenTTL: ({ clientName }) => (clientName === SHORT_LIVED ? SHORT_TTL : 600),
    // Clients may step up to the workbook scope after registering with the read scope alone.
    pinClientScopes: false,
  });
  user.password = as.accounts.alice!;
  // The resource URI names the gateway's port, so the port is chosen before either starts.
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  resource = `${publicUrl}/mcp`;
  as.addResourceServer(resource, { scope: DAGU_SCOPES.join(' ') });
  as.addResourceServer(OTHER_RESOURCE, { scope: DAGU_SCOPES.join(' ') });
  gateway = await startCapturedGateway(gatewayEnv(port));
});
after(async () => {
  for (const connection of open) await connection.close().catch(() => {});
  await gateway?.close();
  await as?.stop();
  await dagu?.stop();
});

const gatewayEnv = (port: number): Record<string, string> => ({
  PORT: String(port),
  DAGU_URL: dagu.url,
  DAGU_API_BASE: dagu.apiBase,
  PUBLIC_URL: publicUrl,
  AUTH_JWKS_URL: as.jwksUrl,
  AUTH_JWT_ISSUER: as.issuer,
  // No AUTH_JWT_AUDIENCE: the audience is this resource, <PUBLIC_URL>/mcp.
  WORKBOOK_ROOTS: workbookDir,
});

// ---- helpers ----------------------------------------------------------------------------------

interface DecodedJwt {
  header: { kid?: string; alg?: string; typ?: string };
  payload: { aud?: string | string[]; scope?: string; sub?: string; client_id?: string; exp?: number };
}

const decodeJwt = (token: string): DecodedJwt => {
  const [header = '', payload = ''] = token.split('.');
  const part = (segment: string) => JSON.parse(Buffer.from(segment, 'base64url').toString()) as never;
  return { header: part(header), payload: part(payload) };
};

interface MachineClient {
  client_id: string;
  client_secret: string;
}

/** Registers a confidential machine client through dynamic registration (RFC 7591). */
async function registerMachineClient(scope = DAGU_SCOPES.join(' ')): Promise<MachineClient> {
  const response = await fetch(as.registrationEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'gateway-tests machine agent',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope,
    }),
  });
  const body = (await response.json()) as MachineClient;
  assert.equal(response.status, 201, JSON.stringify(body));
  return body;
}

/** The client-credentials grant at the token endpoint: the HTTP status and the JSON answer. */
async function clientCredentials(
  client: MachineClient,
  params: { resource: string; scope?: string },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const basic = Buffer.from(
    `${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`,
  ).toString('base64');
  const response = await fetch(as.tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      resource: params.resource,
      scope: params.scope ?? 'dagu.read',
    }).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function machineToken(client: MachineClient, params: { resource?: string; scope?: string } = {}) {
  const { status, body } = await clientCredentials(client, { resource, ...params });
  assert.equal(status, 200, JSON.stringify(body));
  return body.access_token as string;
}

async function connectOAuth(clientName?: string): Promise<OAuthConnection> {
  const provider = new HeadlessOAuthProvider({
    user,
    scope: 'dagu.read',
    ...(clientName ? { clientName } : {}),
  });
  const connection = await connectWithOAuth(gateway.mcpUrl, provider);
  open.push(connection);
  return connection;
}

/** Resolves at `epochMs` (a deadline the test computed from a token's `exp` or a fetch time). */
const until = (epochMs: number) => delay(Math.max(0, epochMs - Date.now()));

/** Runs a program with this process's environment and `env` on top (the provider and gateway live here). */
const run = (command: string, args: readonly string[], env: Record<string, string> = {}) =>
  runToEnd(command, args, { env: { ...process.env, ...env } });

interface PythonOptions {
  clientName?: string;
  /** The first read is the workbook target at this path instead of `dags`. */
  workbook?: string;
  /** Per authorization, the scopes the user approves at consent; null: every requested one. */
  approvals?: Array<string | null>;
  /** An access token the client's storage holds before its first request. */
  accessToken?: string;
  /** Called after the first read, with the registered client_id; the client reads on after it. */
  paused?: (clientId: string) => Promise<void>;
  readAfterExpiry?: boolean;
  /** A connect that failed is made once more with the same provider and storage. */
  reconnect?: boolean;
}

/**
 * Runs test/support/python/oauth_read.py (the Python MCP SDK's OAuth client). Undefined when there is
 * no Python MCP SDK: the test is skipped then, and fails under CI.
 */
async function pythonRead(t: TestContext, options: PythonOptions = {}): Promise<PythonResult | undefined> {
  const python = process.env.MCP_CLIENT_PYTHON;
  if (python === undefined) {
    const reason = 'no Python MCP SDK (scripts/python-fixtures.sh mcp-client; the test runner prepares it)';
    t.skip(skipUnlessCI(reason));
    return undefined;
  }
  const args = [
    gateway.mcpUrl,
    ...(options.workbook ? ['--workbook', options.workbook] : []),
    ...(options.paused ? ['--pause'] : []),
    ...(options.readAfterExpiry ? ['--read-after-expiry'] : []),
    ...(options.reconnect ? ['--reconnect'] : []),
  ];
  const env = {
    OAUTH_LOGIN: user.login,
    OAUTH_PASSWORD: user.password,
    ...(options.clientName ? { OAUTH_CLIENT_NAME: options.clientName } : {}),
    ...(options.approvals ? { OAUTH_APPROVALS: JSON.stringify(options.approvals) } : {}),
    ...(options.accessToken ? { OAUTH_ACCESS_TOKEN: options.accessToken } : {}),
  };
  // The script pauses once (--pause), after its first read; the answer is an empty line.
  return runOAuthRead(python, args, env, async ({ clientId }) => {
    await options.paused?.(String(clientId));
    return '';
  });
}

/** The audit's refusals with this reason, oldest first. */
const auditRefusals = (reason: string) => gateway.auditLines().filter((line) => line.reason === reason);

/** The Python client's HTTP exchanges as `METHOD URL STATUS`, the gateway's origin as GW, the provider's as AS. */
const exchanges = (result: PythonResult, from = 0): string[] =>
  result.requests
    .slice(from)
    .map(
      ({ method, url, status }) =>
        `${method} ${url.replace(publicUrl, 'GW').replace(as.issuer, 'AS')} ${status}`,
    );

/** The discovery and registration of a first connect, after the gateway's 401. */
const DISCOVER_AND_REGISTER = [
  'GET GW/.well-known/oauth-protected-resource/mcp 200',
  'GET AS/.well-known/oauth-authorization-server 200',
  'POST AS/reg 201',
];

// ---- discovery and first connects -------------------------------------------------------------

describe('discovery', () => {
  test('the 401 points at the metadata, which names the provider; the provider offers registration, PKCE S256 and the grants', async () => {
    const refused = await postMcp(gateway.mcpUrl);
    assert.equal(refused.status, 401);
    const challenge = refused.headers.get('www-authenticate') ?? '';
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    assert.equal(metadataUrl, `${publicUrl}/.well-known/oauth-protected-resource/mcp`);
    const metadata = (await (await fetch(metadataUrl!)).json()) as Record<string, unknown>;
    assert.equal(metadata.resource, resource);
    assert.deepEqual(metadata.authorization_servers, [as.issuer]);

    const server = (await (await fetch(`${as.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    assert.equal(server.issuer, as.issuer);
    assert.equal(server.registration_endpoint, as.registrationEndpoint);
    assert.deepEqual(server.code_challenge_methods_supported, ['S256']);
    for (const grant of ['authorization_code', 'refresh_token', 'client_credentials']) {
      assert.ok((server.grant_types_supported as string[]).includes(grant), grant);
    }
    for (const scope of ['offline_access', ...DAGU_SCOPES]) {
      assert.ok((server.scopes_supported as string[]).includes(scope), scope);
    }
  });

  test('the protected-resource metadata lists the scopes the gateway enforces', async () => {
    const metadata = (await (
      await fetch(`${publicUrl}/.well-known/oauth-protected-resource/mcp`)
    ).json()) as Record<string, unknown>;
    assert.deepEqual(metadata.scopes_supported, [...DAGU_SCOPES]);
  });
});

describe('first connect through discovery, then a read', () => {
  test('the TypeScript SDK client registers, logs the user in, gets a token for the gateway and reads', async () => {
    const { client, provider } = await connectOAuth();
    assert.equal(provider.authorizations, 1, 'one trip through login and consent');
    assert.ok(provider.client?.client_id, 'registered dynamically');
    const tokens = provider.tokens();
    assert.ok(tokens?.refresh_token, 'offline_access gave a refresh token');
    const { header, payload } = decodeJwt(tokens.access_token);
    assert.equal(header.kid, as.currentKid());
    assert.equal(header.typ, 'at+jwt');
    assert.equal(payload.aud, resource, 'bound to the gateway by the resource indicator');
    assert.equal(payload.sub, 'alice');
    assert.ok(payload.scope?.split(' ').includes('dagu.read'), payload.scope);
    assert.ok((await readDags(client)).includes(dagu.seed.dags.twoSteps));
  });

  test('the Python SDK client does the same', async (t) => {
    const result = await pythonRead(t);
    if (result === undefined) return;
    assert.deepEqual(result.failures, []);
    assert.deepEqual(result.tools, ['dagu_read']);
    assert.equal(result.authorizations, 1);
    const read = result.reads[0];
    assert.ok(read, 'one read');
    assert.equal(read.isError, false, JSON.stringify(read.error));
    assert.ok(read.dags.includes(dagu.seed.dags.twoSteps));
    const { payload } = decodeJwt(result.accessTokens.at(-1)!);
    assert.equal(payload.aud, resource);
    assert.equal(payload.sub, 'alice');
    assert.ok(result.refreshToken, 'offline_access gave a refresh token');
  });

  test('a machine agent with the client-credentials grant reads, through the SDK and with a raw Bearer token', async () => {
    const machine = await registerMachineClient();
    const client = new Client(
      { name: 'gateway-oauth-tests machine', version: '1.0.0' },
      {
        versionNegotiation: { mode: { pin: '2026-07-28' } },
      },
    );
    const authProvider = new ClientCredentialsProvider({
      clientId: machine.client_id,
      clientSecret: machine.client_secret,
      scope: 'dagu.read',
      // Its secret goes only to this issuer, whatever a resource's metadata names.
      expectedIssuer: as.issuer,
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.mcpUrl), { authProvider }));
    try {
      assert.ok((await readDags(client)).includes(dagu.seed.dags.twoSteps));
    } finally {
      await client.close();
    }

    const token = await machineToken(machine);
    const { payload } = decodeJwt(token);
    assert.equal(payload.aud, resource);
    assert.equal(payload.sub, machine.client_id, 'a client-credentials token names the client');
    const answer = await postMcp(gateway.mcpUrl, bearer(token));
    assert.equal(answer.status, 200, answer.text);
  });
});

// ---- refusals ---------------------------------------------------------------------------------

describe('refusals', () => {
  test('a token the provider issued for another resource is refused as wrong_audience', async () => {
    const machine = await registerMachineClient();
    const token = await machineToken(machine, { resource: OTHER_RESOURCE });
    assert.equal(decodeJwt(token).payload.aud, OTHER_RESOURCE);
    const before = metricSum((await scrape(gateway.baseUrl)).samples, 'mcp_gateway_auth_failures_total', {
      reason: 'wrong_audience',
    });
    const refused = await postMcp(gateway.mcpUrl, bearer(token));
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    const denied = gateway.auditLines().filter((line) => line.event === 'mcp.request_denied');
    assert.equal(denied.at(-1)?.reason, 'wrong_audience');
    const afterCount = metricSum((await scrape(gateway.baseUrl)).samples, 'mcp_gateway_auth_failures_total', {
      reason: 'wrong_audience',
    });
    assert.equal(afterCount, before + 1);
  });

  test('a token without the read scope gets 403 insufficient_scope naming dagu.read (step-up)', async () => {
    const machine = await registerMachineClient();
    const token = await machineToken(machine, { scope: 'dagu.workbook' });
    assert.equal(decodeJwt(token).payload.scope, 'dagu.workbook');
    const refused = await postMcp(gateway.mcpUrl, bearer(token), toolCallBody({ target: 'dags' }));
    assert.equal(refused.status, 403, refused.text.slice(0, 300));
    const challenge = refused.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /^Bearer /);
    assert.match(challenge, /error="insufficient_scope"/);
    assert.match(challenge, /scope="dagu\.read"/);
  });

  test('the SDK client steps up: a workbook read with dagu.read alone gets 403, re-authorizes with dagu.workbook, reads', async () => {
    const { client, transport, provider } = await connectOAuth();
    assert.equal(decodeJwt((await provider.tokens())!.access_token).payload.scope, 'dagu.read');
    const args = { target: 'workbook', path: join(workbookDir, 'small.xlsx') };
    const refusalsBefore = gateway.auditLines().filter((line) => line.reason === 'insufficient_scope').length;
    // The SDK meets the 403 insufficient_scope, asks for the union of scopes and sends the user agent.
    await assert.rejects(client.callTool({ name: 'dagu_read', arguments: args }), UnauthorizedError);
    await transport.finishAuth(await provider.callbackParams());
    const result = (await client.callTool({ name: 'dagu_read', arguments: args })) as {
      isError?: boolean;
      structuredContent?: { data?: { sheets?: unknown[] } };
    };
    assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
    assert.ok(Array.isArray(result.structuredContent?.data?.sheets));
    const granted = decodeJwt((await provider.tokens())!.access_token).payload.scope?.split(' ') ?? [];
    assert.deepEqual(granted.sort(), ['dagu.read', 'dagu.workbook']);
    const refusals = gateway.auditLines().filter((line) => line.reason === 'insufficient_scope');
    assert.equal(refusals.length, refusalsBefore + 1);
    assert.equal(refusals.at(-1)?.http_status, 403);
  });

  test('a revoked client gets no more tokens and its refresh fails; its live JWT stays valid until exp', async () => {
    const machine = await registerMachineClient();
    const machineLive = await machineToken(machine);
    const { provider } = await connectOAuth();
    const userLive = provider.tokens()!;

    await as.revokeClient(machine.client_id);
    await as.revokeClient(provider.client!.client_id);

    const refused = await clientCredentials(machine, { resource });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, 'invalid_client');
    await assert.rejects(
      refreshAuthorization(as.issuer, {
        clientInformation: provider.client!,
        refreshToken: userLive.refresh_token!,
        resource: new URL(resource),
      }),
      (error: unknown) => error instanceof OAuthError && error.code === 'invalid_client',
    );
    // The gateway verifies JWTs locally (no introspection): what was issued before the revocation
    // is accepted until it expires, which is why access tokens are short-lived.
    assert.equal((await postMcp(gateway.mcpUrl, bearer(machineLive))).status, 200);
    assert.equal((await postMcp(gateway.mcpUrl, bearer(userLive.access_token))).status, 200);
  });

  test('Python SDK client, authorization code, holding a client-credentials token for another resource: 401 wrong_audience; it discovers, registers, authorizes and reads', async (t) => {
    const other = await machineToken(await registerMachineClient(), { resource: OTHER_RESOURCE });
    const denied = auditRefusals('wrong_audience').length;
    const result = await pythonRead(t, { accessToken: other });
    if (result === undefined) return;
    assert.deepEqual(result.failures, []);
    const [first] = result.requests;
    assert.equal(first?.bearer, other, 'the stored token was presented first');
    assert.match(first?.challenge ?? '', /error="invalid_token"/);
    assert.equal(auditRefusals('wrong_audience').length, denied + 1);
    assert.equal(auditRefusals('wrong_audience').at(-1)?.http_status, 401);
    // A 401 for a token it holds sends the SDK through the whole flow again (it has no refresh token
    // here; with one it would not try it either: oauth2.py runs the authorization on every 401).
    assert.deepEqual(exchanges(result).slice(0, 6), [
      'POST GW/mcp 401',
      ...DISCOVER_AND_REGISTER,
      'POST AS/token 200',
      'POST GW/mcp 200',
    ]);
    assert.equal(result.authorizations, 1);
    assert.equal(result.accessTokens.length, 1);
    const token = result.accessTokens[0]!;
    assert.equal(decodeJwt(token).payload.aud, resource);
    for (const request of result.requests.slice(5)) assert.equal(request.bearer, token);
    assert.equal(result.reads[0]?.isError, false, JSON.stringify(result.reads[0]?.error));
    assert.ok(result.reads[0]?.dags.includes(dagu.seed.dags.twoSteps));
  });

  test('Python SDK client, authorization code, the user unticks dagu.read: the 403 insufficient_scope after its first authorization fails that connect; the next connect steps up with the union and reads', async (t) => {
    const denied = auditRefusals('insufficient_scope').length;
    const result = await pythonRead(t, { approvals: ['offline_access', null], reconnect: true });
    if (result === undefined) return;
    // The SDK answers a 403 only when it is the first answer to a request: the retry after the
    // authorization a 401 started goes back to the transport, which reports an MCP error.
    assert.deepEqual(result.failures, [
      { step: 'initialize', type: 'MCPError', code: -32603, message: 'Server returned an error response' },
    ]);
    assert.deepEqual(exchanges(result).slice(0, 9), [
      'POST GW/mcp 401',
      ...DISCOVER_AND_REGISTER,
      'POST AS/token 200',
      'POST GW/mcp 403',
      // The second connect, same provider and storage: step-up without discovery.
      'POST GW/mcp 403',
      'POST AS/token 200',
      'POST GW/mcp 200',
    ]);
    for (const index of [5, 6]) {
      const challenge = result.requests[index]?.challenge ?? '';
      assert.match(challenge, /error="insufficient_scope"/);
      assert.match(challenge, /scope="dagu\.read"/);
    }
    assert.equal(auditRefusals('insufficient_scope').length, denied + 2);
    assert.equal(auditRefusals('insufficient_scope').at(-1)?.http_status, 403);
    const [unticked, stepUp] = result.accessTokens.map((token) => decodeJwt(token).payload);
    assert.equal(unticked?.scope, undefined, 'no resource scope was granted');
    assert.equal(unticked?.aud, resource);
    assert.equal(stepUp?.scope, 'dagu.read');
    // The step-up asks for the scope it asked for before, with the challenged one (the same here).
    assert.deepEqual(
      result.authorizationRequests.map(({ scope, prompt }) => ({ scope, prompt })),
      [
        { scope: 'dagu.read offline_access', prompt: 'consent' },
        { scope: 'dagu.read offline_access', prompt: 'consent' },
      ],
    );
    assert.equal(result.reads[0]?.isError, false, JSON.stringify(result.reads[0]?.error));
    assert.ok(result.reads[0]?.dags.includes(dagu.seed.dags.twoSteps));
  });

  test('Python SDK client, authorization code with dagu.read, workbook read: 403 naming dagu.read dagu.workbook; it steps up (no new discovery, union of scopes, consent) and reads', async (t) => {
    const denied = auditRefusals('insufficient_scope').length;
    const result = await pythonRead(t, { workbook: join(workbookDir, 'small.xlsx') });
    if (result === undefined) return;
    assert.deepEqual(result.failures, []);
    const refused = result.requests.findIndex((request) => request.status === 403);
    assert.match(
      result.requests[refused]?.challenge ?? '',
      /scope="dagu\.read dagu\.workbook", error="insufficient_scope"/,
    );
    // Then the client ends the session its initialize was given: the gateway keeps none and answers 405.
    assert.deepEqual(exchanges(result, refused), [
      'POST GW/mcp 403',
      'POST AS/token 200',
      'POST GW/mcp 200',
      'DELETE GW/mcp 405',
    ]);
    assert.equal(auditRefusals('insufficient_scope').length, denied + 1);
    assert.equal(result.authorizations, 2);
    assert.deepEqual(result.authorizationRequests[1], {
      scope: 'dagu.read offline_access dagu.workbook',
      resource,
      prompt: 'consent',
    });
    const scopes = result.accessTokens.map((token) => decodeJwt(token).payload.scope);
    assert.deepEqual(scopes, ['dagu.read', 'dagu.read dagu.workbook']);
    assert.equal(result.reads[0]?.isError, false, JSON.stringify(result.reads[0]?.error));
    assert.ok((result.reads[0]?.sheets ?? 0) > 0, 'the workbook read returned its sheets');
  });

  test('Python SDK client, authorization code, its client revoked at the provider: the refresh gets 401; it re-authorizes with the revoked client_id, the provider refuses (invalid_client) and the call fails with the redirect handler’s error', async (t) => {
    const providerErrors = as.errors().length;
    const result = await pythonRead(t, {
      clientName: SHORT_LIVED,
      readAfterExpiry: true,
      paused: (clientId) => as.revokeClient(clientId),
    });
    if (result === undefined) return;
    assert.equal(result.reads.length, 1, 'the read before the revocation');
    assert.equal(result.reads[0]?.isError, false);
    assert.equal(result.failures.length, 1);
    const [failure] = result.failures;
    assert.equal(failure?.step, 'read after expiry');
    assert.equal(failure?.type, 'RuntimeError', 'raised by the redirect handler (the headless user)');
    assert.match(
      failure?.message ?? '',
      /^authorization stopped at \/auth: HTTP 400 .*"error":"invalid_client"/,
    );
    const refresh = result.requests.findIndex(
      (request) => request.url === as.tokenEndpoint && request.status === 401,
    );
    assert.ok(refresh > 0, 'the refresh was refused');
    // The SDK drops its tokens, sends the request without one, and on the 401 discovers again and
    // authorizes with the client it has: no new registration.
    assert.deepEqual(exchanges(result, refresh), [
      'POST AS/token 401',
      'POST GW/mcp 401',
      'GET GW/.well-known/oauth-protected-resource/mcp 200',
      'GET AS/.well-known/oauth-authorization-server 200',
    ]);
    assert.equal(result.requests[refresh + 1]?.bearer, null);
    assert.equal(result.authorizations, 2);
    assert.equal(result.accessTokens.length, 1, 'no token after the revocation');
    assert.deepEqual(as.errors().slice(providerErrors), ['grant.error: invalid_client']);
  });
});

// ---- MCP Inspector ----------------------------------------------------------------------------

test('MCP Inspector CLI reads through the gateway with a token from the provider', async () => {
  const tools = testTools() as { node22: string; inspector: string };
  const token = await machineToken(await registerMachineClient());
  const { code, stdout, stderr } = await run(
    tools.node22,
    [
      tools.inspector,
      '--cli',
      gateway.mcpUrl,
      '--transport',
      'http',
      '--header',
      `Authorization: Bearer ${token}`,
      '--method',
      'tools/call',
      '--tool-name',
      'dagu_read',
      '--tool-arg',
      'target=dags',
    ],
    { HOME: tempDir('inspector-home-') },
  );
  assert.equal(code, 0, `${stdout.slice(-1000)}\n${stderr.slice(-2000)}`);
  const result = JSON.parse(stdout) as {
    isError?: boolean;
    structuredContent?: { data?: { items?: Array<{ name: string }> } };
  };
  assert.notEqual(result.isError, true, stdout);
  const names = (result.structuredContent?.data?.items ?? []).map((item) => item.name);
  assert.ok(names.includes(dagu.seed.dags.twoSteps), stdout.slice(0, 500));
});

// ---- expiry, refresh, rotation (these wait on the clock) --------------------------------------

describe('token lifetime and signing keys', () => {
  test('the Python SDK refreshes an expired access token before its next request, in the same session', async (t) => {
    const result = await pythonRead(t, { clientName: SHORT_LIVED, readAfterExpiry: true });
    if (result === undefined) return;
    assert.deepEqual(result.failures, []);
    assert.equal(result.reads.length, 2);
    for (const read of result.reads) assert.equal(read.isError, false, JSON.stringify(read.error));
    assert.equal(result.authorizations, 1, 'no second login');
    assert.ok(result.accessTokens.length >= 2, 'the token was refreshed');
    assert.equal(new Set(result.accessTokens).size, result.accessTokens.length);
    for (const token of result.accessTokens) assert.equal(decodeJwt(token).payload.aud, resource);
  });

  test('an access token expires mid-use: the SDK refreshes it and the same client reads on', async () => {
    const { client, provider } = await connectOAuth(SHORT_LIVED);
    assert.ok((await readDags(client)).length > 0);
    const first = provider.tokens()!;
    const exp = decodeJwt(first.access_token).payload.exp!;
    assert.ok(exp - Date.now() / 1000 <= SHORT_TTL + 1, 'the provider applied the short lifetime');

    // The gateway accepts `exp` up to its clock tolerance late; after that the token is refused.
    await until(exp * 1000 + GATEWAY_CLOCK_TOLERANCE_MS + 1000);
    const expired = await postMcp(gateway.mcpUrl, bearer(first.access_token));
    assert.equal(expired.status, 401);
    assert.equal(gateway.auditLines().at(-1)?.reason, 'expired');
    const expiredRefusals = () => gateway.auditLines().filter((line) => line.reason === 'expired').length;
    const refusedBefore = expiredRefusals();

    // The same client, same transport: its request is refused (401), the SDK uses its refresh token
    // and sends the request again.
    assert.ok((await readDags(client)).length > 0);
    assert.equal(expiredRefusals(), refusedBefore + 1, 'the client presented the expired token once');
    const refreshed = provider.tokens()!;
    assert.notEqual(refreshed.access_token, first.access_token);
    assert.notEqual(refreshed.refresh_token, first.refresh_token, 'a public client’s refresh token rotates');
    assert.equal(provider.authorizations, 1, 'no second login');
    assert.equal(decodeJwt(refreshed.access_token).payload.aud, resource);
  });

  test('after a key rotation the gateway refetches the JWKS for the new kid; the old key stays published', async (t) => {
    const machine = await registerMachineClient();
    const before = await machineToken(machine);
    const oldKid = as.currentKid();
    // An unknown kid makes the gateway fetch the set again, at most once per cooldown.
    await until((as.jwksFetches().at(-1) ?? 0) + JWKS_COOLDOWN_MS + 100);
    const fetches = as.jwksFetches().length;
    let newKid: string | undefined;
    const rotate = () => {
      newKid = as.rotateKeys();
      assert.notEqual(newKid, oldKid);
      assert.deepEqual(as.publishedKids(), [newKid, oldKid]);
    };

    await t.test(
      'Python SDK client, authorization code, refresh across the rotation: the refreshed token carries the new kid and reads',
      async (st) => {
        // Authorized and read before the rotation; the provider rotates while the client waits, and
        // its next read (after its token expired) refreshes first.
        const result = await pythonRead(st, {
          clientName: SHORT_LIVED,
          readAfterExpiry: true,
          paused: async () => rotate(),
        });
        if (result === undefined) return;
        assert.deepEqual(result.failures, []);
        for (const read of result.reads) assert.equal(read.isError, false, JSON.stringify(read.error));
        assert.equal(result.reads.length, 2);
        assert.equal(result.authorizations, 1, 'no second login');
        const kids = result.accessTokens.map((token) => decodeJwt(token).header.kid);
        assert.deepEqual(kids, [oldKid, newKid]);
        assert.equal(as.jwksFetches().length, fetches + 1, 'one fetch for the unknown kid');
      },
    );
    // Without a Python SDK (the subtest skipped) the rotation happens here.
    if (newKid === undefined) rotate();

    const after = await machineToken(machine);
    assert.equal(decodeJwt(after).header.kid, newKid);
    const accepted = await postMcp(gateway.mcpUrl, bearer(after));
    assert.equal(accepted.status, 200, accepted.text);
    assert.equal(as.jwksFetches().length, fetches + 1, 'one fetch for the unknown kid');
    assert.equal((await postMcp(gateway.mcpUrl, bearer(before))).status, 200, 'the old key still verifies');
  });

  test('a key dropped from the JWKS no longer verifies at a gateway that fetched the set since', async () => {
    const machine = await registerMachineClient();
    const signedWithPrevious = await machineToken(machine);
    const kid = as.rotateKeys({ dropPrevious: true });
    assert.deepEqual(as.publishedKids(), [kid]);
    const current = await machineToken(machine);

    // The gateway restarted fetches the set at start: it holds only the newest key.
    await gateway.close();
    gateway = await startCapturedGateway(gatewayEnv(Number(new URL(publicUrl).port)));
    assert.equal((await postMcp(gateway.mcpUrl, bearer(current))).status, 200);
    const refused = await postMcp(gateway.mcpUrl, bearer(signedWithPrevious));
    assert.equal(refused.status, 401);
    assert.equal(gateway.auditLines().at(-1)?.reason, 'invalid_token');
  });
});
