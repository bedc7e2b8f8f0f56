// Resource-server mode configured with the issuer alone (AUTH_JWT_ISSUER, no AUTH_JWKS_URL) against a
// real authorization server (oidc-provider, test/support/oidc-provider.ts): the gateway reads the JWKS
// URL from the issuer's discovery document at start-up, names the issuer in its protected-resource
// metadata, and the v2 TypeScript SDK client goes through the whole OAuth flow to a read from the real
// Dagu. The issuer written with a trailing slash the provider does not report stops the start-up,
// naming the provider's issuer.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type CapturedGateway, startCapturedGateway } from '../../support/auth-fixtures.ts';
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

let dagu: TestDagu;
let as: AuthorizationServer;
let gateway: CapturedGateway;
let port: number;
let connection: OAuthConnection | undefined;

const gatewayEnv = (issuer: string): Record<string, string> => ({
  PORT: String(port),
  DAGU_URL: dagu.url,
  DAGU_API_BASE: dagu.apiBase,
  PUBLIC_URL: `http://127.0.0.1:${port}`,
  AUTH_JWT_ISSUER: issuer,
});

before(async () => {
  dagu = await getTestDagu();
  as = await startAuthorizationServer();
  port = await freePort();
  as.addResourceServer(`http://127.0.0.1:${port}/mcp`, { scope: DAGU_SCOPES.join(' ') });
  gateway = await startCapturedGateway(gatewayEnv(as.issuer), { logLevel: 'info' });
});
after(async () => {
  await connection?.close().catch(() => {});
  await gateway?.close();
  await as?.stop();
  await dagu?.stop();
});

describe('AUTH_JWT_ISSUER alone (the JWKS URL from discovery)', () => {
  test("reads the JWKS URL from the issuer's OpenID configuration at start-up", () => {
    const line = gateway
      .logText()
      .split('\n')
      .find((text) => text.includes("JWKS URL read from the issuer's metadata"));
    assert.ok(line, gateway.logText());
    const fields = JSON.parse(line) as Record<string, unknown>;
    assert.equal(fields.issuer, as.issuer);
    assert.equal(fields.document, `${as.issuer}/.well-known/openid-configuration`);
    assert.equal(fields.jwksUrl, as.jwksUrl);
  });

  test('the protected-resource metadata names the issuer as the authorization server', async () => {
    const response = await fetch(`${gateway.baseUrl}/.well-known/oauth-protected-resource/mcp`);
    const metadata = (await response.json()) as Record<string, unknown>;
    assert.deepEqual(metadata.authorization_servers, [as.issuer]);
    assert.equal(metadata.resource, `http://127.0.0.1:${port}/mcp`);
  });

  test('the TypeScript SDK client signs in through the provider and reads from the real Dagu', async () => {
    const provider = new HeadlessOAuthProvider({
      user: { login: 'alice', password: as.accounts.alice! },
      scope: 'dagu.read',
    });
    connection = await connectWithOAuth(gateway.mcpUrl, provider);
    assert.equal(provider.authorizations, 1);
    const names = await readDags(connection.client);
    for (const seeded of [dagu.seed.dags.twoSteps, dagu.seed.dags.parent])
      assert.ok(names.includes(seeded), seeded);
  });

  test('an issuer written with a trailing slash the provider does not report stops the start, naming its issuer', async () => {
    await assert.rejects(
      startCapturedGateway({ ...gatewayEnv(`${as.issuer}/`), PORT: '0' }),
      (error: Error) => {
        assert.equal(
          error.message,
          `AUTH_JWT_ISSUER is "${as.issuer}/" but the provider reports its issuer as "${as.issuer}" ` +
            `(${as.issuer}/.well-known/openid-configuration); tokens carry the provider's, so every one ` +
            `would be refused as wrong_issuer: set AUTH_JWT_ISSUER=${as.issuer}`,
        );
        return true;
      },
    );
  });
});
