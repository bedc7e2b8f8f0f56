// oidc-provider as the built-in server configures it (src/oauth/provider.ts), served on 127.0.0.1:
// what its discovery document promises MCP hosts, and what a setting turns off.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { DAGU_CLAIMS } from '../../../src/auth/jwt.ts';
import { DEFAULT_SCOPES } from '../../../src/auth/scopes.ts';
import type { AuthServerConfig } from '../../../src/config.ts';
import { buildProvider } from '../../../src/oauth/provider.ts';
import { openEmbeddedStore } from '../../../src/oauth/state/embedded-store.ts';
import { signingKeys } from '../../../src/oauth/state/signing-keys.ts';
import { tempDir } from '../../support/temp.ts';

const CONFIG: AuthServerConfig = {
  upstream: { issuer: 'https://idp.example', clientId: 'c', clientSecret: 's', scopes: 'openid' },
  accessTokenTtlS: 300,
  refreshTokenTtlS: 86_400,
  dynamicRegistration: true,
  clientsFile: undefined,
  state: { dir: 'unused', redisUrl: undefined },
  signingKeyRotateS: 86_400,
  ratePerMinute: 300,
  clientIdMetadata: {
    enabled: true,
    hosts: undefined,
    maxBytes: 16_384,
    timeoutMs: 2_500,
    cacheMaxS: 3_600,
    allowLoopback: false,
    caFile: undefined,
  },
};

/** The discovery document of a provider built with `config`, served on a free loopback port. */
async function discovery(config: AuthServerConfig): Promise<Record<string, unknown>> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const store = await openEmbeddedStore(tempDir('oauth-provider-'));
  const keys = await signingKeys(store, { rotateAfterSeconds: 86_400, retainSeconds: 3_660 });
  const provider = buildProvider(
    {
      config,
      issuer,
      resource: `${issuer}/mcp`,
      scopes: DEFAULT_SCOPES,
      claims: DAGU_CLAIMS,
      behindProxy: false,
      accountClaims: async () => undefined,
      audit: () => {},
    },
    {
      store,
      keys,
      cookieKey: 'k'.repeat(43),
      fileClients: () => new Map(),
      fetch: async () => new Response('{}'),
    },
  );
  server.on('request', provider.callback());
  try {
    const response = await fetch(`${issuer}/.well-known/openid-configuration`);
    return { ...((await response.json()) as Record<string, unknown>), issuerUrl: issuer };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await store.close();
  }
}

describe('buildProvider', () => {
  test('discovery: endpoints under /oauth, PKCE S256 only, code flow only, metadata documents, the gateway scopes', async () => {
    const document = await discovery(CONFIG);
    const issuer = document.issuerUrl as string;
    assert.equal(document.issuer, issuer);
    assert.equal(document.authorization_endpoint, `${issuer}/oauth/authorize`);
    assert.equal(document.token_endpoint, `${issuer}/oauth/token`);
    assert.equal(document.registration_endpoint, `${issuer}/oauth/register`);
    assert.equal(document.revocation_endpoint, `${issuer}/oauth/revoke`);
    assert.equal(document.jwks_uri, `${issuer}/oauth/jwks`);
    assert.deepEqual(document.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(document.response_types_supported, ['code']);
    assert.equal(document.client_id_metadata_document_supported, true);
    assert.deepEqual(document.scopes_supported, ['openid', 'offline_access', 'dagu.read', 'dagu.workbook']);
  });

  test('with dynamic registration and metadata documents off, discovery names neither', async () => {
    const document = await discovery({
      ...CONFIG,
      dynamicRegistration: false,
      clientIdMetadata: { ...CONFIG.clientIdMetadata, enabled: false },
    });
    assert.equal(document.registration_endpoint, undefined);
    assert.equal(document.client_id_metadata_document_supported, undefined);
  });
});
