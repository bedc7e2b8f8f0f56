import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { htmlError, oauthJsonError } from './consent-page.ts';
import { OAUTH_PREFIX, type OAuthAuditEntry } from './provider.ts';

export interface OAuthRateLimitOptions {
  /** OAUTH_RATE_LIMIT_PER_MINUTE: requests one client address may make in a minute. */
  perMinute: number;
  audit(entry: OAuthAuditEntry): void;
}

/** Discovery documents and the public keys: read by every host and resource server, never limited. */
export const isOpenRead = (method: string, path: string): boolean =>
  method === 'GET' && (path.startsWith('/.well-known/') || path === `${OAUTH_PREFIX}/jwks`);

/** A browser shows the answer (a sign-in page or redirect), not a host's OAuth client. */
export const isBrowserRequest = (method: string, path: string): boolean =>
  method === 'GET' || path.startsWith(`${OAUTH_PREFIX}/interaction/`);

/** The answer to a request over the limit: a page for a browser, an OAuth error for a client. */
function refuse(reply: FastifyReply, browser: boolean, perMinute: number, retryAfterSeconds: number) {
  reply.header('retry-after', String(Math.max(1, retryAfterSeconds)));
  if (browser) {
    return htmlError(reply, 429, 'Too many requests', 'Wait a minute, then start again from your MCP host.');
  }
  const description = `Too many requests from this address: at most ${perMinute} a minute.`;
  return oauthJsonError(reply, 429, 'temporarily_unavailable', description);
}

/**
 * Counts the built-in server's requests per client address and minute, in the plugin's own context:
 * its registration, authorization and token endpoints answer anyone, and each registration or sign-in
 * writes to the shared state. Each process counts its own (replicas multiply the figure). The address
 * is the socket's, or the forwarded one when TRUST_PROXY names the proxy.
 */
export async function limitOAuthRequests(
  app: FastifyInstance,
  options: OAuthRateLimitOptions,
): Promise<void> {
  const { perMinute, audit } = options;
  await app.register(fastifyRateLimit, { global: false });
  const limit = app.createRateLimit({
    max: perMinute,
    timeWindow: 60_000,
    keyGenerator: (request: FastifyRequest) => `oauth:${request.ip}`,
  });
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '';
    if (isOpenRead(request.method, path)) return;
    const result = await limit(request);
    if (result.isAllowed || !result.isExceeded) return;
    audit({
      event: 'oauth.refused',
      outcome: 'temporarily_unavailable',
      reason: `more than ${perMinute} requests a minute from one address`,
      httpMethod: request.method,
      path,
      httpStatus: 429,
    });
    return refuse(reply, isBrowserRequest(request.method, path), perMinute, result.ttlInSeconds);
  });
}
