import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Log } from '../core/log.ts';
import type { MeteredCaller } from '../http/call-metering.ts';
import { publicBaseUrl, resourceMetadataPath } from '../http/protected-resource.ts';
import { auditRefusal, type RefusalAudit, refuse } from '../http/refusals.ts';
import type { GatewayMetrics } from '../metrics/metrics.ts';
import {
  type Authenticator,
  type AuthenticatorConfig,
  type AuthenticatorOptions,
  type AuthFailure,
  createAuthenticator,
} from './authenticate.ts';
import { type Identity, identityKey } from './identity.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `authenticate` on the routes it guards; null elsewhere. */
    identity: Identity | null;
  }
  interface FastifyInstance {
    /** The route hook that authenticates from `Authorization: Bearer` and answers 401/403 itself. */
    authenticate(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
    /** The credentials this gateway accepts (owned by the authentication plugin, closed with the app). */
    authenticator: Authenticator;
  }
}

export interface AuthenticationPluginOptions {
  /** A built authenticator, or the settings to build one; either way it is closed with the app. */
  authenticator: Authenticator | { config: AuthenticatorConfig; options?: AuthenticatorOptions; log: Log };
  /** The MCP endpoint path, for the `resource_metadata` link of the 401 challenge. */
  mcpPath: string;
  publicUrl?: string | undefined;
  metrics?: Pick<GatewayMetrics, 'authFailure'>;
  audit?: RefusalAudit;
  realm?: string;
}

async function authentication(app: FastifyInstance, options: AuthenticationPluginOptions): Promise<void> {
  const given = options.authenticator;
  const authenticator =
    'authenticate' in given ? given : await createAuthenticator(given.config, given.log, given.options);
  app.addHook('onClose', () => authenticator.close());
  const { metrics, audit } = options;
  const realm = options.realm ?? 'dagu-mcp-gateway';

  function challenge(request: FastifyRequest, failure: AuthFailure): string {
    const metadataUrl = `${publicBaseUrl(request, options.publicUrl)}${resourceMetadataPath(options.mcpPath)}`;
    const parts = [`realm="${realm}"`, `resource_metadata="${metadataUrl}"`];
    // RFC 6750 §3.1: no error code when the request carried no credential at all.
    if (failure.reason === 'malformed_header') parts.push('error="invalid_request"');
    else if (failure.reason !== 'missing_credentials') parts.push('error="invalid_token"');
    return `Bearer ${parts.join(', ')}`;
  }

  app.decorateRequest('identity', null);
  app.decorate('authenticator', authenticator);
  app.decorate('authenticate', async function authenticate(request: FastifyRequest, reply: FastifyReply) {
    const outcome = await authenticator.authenticate(request.headers.authorization);
    if (outcome.ok) {
      request.identity = outcome.identity;
      return;
    }
    metrics?.authFailure(outcome.reason);
    auditRefusal(audit, request, reply, {
      identity: outcome.identity?.id,
      identityKind: outcome.identity?.kind,
      outcome: outcome.code,
      reason: outcome.reason,
      httpStatus: outcome.status,
    });
    return refuse(reply, outcome.code, {
      message: outcome.message,
      ...(outcome.status === 401 ? { headers: { 'www-authenticate': challenge(request, outcome) } } : {}),
    });
  });
}

/**
 * Decorates the app with `authenticate`, the hook to put on the routes that need a caller:
 *
 *   await app.register(authenticationPlugin, { authenticator, mcpPath, metrics, audit });
 *   app.post(mcpPath, { onRequest: [app.authenticate] }, handler);
 *
 * As a route-level onRequest it runs after the app-level Host/Origin hook and before the body is
 * parsed, so an unauthenticated oversized body gets 401, not 413.
 */
export const authenticationPlugin = fp(authentication, { name: 'dagu-mcp-authentication', fastify: '5.x' });

/** Whom call metering counts an authenticated request against: its identity (anonymous: by address). */
export const meteredCaller = ({
  identity,
  ip,
}: {
  identity: Identity | null;
  ip: string;
}): MeteredCaller | undefined =>
  identity === null
    ? undefined
    : { key: identityKey(identity, ip), identity: identity.id, identityKind: identity.kind };
