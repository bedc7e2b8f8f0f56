// The consent page (src/oauth/consent-page.ts): what it shows, escaped, and the form it posts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Fastify from 'fastify';
import {
  consentPage,
  consentPagePolicy,
  consentPostProblem,
  messagePage,
  oauthJsonError,
} from '../../../src/oauth/consent-page.ts';

describe('consentPage', () => {
  const page = consentPage({
    uid: 'abc',
    clientName: '<script>alert(1)</script> Host',
    clientId: 'https://host.example/client.json',
    redirectHost: 'host.example',
    scopes: ['dagu.read', 'dagu.workbook'],
    csrf: 'token-1',
  });

  test('shows the client name escaped, the redirect host and each scope', () => {
    assert.match(page, /&#60;script&#62;alert\(1\)&#60;\/script&#62; Host/);
    assert.doesNotMatch(page, /<script>/);
    assert.match(page, /<strong data-redirect-host>host\.example<\/strong>/);
    assert.match(page, /<code>dagu\.read<\/code>.*<code>dagu\.workbook<\/code>/s);
  });

  test('posts to the interaction with its CSRF token and an allow or deny decision', () => {
    assert.match(page, /<form method="post" action="\/oauth\/interaction\/abc\/consent">/);
    assert.match(page, /<input type="hidden" name="csrf" value="token-1">/);
    assert.match(page, /name="decision" value="allow"/);
    assert.match(page, /name="decision" value="deny"/);
  });
});

describe('messagePage', () => {
  test('escapes its title and message', () => {
    assert.match(messagePage('a<b', 'c&d'), /<title>a&#60;b<\/title>.*c&#38;d/s);
  });
});

describe('consentPostProblem', () => {
  const origin = 'https://gateway.example';
  const csrf = 'c'.repeat(43);

  test('the page’s own post passes: same origin, its token; a client that sends neither header too', () => {
    assert.equal(
      consentPostProblem({ origin, 'sec-fetch-site': 'same-origin' }, csrf, csrf, origin),
      undefined,
    );
    assert.equal(consentPostProblem({}, csrf, csrf, origin), undefined);
  });

  test('a post from another site is refused by its Origin or its Sec-Fetch-Site, even with the token', () => {
    for (const headers of [
      { origin: 'https://host.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ]) {
      assert.equal(
        consentPostProblem(headers, csrf, csrf, origin),
        'consent posted from another site',
        JSON.stringify(headers),
      );
    }
  });

  test('a post without its token, or with another one, is refused', () => {
    for (const given of [null, '', 'x', `${csrf.slice(1)}d`]) {
      assert.equal(
        consentPostProblem({ origin }, given, csrf, origin),
        'consent form without its CSRF token',
        String(given),
      );
    }
  });
});

describe('consentPagePolicy', () => {
  const upstream = 'https://login.example';
  const formAction = (policy: string) => /form-action ([^;]+)/.exec(policy)?.[1];

  test('the form may lead to this origin, the upstream sign-in and the client’s redirect origin; nothing loads', () => {
    const policy = consentPagePolicy(upstream, new URL('https://host.example/callback?x=1'));
    assert.equal(formAction(policy), "'self' https://login.example https://host.example");
    assert.match(policy, /default-src 'none'/);
    assert.match(policy, /frame-ancestors 'none'/);
  });

  test('a loopback redirect keeps its port; a native app’s scheme is named as a scheme', () => {
    assert.equal(
      formAction(consentPagePolicy(upstream, new URL('http://127.0.0.1:33418/cb'))),
      "'self' https://login.example http://127.0.0.1:33418",
    );
    assert.equal(
      formAction(consentPagePolicy(upstream, new URL('cursor://anysphere.cursor-mcp/oauth/callback'))),
      "'self' https://login.example cursor:",
    );
  });

  test('no redirect URI: only this origin and the upstream', () => {
    assert.equal(formAction(consentPagePolicy(upstream, null)), "'self' https://login.example");
  });
});

describe('oauthJsonError', () => {
  test('answers the status with an OAuth error body, never cached', async () => {
    const app = Fastify();
    app.get('/', (_request, reply) => oauthJsonError(reply, 429, 'temporarily_unavailable', 'slow down'));
    const answer = await app.inject('/');
    assert.equal(answer.statusCode, 429);
    assert.equal(answer.headers['cache-control'], 'no-store');
    assert.deepEqual(answer.json(), { error: 'temporarily_unavailable', error_description: 'slow down' });
    await app.close();
  });
});
