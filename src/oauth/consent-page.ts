import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

export interface ConsentView {
  uid: string;
  clientName: string;
  clientId: string;
  redirectHost: string;
  scopes: readonly string[];
  csrf: string;
}

/** The consent page: plain HTML, no script; the form posts back to the interaction with its CSRF token. */
export function consentPage(view: ConsentView): string {
  const action = `/oauth/interaction/${encodeURIComponent(view.uid)}/consent`;
  const scopes = view.scopes.map((scope) => `<li><code>${escapeHtml(scope)}</code></li>`).join('');
  return `<!doctype html>
<html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Allow access to Dagu?</title>
<body style="font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto">
<h1>Allow access to Dagu?</h1>
<p><strong data-client-name>${escapeHtml(view.clientName)}</strong> asks to read Dagu workflows in your name.</p>
<p>It will be sent back to <strong data-redirect-host>${escapeHtml(view.redirectHost)}</strong>.
Client id: <code>${escapeHtml(view.clientId)}</code></p>
<p>It asks for:</p><ul>${scopes}</ul>
<p>You will then sign in with your organisation's identity provider.</p>
<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<button name="decision" value="allow">Allow</button>
<button name="decision" value="deny">Deny</button>
</form>
</body></html>`;
}

/**
 * The consent page's Content-Security-Policy. Browsers hold a form's redirects to `form-action` too, so
 * it names where the answer leads: this origin, the upstream sign-in, and the client's redirect URI
 * (its origin, or its scheme for a native app's `cursor:`-style URI).
 */
export function consentPagePolicy(upstreamOrigin: string, redirectUri: URL | null): string {
  const sources = ["'self'", upstreamOrigin];
  if (redirectUri?.protocol === 'http:' || redirectUri?.protocol === 'https:')
    sources.push(redirectUri.origin);
  else if (redirectUri !== null && /^[a-z][a-z0-9+.-]*:$/.test(redirectUri.protocol))
    sources.push(redirectUri.protocol);
  return `default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action ${sources.join(' ')}`;
}

/** A short page for a refusal the user should see (never a stack trace). */
export function messagePage(title: string, message: string): string {
  return `<!doctype html><html lang="en"><meta charset="utf-8"><title>${escapeHtml(title)}</title><body style="font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`;
}

/** Reads an urlencoded form of at most 4 KB (the consent form holds two fields). */
export async function readForm(request: FastifyRequest): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request.raw) {
    size += (chunk as Buffer).length;
    if (size > 4096) throw new Error('form too large');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * Why a consent post is not the user's answer to this page, or undefined. A browser names the posting
 * page's origin (`Origin`) and whether the request is same-origin (`Sec-Fetch-Site`): either naming
 * another site refuses the post, whatever ALLOWED_ORIGINS lets browsers call. The form's CSRF token
 * (an HMAC of the interaction) is compared in constant time.
 */
export function consentPostProblem(
  headers: FastifyRequest['headers'],
  givenCsrf: string | null,
  expectedCsrf: string,
  origin: string,
): string | undefined {
  const site = headers['sec-fetch-site'];
  if (
    (headers.origin !== undefined && headers.origin !== origin) ||
    (site !== undefined && site !== 'same-origin')
  )
    return 'consent posted from another site';
  const given = Buffer.from(givenCsrf ?? '');
  const expected = Buffer.from(expectedCsrf);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return 'consent form without its CSRF token';
  return undefined;
}

/** A refusal page with its status, never cached. */
export const htmlError = (reply: FastifyReply, status: number, title: string, message: string) =>
  reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(messagePage(title, message));

/** An OAuth error answer (RFC 6749 section 5.2) to a host's client, never cached. */
export const oauthJsonError = (reply: FastifyReply, status: number, error: string, description: string) =>
  reply.code(status).header('cache-control', 'no-store').send({ error, error_description: description });
