// The sign-in at the upstream provider (src/oauth/upstream.ts) against oidc-provider on 127.0.0.1
// configured without registration or resource indicators, with one confidential client.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { discoverUpstream, type Upstream } from '../../../src/oauth/upstream.ts';
import { authorizeHeadless } from '../../support/oauth-clients.ts';
import { type AuthorizationServer, startAuthorizationServer } from '../../support/oidc-provider.ts';

const REDIRECT = 'http://127.0.0.1:9/oauth/callback';
const SECRET = randomBytes(24).toString('base64url');
let server: AuthorizationServer;
let upstream: Upstream;

before(async () => {
  server = await startAuthorizationServer({
    mcpFeatures: false,
    accountClaims: { alice: { email: 'alice@example.com', groups: ['readers'] } },
    clients: [
      {
        client_id: 'gateway',
        client_secret: SECRET,
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
  });
  upstream = await discoverUpstream({
    issuer: server.issuer,
    clientId: 'gateway',
    clientSecret: SECRET,
    scopes: 'openid',
    redirectUri: REDIRECT,
  });
});
after(() => server.stop());

describe('discoverUpstream', () => {
  test('the authorization URL asks for a code with PKCE S256, state and nonce, to the registered redirect URI', async () => {
    const { url, checks } = await upstream.authorizationUrl();
    assert.equal(url.origin, server.issuer);
    assert.equal(url.searchParams.get('response_type'), 'code');
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(url.searchParams.get('state'), checks.state);
    assert.equal(url.searchParams.get('nonce'), checks.nonce);
    assert.equal(url.searchParams.get('redirect_uri'), REDIRECT);
    assert.equal(url.searchParams.get('client_id'), 'gateway');
    assert.equal(upstream.authorizationOrigin, url.origin, 'the origin the consent page’s policy names');
  });

  test('a sign-in returns the ID token claims; a callback with another state is refused', async () => {
    const user = { login: 'alice', password: server.accounts.alice! };
    const { url, checks } = await upstream.authorizationUrl();
    const params = await authorizeHeadless(url, user);
    const claims = await upstream.signIn(new URL(`${REDIRECT}?${params}`), checks);
    assert.equal(claims.sub, 'alice');
    assert.equal(claims.email, 'alice@example.com');
    assert.deepEqual(claims.groups, ['readers']);

    const second = await upstream.authorizationUrl();
    const again = await authorizeHeadless(second.url, user);
    await assert.rejects(
      upstream.signIn(new URL(`${REDIRECT}?${again}`), { ...second.checks, state: 'another' }),
      // openid-client's check of `state` against the one sent.
      (error: unknown) => /unexpected "state"/.test(String((error as Error).cause)),
    );
  });
});
