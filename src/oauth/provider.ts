import Provider, { type Configuration, errors, type JWK, type KoaContextWithOIDC } from 'oidc-provider';
import type { AuditEntry } from '../audit/audit-log.ts';
import type { ClaimMapping } from '../auth/jwt.ts';
import type { ScopeSettings } from '../auth/scopes.ts';
import type { AuthServerConfig } from '../config.ts';
import type { OAuthEvent } from '../core/oauth-events.ts';
import type { FileClients } from './client-file.ts';
import type { createClientIdFetch } from './client-id-fetch.ts';
import { providerAdapter } from './state/provider-adapter.ts';
import type { RecordStore } from './state/record-store.ts';
import type { SigningKey } from './state/signing-keys.ts';

/** Where the built-in server's endpoints live on the gateway's origin. */
export const OAUTH_PREFIX = '/oauth';
export const CALLBACK_PATH = `${OAUTH_PREFIX}/callback`;
export const interactionPath = (uid: string) => `${OAUTH_PREFIX}/interaction/${uid}`;

/** What the built-in server audits: an `oauth.*` event, without the call's request id and duration. */
export type OAuthAuditEntry = Omit<AuditEntry, 'requestId' | 'durationMs' | 'event'> & {
  event: `oauth.${OAuthEvent}`;
};

export interface ProviderSettings {
  config: AuthServerConfig;
  /** `<PUBLIC_URL>`: the issuer. */
  issuer: string;
  /** `<PUBLIC_URL><MCP_PATH>`: the one resource tokens are issued for. */
  resource: string;
  scopes: ScopeSettings;
  claims: ClaimMapping;
  /** Forwarded headers are believed (TRUST_PROXY set): cookies are Secure when the host used https. */
  behindProxy: boolean;
  /** The claims kept of each account's last upstream sign-in (the access token carries them). */
  accountClaims(accountId: string): Promise<Record<string, unknown> | undefined>;
  audit(entry: OAuthAuditEntry): void;
}

/** What the provider keeps and signs with, shared by every instance (src/oauth/state). */
export interface ProviderState {
  store: RecordStore;
  /** The signing keys, the one that signs first. */
  keys: readonly SigningKey[];
  cookieKey: string;
  /** The pre-registered clients (OAUTH_CLIENTS_FILE), as they are now. */
  fileClients: () => FileClients;
  /** The Client ID Metadata Document fetch (SSRF-hardened). */
  fetch: ReturnType<typeof createClientIdFetch>['fetch'];
}

const clientOf = (ctx: KoaContextWithOIDC) => ({
  ...(ctx.oidc?.client?.clientId ? { clientId: ctx.oidc.client.clientId } : {}),
  ...(ctx.oidc?.client?.clientName ? { clientName: ctx.oidc.client.clientName } : {}),
});

/** oidc-provider's features: registration, revocation, resource indicators, metadata documents. */
function features(settings: ProviderSettings): Configuration['features'] {
  const { config, resource, scopes } = settings;
  const cimd = config.clientIdMetadata;
  return {
    devInteractions: { enabled: false },
    registration: { enabled: config.dynamicRegistration },
    revocation: { enabled: true },
    userinfo: { enabled: false },
    resourceIndicators: {
      enabled: true,
      // Hosts that send no `resource` get a token for this gateway; any other resource is refused.
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo(ctx, indicator) {
        if (indicator !== resource) throw new errors.InvalidTarget('tokens are issued for this gateway only');
        const asked = String(ctx.oidc.params?.scope ?? '').split(' ');
        const workspaceScopes = asked.filter(
          (scope) => scope.startsWith(scopes.workspacePrefix) && scope.length > scopes.workspacePrefix.length,
        );
        return {
          scope: [scopes.read, scopes.workbook, ...workspaceScopes].join(' '),
          audience: resource,
          accessTokenTTL: config.accessTokenTtlS,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
    // Not in @types/oidc-provider yet (oidc-provider 9.13 implements draft-02).
    ...({
      clientIdMetadataDocument: {
        enabled: cimd.enabled,
        ack: 'draft-02',
        cacheDuration: { min: 30, max: cimd.cacheMaxS },
      },
    } as object),
  };
}

/** The whole configuration: storage, the signing key, cookies, routes, tokens and their lifetimes. */
function configurationFor(settings: ProviderSettings, state: ProviderState): Configuration {
  const { config, scopes } = settings;
  return {
    adapter: providerAdapter(state.store, state.fileClients) as unknown as Configuration['adapter'],
    jwks: { keys: state.keys.map((key) => key.jwk as JWK) },
    cookies: {
      keys: [state.cookieKey],
      names: {
        session: 'dagu_oauth_session',
        interaction: 'dagu_oauth_interaction',
        resume: 'dagu_oauth_resume',
      },
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    scopes: ['openid', 'offline_access', scopes.read, scopes.workbook],
    claims: { openid: ['sub'] },
    async findAccount(_ctx, id) {
      return (await settings.accountClaims(id)) === undefined
        ? undefined
        : { accountId: id, claims: () => ({ sub: id }) };
    },
    pkce: { required: () => true },
    // The authorization code flow only (OAuth 2.1): no implicit or hybrid responses.
    responseTypes: ['code'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      // The one signing key is EC P-256.
      id_token_signed_response_alg: 'ES256',
    },
    routes: {
      authorization: `${OAUTH_PREFIX}/authorize`,
      token: `${OAUTH_PREFIX}/token`,
      jwks: `${OAUTH_PREFIX}/jwks`,
      registration: `${OAUTH_PREFIX}/register`,
      revocation: `${OAUTH_PREFIX}/revoke`,
      introspection: `${OAUTH_PREFIX}/introspect`,
      userinfo: `${OAUTH_PREFIX}/userinfo`,
      end_session: `${OAUTH_PREFIX}/logout`,
      pushed_authorization_request: `${OAUTH_PREFIX}/par`,
    },
    features: features(settings),
    fetch: state.fetch as unknown as Configuration['fetch'],
    // The limit is also oidc-provider's own (the fetch above reads at most as much).
    ...({
      fetchResponseBodyLimits: { 'client_id metadata document': config.clientIdMetadata.maxBytes },
    } as object),
    // Every client allowed the refresh grant gets a refresh token, rotated on each use.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => true,
    async extraTokenClaims(_ctx, token) {
      const accountId = 'accountId' in token ? token.accountId : undefined;
      const claims = accountId === undefined ? undefined : await settings.accountClaims(accountId);
      if (claims === undefined) return undefined;
      // The account keeps only the claims the identity is made of (keptClaims); `sub` is the token's own.
      return Object.fromEntries(Object.entries(claims).filter(([name]) => name !== 'sub'));
    },
    ttl: {
      AccessToken: config.accessTokenTtlS,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 8 * 3600,
      Grant: config.refreshTokenTtlS,
      RefreshToken: config.refreshTokenTtlS,
    },
    interactions: { url: (_ctx, interaction) => interactionPath(interaction.uid) },
    renderError(ctx, out) {
      ctx.type = 'application/json';
      ctx.body = out;
    },
  };
}

/** Every grant, token, registration, revocation and refusal of the provider, in the audit log. */
function auditEvents(provider: Provider, audit: ProviderSettings['audit']): void {
  const refused = (
    ctx: KoaContextWithOIDC,
    error: Error & { error?: string; error_description?: string; error_detail?: string },
  ) => {
    const cause = (error.cause as Error | undefined)?.message ?? error.error_detail;
    audit({
      event: 'oauth.refused',
      ...clientOf(ctx),
      ...(ctx.oidc?.client === undefined && typeof ctx.oidc?.params?.client_id === 'string'
        ? { clientId: ctx.oidc.params.client_id }
        : {}),
      outcome: error.error ?? 'server_error',
      reason: [error.error_description ?? error.message, cause].filter(Boolean).join(': '),
      path: ctx.path,
      httpMethod: ctx.method,
      httpStatus: ctx.status,
    });
  };
  for (const event of [
    'authorization.error',
    'grant.error',
    'registration_create.error',
    'revocation.error',
    'server_error',
  ]) {
    (provider.on as (name: string, listener: typeof refused) => void)(event, refused);
  }
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    audit({
      event: 'oauth.token',
      ...clientOf(ctx),
      ...(ctx.oidc.entities.Account?.accountId ? { identity: ctx.oidc.entities.Account.accountId } : {}),
      outcome: 'ok',
      reason: String(ctx.oidc.params?.grant_type ?? ''),
      path: ctx.path,
      httpMethod: ctx.method,
    });
  });
  provider.on('registration_create.success', (ctx: KoaContextWithOIDC, client) => {
    audit({
      event: 'oauth.registration',
      clientId: client.clientId,
      ...(client.clientName ? { clientName: client.clientName } : {}),
      outcome: 'ok',
      path: ctx.path,
      httpMethod: ctx.method,
    });
  });
  const on = provider.on.bind(provider) as (
    name: string,
    listener: (ctx: KoaContextWithOIDC, token: { accountId?: string; kind: string }) => void,
  ) => void;
  on('revocation.success', (ctx, token) => {
    audit({
      event: 'oauth.revocation',
      ...clientOf(ctx),
      ...(token.accountId ? { identity: token.accountId } : {}),
      outcome: 'ok',
      reason: token.kind,
      path: ctx.path,
      httpMethod: ctx.method,
    });
  });
  provider.on('grant.revoked', (ctx: KoaContextWithOIDC, grantId: string) => {
    audit({
      event: 'oauth.revocation',
      ...clientOf(ctx),
      outcome: 'ok',
      reason: `grant ${grantId}`,
    });
  });
}

/**
 * oidc-provider configured as the MCP authorization specification asks of an authorization server.
 * Its keys are fixed for its life: a key rotation builds a new one over the same state.
 */
export function buildProvider(settings: ProviderSettings, state: ProviderState): Provider {
  const provider = new Provider(settings.issuer, configurationFor(settings, state));
  provider.proxy = settings.behindProxy;
  auditEvents(provider, settings.audit);
  return provider;
}
