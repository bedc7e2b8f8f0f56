// OAuth end to end against a real authorization server (oidc-provider, test/support/oidc-provider.ts):
// MCP clients this project does not write (the v2 TypeScript SDK with its OAuthClientProvider, the
// Python SDK's mcp.client.auth, the SDK's client-credentials provider, MCP Inspector's CLI) find the
// provider through the gateway's 401 and protected-resource metadata, register, get a token bound to
// the gateway with RFC 8707 `resource`, and read from the real Dagu. Then: expiry and refresh, a token
// for another resource, a revoked client, signing-key rotation (last: it changes the keys every later
// token is signed with).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
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
} from '../../support/oauth-clients.ts';
import {
  type AuthorizationServer,
  DAGU_SCOPES,
  startAuthorizationServer,
} from '../../support/oidc-provider.ts';
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

/** The names in a `dags` read; fails on a tool error. */
async function readDags(client: Client): Promise<string[]> {
  const result = (await client.callTool({ name: 'dagu_read', arguments: { target: 'dags' } })) as {
    isError?: boolean;
    structuredContent?: { data?: { items?: Array<{ name: string }> } };
  };
  assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
  return (result.structuredContent?.data?.items ?? []).map((item) => item.name);
}

/** Resolves at `epochMs` (a deadline the test computed from a token's `exp` or a fetch time). */
const until = (epochMs: number) => delay(Math.max(0, epochMs - Date.now()));

/** Runs a program to completion without blocking this process (the provider and gateway live here). */
function run(
  command: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

interface PythonResult {
  tools: string[];
  reads: Array<{ isError: boolean; dags: string[]; error: unknown }>;
  authorizations: number;
  accessTokens: string[];
  refreshToken: boolean;
}

/**
 * Runs test/support/python/oauth_read.py (the Python MCP SDK's OAuth client). Undefined when there is
 * no Python MCP SDK: the test is skipped then, and fails under CI.
 */
async function pythonRead(
  t: TestContext,
  options: { clientName?: string; readAfterExpiry?: boolean } = {},
): Promise<PythonResult | undefined> {
  const python = process.env.MCP_CLIENT_PYTHON;
  if (python === undefined) {
    const reason = 'no Python MCP SDK (scripts/python-fixtures.sh mcp-client; the test runner prepares it)';
    t.skip(skipUnlessCI(reason));
    return undefined;
  }
  const script = join(import.meta.dirname, '..', '..', 'support', 'python', 'oauth_read.py');
  const args = [script, gateway.mcpUrl, ...(options.readAfterExpiry ? ['--read-after-expiry'] : [])];
  const { code, stdout, stderr } = await run(python, args, {
    OAUTH_LOGIN: user.login,
    OAUTH_PASSWORD: user.password,
    ...(options.clientName ? { OAUTH_CLIENT_NAME: options.clientName } : {}),
  });
  assert.equal(code, 0, stderr.slice(-2000));
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as PythonResult;
}

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

  test('after a key rotation the gateway refetches the JWKS for the new kid; the old key stays published', async () => {
    const machine = await registerMachineClient();
    const before = await machineToken(machine);
    const oldKid = as.currentKid();
    // An unknown kid makes the gateway fetch the set again, at most once per cooldown.
    await until((as.jwksFetches().at(-1) ?? 0) + JWKS_COOLDOWN_MS + 100);
    const fetches = as.jwksFetches().length;

    const newKid = as.rotateKeys();
    assert.notEqual(newKid, oldKid);
    assert.deepEqual(as.publishedKids(), [newKid, oldKid]);
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
