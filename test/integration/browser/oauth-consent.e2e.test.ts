// The built-in authorization server's pages in a real headless Chromium: the MCP TypeScript SDK
// client registers and sends the user to the gateway; the browser shows the consent page, posts it
// (with the Origin and Sec-Fetch-Site headers a browser adds, under the page's Content-Security-Policy),
// follows the redirect to the upstream provider's login form, signs in, and comes back through the
// gateway to the client's redirect URI with a code. The client then reads from the real Dagu.
// ALLOWED_ORIGINS names another origin, as a deployment that admits one browser-based host would.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { type CapturedGateway, startCapturedGateway } from '../../support/auth-fixtures.ts';
import { ARTIFACTS_DIR, chromiumMissing, launchChromium } from '../../support/browser.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { freePort, getTestDagu, type TestDagu } from '../../support/dagu.ts';
import {
  type CallbackParams,
  connectWithOAuth,
  HeadlessOAuthProvider,
  type OAuthConnection,
  readDags,
  type UserCredentials,
} from '../../support/oauth-clients.ts';
import { type AuthorizationServer, startAuthorizationServer } from '../../support/oidc-provider.ts';
import { tempDir } from '../../support/temp.ts';

const skip = skipUnlessCI(chromiumMissing());
const UPSTREAM_CLIENT = 'dagu-gateway';
const UPSTREAM_SECRET = randomBytes(24).toString('base64url');
/** The client's loopback redirect URI: nothing listens there; the browser's request is caught. */
const REDIRECT = 'http://127.0.0.1:9/oauth/callback';

let dagu: TestDagu;
let upstream: AuthorizationServer;
let gateway: CapturedGateway;
let browser: Browser;
let publicUrl: string;
let connection: OAuthConnection | undefined;
/** What the browser met: CSP reports and console errors, and the pages it showed. */
const consoleErrors: string[] = [];
const shown: string[] = [];

before(async () => {
  if (skip !== false) return;
  dagu = await getTestDagu();
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  upstream = await startAuthorizationServer({
    mcpFeatures: false,
    accounts: { alice: randomBytes(12).toString('base64url') },
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
  gateway = await startCapturedGateway({
    PORT: String(port),
    DAGU_URL: dagu.url,
    DAGU_API_BASE: dagu.apiBase,
    PUBLIC_URL: publicUrl,
    ALLOWED_ORIGINS: 'https://host.example',
    AUTH_SERVER: 'builtin',
    OAUTH_UPSTREAM_ISSUER: upstream.issuer,
    OAUTH_UPSTREAM_CLIENT_ID: UPSTREAM_CLIENT,
    OAUTH_UPSTREAM_CLIENT_SECRET: UPSTREAM_SECRET,
    OAUTH_UPSTREAM_SCOPES: 'openid',
    OAUTH_STATE_DIR: join(tempDir('browser-oauth-'), 'state'),
  });
  browser = await launchChromium();
});

after(async () => {
  await connection?.close().catch(() => {});
  await browser?.close();
  await gateway?.close();
  await upstream?.stop();
  await dagu?.stop();
});

/** The person at the browser: allows the consent page, signs in upstream, allows there if asked. */
async function signInWithChromium(authorizationUrl: URL, user: UserCredentials): Promise<CallbackParams> {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on('console', (message) => {
    // A page without a favicon has the browser log a 404 for it: not the pages' doing.
    if (message.type() === 'error' && !message.location().url.endsWith('/favicon.ico'))
      consoleErrors.push(message.text());
  });
  try {
    const redirected = page.waitForRequest((request) => request.url().startsWith(REDIRECT), {
      timeout: 30_000,
    });
    redirected.catch(() => {});
    await page.goto(authorizationUrl.href);
    await page.getByRole('heading', { name: 'Allow access to Dagu?' }).waitFor();
    shown.push(`${new URL(page.url()).origin}: ${await page.title()}`);
    await page.screenshot({ path: join(ARTIFACTS_DIR, 'oauth-consent.png') });
    await page.getByRole('button', { name: 'Allow' }).click();
    await page
      .waitForURL((url) => url.origin === new URL(upstream.issuer).origin, { timeout: 15_000 })
      .catch((error: Error) => {
        throw new Error(
          `${error.message}; the browser is at ${page.url()}; errors: ${consoleErrors.join(' | ')}`,
        );
      });
    shown.push(`${new URL(page.url()).origin}: ${await page.title()}`);
    await page.fill('input[name="login"]', user.login);
    await page.fill('input[name="password"]', user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The upstream asks its own consent for the gateway's client the first time.
    const upstreamAllow = page.getByRole('button', { name: 'Allow' });
    await Promise.race([redirected, upstreamAllow.waitFor()]);
    if (await upstreamAllow.isVisible().catch(() => false)) {
      shown.push(`${new URL(page.url()).origin}: ${await page.title()}`);
      await upstreamAllow.click();
    }
    const request = await redirected.catch((error: Error) => {
      throw new Error(
        `${error.message}; the browser is at ${page.url()}; errors: ${consoleErrors.join(' | ')}`,
      );
    });
    return new URL(request.url()).searchParams;
  } finally {
    await context.close();
  }
}

test('a person in Chromium allows the consent page and signs in upstream; the SDK client reads with the token', {
  skip,
}, async () => {
  const user = { login: 'alice', password: upstream.accounts.alice! };
  const provider = new HeadlessOAuthProvider({
    user,
    userAgent: signInWithChromium,
    redirectUrl: REDIRECT,
    scope: 'dagu.read',
    clientName: 'browser test host',
  });
  connection = await connectWithOAuth(`${publicUrl}/mcp`, provider);
  assert.ok((await readDags(connection.client)).includes(dagu.seed.dags.twoSteps));
  const upstreamOrigin = new URL(upstream.issuer).origin;
  assert.deepEqual(
    shown,
    [`${publicUrl}: Allow access to Dagu?`, `${upstreamOrigin}: Sign in`, `${upstreamOrigin}: Sign in`],
    'the gateway’s consent, then the upstream’s login and its own consent for the gateway’s client',
  );
  assert.deepEqual(consoleErrors, [], 'no Content-Security-Policy or other error in the browser');
  const audit = gateway.auditLines();
  assert.ok(audit.some((line) => line.event === 'oauth.consent' && line.outcome === 'ok'));
  assert.ok(audit.some((line) => line.event === 'oauth.grant' && line.identity === 'alice'));
  assert.equal(audit.filter((line) => line.event === 'oauth.refused').length, 0);
});
