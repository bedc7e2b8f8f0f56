import { createHmac, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import type { AuditLog } from '../audit/audit-log.ts';
import type { ClaimMapping } from '../auth/jwt.ts';
import type { ScopeSettings } from '../auth/scopes.ts';
import type { AuthServerConfig } from '../config.ts';
import type { Log } from '../core/log.ts';
import { type OAuthEvent, oauthOutcome } from '../core/oauth-events.ts';
import type { GatewayMetrics } from '../metrics/metrics.ts';
import { type FileClients, watchClientFile } from './client-file.ts';
import { createClientIdFetch } from './client-id-fetch.ts';
import { consentPage, consentPagePolicy, consentPostProblem, htmlError, readForm } from './consent-page.ts';
import {
  buildProvider,
  CALLBACK_PATH,
  interactionPath,
  OAUTH_PREFIX,
  type OAuthAuditEntry,
  type ProviderState,
} from './provider.ts';
import { limitOAuthRequests } from './rate-limit.ts';
import { decideScopes, keptClaims, scopeList } from './scope-policy.ts';
import { openStateStore, type ServerRecords, serverRecords } from './server-state.ts';
import { publicJwks, rotateSigningKeys, type SigningKeyPolicy, signingKeys } from './state/signing-keys.ts';
import { discoverUpstream, type Upstream } from './upstream.ts';

export interface BuiltinAuthServerSettings {
  config: AuthServerConfig;
  publicUrl: string;
  mcpPath: string;
  scopes: ScopeSettings;
  claims: ClaimMapping;
  groupsFile: string | undefined;
  behindProxy: boolean;
  audit: AuditLog;
  metrics: Pick<GatewayMetrics, 'oauthEvent'>;
  log: Log;
}

/** The built-in authorization server: what the authenticator needs of it, and its Fastify plugin. */
export interface BuiltinAuthServer {
  issuer: string;
  /** The public keys its tokens verify with, read from the shared state (they rotate). */
  publicJwks(): Promise<{ keys: object[] }>;
  plugin: (app: FastifyInstance) => Promise<void>;
  close(): Promise<void>;
}

/** A sign-in sent upstream waits for its callback ten minutes at most, like the interaction. */
const PENDING_TTL_S = 600;

/** A request of one sign-in's routes, addressed by its interaction's uid. */
type ByUid = FastifyRequest<{ Params: { uid: string } }>;

/** What the interaction routes share: the provider, the upstream, and who signed in and consented. */
interface ServerState {
  /** Replaced when the signing key rotates. */
  provider: Provider;
  handle: ReturnType<Provider['callback']>;
  upstream: Upstream;
  settings: BuiltinAuthServerSettings;
  issuer: string;
  resource: string;
  /** Accounts, consents (asked once per client and user) and sign-ins waiting for the upstream. */
  records: ServerRecords;
  csrfFor(uid: string): string;
  audit(entry: OAuthAuditEntry): void;
}

/** Ends the interaction with an `access_denied` to the client, audited with the reason. */
async function denyInteraction(
  s: ServerState,
  request: FastifyRequest,
  reply: FastifyReply,
  audited: { clientId: string; identity?: string; reason: string },
  description: string,
): Promise<void> {
  s.audit({ event: 'oauth.refused', outcome: 'access_denied', ...audited });
  reply.hijack();
  await s.provider.interactionFinished(request.raw, reply.raw, {
    error: 'access_denied',
    error_description: description,
  });
}

/** Grants what the user may have of what the client asked for, remembers the consent, and finishes. */
async function grantAndFinish(
  s: ServerState,
  request: FastifyRequest,
  reply: FastifyReply,
  details: Awaited<ReturnType<Provider['interactionDetails']>>,
  accountId: string,
  login: boolean,
): Promise<void> {
  const { provider, records, audit, settings, resource } = s;
  const clientId = String(details.params.client_id);
  const requested = scopeList(details.params.scope);
  const decision = decideScopes((await records.accountClaims(accountId)) ?? {}, requested, {
    scopes: settings.scopes,
    claims: settings.claims,
    groupsFile: settings.groupsFile,
  });
  if (!decision.ok) {
    const audited = { clientId, identity: accountId, reason: decision.reason };
    return denyInteraction(s, request, reply, audited, decision.reason);
  }
  reply.hijack();
  const grant =
    (details.grantId === undefined ? undefined : await provider.Grant.find(details.grantId)) ??
    new provider.Grant({ accountId, clientId });
  // oidc-provider checks scopes it lists (openid, offline_access and the gateway's named ones) on the
  // grant itself, and the resource's scopes (workspace ones included) on the grant's resource entry.
  const listed = new Set(['openid', 'offline_access', settings.scopes.read, settings.scopes.workbook]);
  const oidcScopes = decision.granted.filter((scope) => listed.has(scope));
  if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '));
  const resourceScopes = decision.granted.filter((scope) => scope !== 'openid' && scope !== 'offline_access');
  if (resourceScopes.length > 0) grant.addResourceScope(resource, resourceScopes.join(' '));
  if (decision.rejected.length > 0) grant.rejectResourceScope(resource, decision.rejected.join(' '));
  const grantId = await grant.save();
  await records.saveConsent(accountId, clientId);
  audit({
    event: 'oauth.grant',
    identity: accountId,
    identityKind: 'jwt',
    clientId,
    outcome: 'ok',
    reason: `granted ${decision.granted.join(' ') || '(none)'}${decision.rejected.length > 0 ? `; refused ${decision.rejected.join(' ')}` : ''}`,
  });
  await provider.interactionFinished(
    request.raw,
    reply.raw,
    { ...(login ? { login: { accountId } } : {}), consent: { grantId } },
    { mergeWithLastSubmission: true },
  );
}

async function showInteraction(s: ServerState, request: ByUid, reply: FastifyReply) {
  const { provider, records, csrfFor } = s;
  const details = await provider.interactionDetails(request.raw, reply.raw);
  if (details.uid !== request.params.uid)
    return htmlError(reply, 400, 'Sign-in expired', 'Start again from your MCP host.');
  const clientId = String(details.params.client_id);
  const accountId = details.session?.accountId;
  // Signed in before, and this user already allowed this client: no page (a step-up included).
  if (
    details.prompt.name === 'consent' &&
    accountId !== undefined &&
    (await records.hasConsent(accountId, clientId))
  ) {
    return grantAndFinish(s, request, reply, details, accountId, false);
  }
  const client = await provider.Client.find(clientId);
  const redirect = URL.parse(String(details.params.redirect_uri ?? ''));
  return reply
    .header('cache-control', 'no-store')
    .header('content-security-policy', consentPagePolicy(s.upstream.authorizationOrigin, redirect))
    .header('x-frame-options', 'DENY')
    .type('text/html; charset=utf-8')
    .send(
      consentPage({
        uid: details.uid,
        clientName: client?.clientName ?? clientId,
        clientId,
        redirectHost: redirect?.host ?? '',
        scopes: scopeList(details.params.scope),
        csrf: csrfFor(details.uid),
      }),
    );
}

async function answerConsent(s: ServerState, request: ByUid, reply: FastifyReply) {
  const { provider, records, csrfFor, audit, upstream } = s;
  const form = await readForm(request);
  const details = await provider.interactionDetails(request.raw, reply.raw);
  const clientId = String(details.params.client_id);
  const problem =
    details.uid !== request.params.uid
      ? 'consent posted for another sign-in'
      : consentPostProblem(request.headers, form.get('csrf'), csrfFor(details.uid), new URL(s.issuer).origin);
  if (problem !== undefined) {
    audit({ event: 'oauth.refused', clientId, outcome: 'invalid_request', reason: problem });
    return htmlError(reply, 403, 'Not allowed', 'The consent form was not posted from this page.');
  }
  const accountId = details.session?.accountId;
  if (form.get('decision') !== 'allow') {
    audit({
      event: 'oauth.consent',
      clientId,
      ...(accountId ? { identity: accountId } : {}),
      outcome: 'access_denied',
      reason: 'the user denied',
    });
    reply.hijack();
    return provider.interactionFinished(request.raw, reply.raw, {
      error: 'access_denied',
      error_description: 'the user denied access',
    });
  }
  audit({ event: 'oauth.consent', clientId, ...(accountId ? { identity: accountId } : {}), outcome: 'ok' });
  if (details.prompt.name === 'consent' && accountId !== undefined) {
    return grantAndFinish(s, request, reply, details, accountId, false);
  }
  // Not signed in: only now, after the consent, is the user sent to the upstream provider.
  const { url, checks } = await upstream.authorizationUrl();
  await records.savePending(checks.state, { uid: details.uid, checks });
  return reply.code(303).header('cache-control', 'no-store').redirect(url.href, 303);
}

/** The upstream's redirect: on to the interaction's own path, where its cookie is sent. */
async function upstreamCallback(s: ServerState, request: FastifyRequest, reply: FastifyReply) {
  const { records, audit, issuer } = s;
  const query = new URL(request.url, issuer).searchParams;
  const entry = await records.findPending(query.get('state') ?? '');
  if (entry === undefined) {
    audit({
      event: 'oauth.refused',
      outcome: 'invalid_request',
      reason: 'upstream callback with an unknown state',
    });
    return htmlError(reply, 400, 'Sign-in expired', 'Start again from your MCP host.');
  }
  return reply.redirect(`${interactionPath(entry.uid)}/callback?${query}`, 303);
}

async function finishSignIn(s: ServerState, request: ByUid, reply: FastifyReply) {
  const { provider, records, audit, settings, issuer, upstream } = s;
  const query = new URL(request.url, issuer).searchParams;
  const entry = await records.takePending(query.get('state') ?? '');
  const details = await provider.interactionDetails(request.raw, reply.raw);
  const clientId = String(details.params.client_id);
  if (entry === undefined || entry.uid !== details.uid || entry.uid !== request.params.uid) {
    audit({
      event: 'oauth.refused',
      clientId,
      outcome: 'invalid_request',
      reason: 'upstream callback for another sign-in',
    });
    return htmlError(reply, 400, 'Sign-in expired', 'Start again from your MCP host.');
  }
  let claims: Record<string, unknown>;
  try {
    claims = await upstream.signIn(new URL(`${issuer}${CALLBACK_PATH}?${query}`), entry.checks);
  } catch (error) {
    const reason = `upstream sign-in failed: ${(error as Error).message}`;
    return denyInteraction(s, request, reply, { clientId, reason }, 'upstream sign-in failed');
  }
  const id = claims[settings.claims.identity];
  if (typeof id !== 'string' || id.trim() === '' || id.length > 256) {
    const reason = `the upstream ID token has no ${settings.claims.identity} claim`;
    return denyInteraction(s, request, reply, { clientId, reason }, 'no usable identity');
  }
  await records.saveAccount(id, { ...keptClaims(claims, settings.claims), sub: id });
  return grantAndFinish(s, request, reply, details, id, true);
}

/** Requests oidc-provider answers itself (discovery, authorize, token, register, revoke, JWKS). */
function toProvider(s: ServerState, request: FastifyRequest, reply: FastifyReply, url?: string) {
  reply.hijack();
  if (url !== undefined) request.raw.url = url;
  s.handle(request.raw, reply.raw);
}

/** The routes: oidc-provider's own endpoints, and the consent and upstream sign-in around them. */
function routes(s: ServerState) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    // oidc-provider reads request bodies itself: nothing here parses them.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null));
    await limitOAuthRequests(app, { perMinute: s.settings.config.ratePerMinute, audit: s.audit });
    app.get('/.well-known/openid-configuration', (request, reply) => toProvider(s, request, reply));
    // RFC 8414 discovery, what MCP hosts read first: the same document.
    app.get('/.well-known/oauth-authorization-server', (request, reply) =>
      toProvider(s, request, reply, '/.well-known/openid-configuration'),
    );
    app.get(CALLBACK_PATH, (request: ByUid, reply) => upstreamCallback(s, request, reply));
    const interaction = `${OAUTH_PREFIX}/interaction/:uid`;
    app.get(interaction, (request: ByUid, reply) => showInteraction(s, request, reply));
    app.post(`${interaction}/consent`, (request: ByUid, reply) => answerConsent(s, request, reply));
    app.get(`${interaction}/callback`, (request: ByUid, reply) => finishSignIn(s, request, reply));
    app.all(`${OAUTH_PREFIX}/*`, (request, reply) => toProvider(s, request, reply));
    app.setErrorHandler((error: Error, request, reply) => {
      s.settings.log.warn(
        { error: error.message, path: request.url.split('?')[0] },
        'built-in authorization server refused a request',
      );
      if (reply.sent || reply.raw.headersSent) return;
      const expired = error.name === 'SessionNotFound';
      return htmlError(
        reply,
        expired ? 400 : 500,
        expired ? 'Sign-in expired' : 'Sign-in failed',
        expired ? 'Start again from your MCP host.' : 'The sign-in could not be completed.',
      );
    });
  };
}

/** Every event in the audit log, and counted (mcp_gateway_oauth_events_total). */
const auditAndCount =
  ({ audit, metrics }: BuiltinAuthServerSettings) =>
  (entry: OAuthAuditEntry) => {
    audit.record({ requestId: randomUUID(), durationMs: 0, ...entry });
    metrics.oauthEvent(entry.event.slice('oauth.'.length) as OAuthEvent, oauthOutcome(entry.outcome));
  };

export async function createBuiltinAuthServer(
  settings: BuiltinAuthServerSettings,
): Promise<BuiltinAuthServer> {
  const { config } = settings;
  const issuer = settings.publicUrl.replace(/\/+$/, '');
  const resource = `${issuer}${settings.mcpPath}`;
  const audit = auditAndCount(settings);

  const upstream: Upstream = await discoverUpstream({
    ...config.upstream,
    redirectUri: `${issuer}${CALLBACK_PATH}`,
  });
  const store = await openStateStore(config.state);
  const records = serverRecords(store, {
    grantSeconds: config.refreshTokenTtlS,
    pendingSeconds: PENDING_TTL_S,
  });
  const secrets = await records.secrets();
  const clientIdFetch = createClientIdFetch(config.clientIdMetadata);
  const clientFile =
    config.clientsFile === undefined ? undefined : watchClientFile(config.clientsFile, { log: settings.log });
  const noClients: FileClients = new Map();

  const providerSettings = {
    config,
    issuer,
    resource,
    scopes: settings.scopes,
    claims: settings.claims,
    behindProxy: settings.behindProxy,
    accountClaims: (id: string) => records.accountClaims(id),
    audit,
  };
  const build = (keys: ProviderState['keys']) =>
    buildProvider(providerSettings, {
      store,
      keys,
      cookieKey: secrets.cookieKey,
      fileClients: () => clientFile?.current() ?? noClients,
      fetch: clientIdFetch.fetch,
    });
  // A key verifies past the longest-lived token it signed (ID tokens: 1 h).
  const policy: SigningKeyPolicy = {
    rotateAfterSeconds: config.signingKeyRotateS,
    retainSeconds: Math.max(config.accessTokenTtlS, 3600) + 60,
  };
  const provider = build(await signingKeys(store, policy));
  const s: ServerState = {
    provider,
    handle: provider.callback(),
    records,
    csrfFor: (uid: string) => createHmac('sha256', secrets.csrfKey).update(uid).digest('base64url'),
    audit,
    settings,
    resource,
    issuer,
    upstream,
  };
  // oidc-provider's keys are fixed for its life: each rotation builds a new one over the same state.
  const stopRotating = rotateSigningKeys(store, policy, settings.log, (keys) => {
    s.provider = build(keys);
    s.handle = s.provider.callback();
  });

  return {
    issuer,
    publicJwks: async () => publicJwks(await signingKeys(store, policy)),
    plugin: routes(s),
    async close() {
      stopRotating();
      clientFile?.close();
      await clientIdFetch.close();
      await store.close();
    },
  };
}
