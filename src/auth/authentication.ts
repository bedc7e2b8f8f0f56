import type {
  HookHandlerDoneFunction as Done,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  preHandlerHookHandler,
} from 'fastify';
import fp from 'fastify-plugin';
import type { Log } from '../core/log.ts';
import type { MeteredCaller } from '../http/call-metering.ts';
import { publicBaseUrl, resourceMetadataPath } from '../http/protected-resource.ts';
import { auditRefusal, type RefusalAudit, refuse } from '../http/refusals.ts';
import type { GatewayMetrics } from '../metrics/metrics.ts';
import { suppliedTarget } from '../read/input/index.ts';
import {
  type Authenticator,
  type AuthenticatorConfig,
  type AuthenticatorOptions,
  type AuthFailure,
  type AuthOutcome,
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
    authenticate: onRequestHookHandler;
    /** The credentials this gateway accepts (owned by the authentication plugin, closed with the app). */
    authenticator: Authenticator;
    /** The route preHandler that refuses a call its token's scopes do not cover (403 step-up). */
    checkCallScopes: preHandlerHookHandler;
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

interface ChallengeSettings {
  realm: string;
  /** An authorization server is advertised: the challenge links the protected-resource metadata. */
  metadataLink: boolean;
  mcpPath: string;
  publicUrl: string | undefined;
  readScope: string | undefined;
}

/** The `WWW-Authenticate` header for a refusal, or undefined when the refusal carries none. */
function challenger(settings: ChallengeSettings) {
  /**
   * RFC 6750 §3 challenge. `resource_metadata` only when an authorization server is advertised: an
   * API-key gateway must not send MCP hosts into an OAuth flow that cannot finish. `scope` names what
   * a token needs (on 401, the read scope; on a step-up 403, the missing ones).
   */
  function challenge(request: FastifyRequest, error: string | undefined, scope: string | undefined): string {
    const parts = [`realm="${settings.realm}"`];
    if (settings.metadataLink) {
      parts.push(
        `resource_metadata="${publicBaseUrl(request, settings.publicUrl)}${resourceMetadataPath(settings.mcpPath)}"`,
      );
    }
    if (scope !== undefined) parts.push(`scope="${scope}"`);
    if (error !== undefined) parts.push(`error="${error}"`);
    return `Bearer ${parts.join(', ')}`;
  }

  return (request: FastifyRequest, failure: AuthFailure): string | undefined => {
    if (failure.reason === 'insufficient_scope')
      return challenge(request, 'insufficient_scope', failure.scope);
    if (failure.status !== 401) return undefined;
    // RFC 6750 §3.1: no error code when the request carried no credential at all.
    const error =
      failure.reason === 'missing_credentials'
        ? undefined
        : failure.reason === 'malformed_header'
          ? 'invalid_request'
          : 'invalid_token';
    return challenge(request, error, settings.readScope);
  };
}

async function authentication(app: FastifyInstance, options: AuthenticationPluginOptions): Promise<void> {
  const given = options.authenticator;
  const authenticator =
    'authenticate' in given ? given : await createAuthenticator(given.config, given.log, given.options);
  app.addHook('onClose', () => authenticator.close());
  const { metrics, audit } = options;

  const { scopes } = authenticator;
  const challengeFor = challenger({
    realm: options.realm ?? 'dagu-mcp-gateway',
    metadataLink: authenticator.authorizationServers.length > 0,
    mcpPath: options.mcpPath,
    publicUrl: options.publicUrl,
    readScope: scopes?.read,
  });

  const refuseAuth = (request: FastifyRequest, reply: FastifyReply, failure: AuthFailure) => {
    metrics?.authFailure(failure.reason);
    auditRefusal(audit, request, reply, {
      identity: failure.identity?.id,
      identityKind: failure.identity?.kind,
      outcome: failure.code,
      reason: failure.reason,
      httpStatus: failure.status,
    });
    const header = challengeFor(request, failure);
    return refuse(reply, failure.code, {
      message: failure.message,
      ...(header === undefined ? {} : { headers: { 'www-authenticate': header } }),
    });
  };

  app.decorateRequest('identity', null);
  app.decorate('authenticator', authenticator);
  /** A refused request is answered here, and the hook chain not continued (`done` is not called). */
  const settle = (request: FastifyRequest, reply: FastifyReply, outcome: AuthOutcome, done: Done) => {
    if (!outcome.ok) {
      refuseAuth(request, reply, outcome);
      return;
    }
    request.identity = outcome.identity;
    done();
  };

  // Callback hooks, both: an async one costs a promise and Fastify's continuation per request, and an
  // API key is checked synchronously (only a JWT's verification answers with a promise).
  app.decorate('authenticate', function authenticate(request, reply, done) {
    const outcome = authenticator.authenticate(request.headers.authorization);
    if (!(outcome instanceof Promise)) return settle(request, reply, outcome, done);
    // A throw in settle() goes to Fastify as the sync path's would, never an unhandled rejection.
    outcome.then((settled) => settle(request, reply, settled, done)).catch(done);
  } satisfies onRequestHookHandler);

  // Scopes that depend on what is called: a workbook read without the workbook scope steps up.
  app.decorate('checkCallScopes', function checkCallScopes(request, reply, done) {
    const identity = request.identity;
    if (scopes === undefined || identity === null || identity.readsWorkbooks !== false) return done();
    if (!readsWorkbook(request.body)) return done();
    refuseAuth(request, reply, {
      ok: false,
      status: 403,
      code: 'unauthorized',
      reason: 'insufficient_scope',
      message: `The bearer token lacks the scope ${scopes.workbook} the workbook target requires.`,
      identity,
      scope: `${scopes.read} ${scopes.workbook}`,
    });
  } satisfies preHandlerHookHandler);
}

/**
 * True when a message of the body calls `dagu_read` with the `workbook` target, as the read will take
 * the target (`"workbook "` too: fields are trimmed), so a caller without the scope always gets the
 * step-up challenge and never the read's own refusal.
 */
export function readsWorkbook(body: unknown): boolean {
  return (Array.isArray(body) ? body : [body]).some((message) => {
    const { method, params } = (message ?? {}) as {
      method?: unknown;
      params?: { name?: unknown; arguments?: unknown };
    };
    return (
      method === 'tools/call' &&
      params?.name === 'dagu_read' &&
      suppliedTarget(params.arguments) === 'workbook'
    );
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

/** Metering facts per identity, made once: an API key keeps one frozen Identity for as long as its file does. */
const meteredCallers = new WeakMap<Identity, MeteredCaller>();

/**
 * Whom call metering counts an authenticated request against: its identity, made once per identity
 * (metering asks twice per call); anonymous callers are told apart by address, so theirs is made each time.
 */
export function meteredCaller({
  identity,
  ip,
}: {
  identity: Identity | null;
  ip: string;
}): MeteredCaller | undefined {
  if (identity === null) return undefined;
  if (identity.kind === 'anonymous') {
    return { key: identityKey(identity, ip), identity: identity.id, identityKind: identity.kind };
  }
  let caller = meteredCallers.get(identity);
  if (caller === undefined) {
    caller = Object.freeze({
      key: identityKey(identity, ip),
      identity: identity.id,
      identityKind: identity.kind,
    });
    meteredCallers.set(identity, caller);
  }
  return caller;
}
