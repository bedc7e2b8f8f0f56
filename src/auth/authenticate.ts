import { type GatewayConfig, isLoopbackHost } from '../config.ts';
import type { AuthFailureReason } from '../core/auth-reasons.ts';
import { type Log, silentLog } from '../core/log.ts';
import { merged } from '../core/merged.ts';
import { type ApiKeyStore, type ApiKeyStoreOptions, createApiKeyStore } from './api-keys.ts';
import { type DiscoveryOptions, discoverJwksUrl } from './discovery.ts';
import { applyGroups, watchGroups } from './groups.ts';
import { ANONYMOUS_IDENTITY, type Identity } from './identity.ts';
import {
  type ClaimMapping,
  createJwtVerifier,
  type JwtSettings,
  type JwtVerifier,
  looksLikeJwt,
} from './jwt.ts';
import { DEFAULT_SCOPES, type ScopeSettings, scopeGrant } from './scopes.ts';

export { AUTH_FAILURE_REASONS, type AuthFailureReason } from '../core/auth-reasons.ts';

export interface AuthFailure {
  ok: false;
  status: 401 | 403;
  code: 'unauthenticated' | 'invalid_api_key_surface' | 'unauthorized';
  reason: AuthFailureReason;
  message: string;
  /** Set when the credential was recognised but refused (a key without the `mcp` surface): for the audit log. */
  identity?: Identity;
  /** The scopes the request needs (`insufficient_scope`): named in the step-up challenge. */
  scope?: string;
}

export type AuthOutcome = { ok: true; identity: Identity } | AuthFailure;

export interface Authenticator {
  readonly anonymous: boolean;
  /** JWT verification mode. */
  readonly jwtMode: JwtVerifier['mode'] | undefined;
  /**
   * Issuers of an OAuth authorization server whose tokens are accepted (public key or JWKS mode with
   * an `http(s)` issuer): what the protected-resource metadata and the 401 challenge point clients at.
   * Empty for API keys and Dagu's HS256 login tokens, which no authorization server issues.
   */
  readonly authorizationServers: readonly string[];
  /** The scopes enforced on tokens; undefined when none are (API keys, HS256, AUTH_REQUIRE_SCOPES=never). */
  readonly scopes: ScopeSettings | undefined;
  /** Synchronous for API keys and anonymous access; a promise only when a JWT is verified. */
  authenticate(authorization: string | undefined): AuthOutcome | Promise<AuthOutcome>;
  /** Re-reads the API key file (what SIGHUP does). False when it failed and the old keys stay. */
  reloadKeys(): boolean;
  close(): Promise<void>;
}

/**
 * The listen address (anonymous access without AUTH_ALLOW_ANONYMOUS is loopback-only), the auth
 * settings, and the public URL and MCP path that name this resource (the default token audience).
 */
export type AuthenticatorConfig = Pick<GatewayConfig, 'host' | 'auth'> &
  Partial<Pick<GatewayConfig, 'publicUrl' | 'mcpPath'>>;

/** How the gateway treats a token's scopes: `auto` requires them of an authorization server's tokens. */
export type ScopeRequirement = 'auto' | 'always' | 'never';

/** Settings of OAuth tokens beyond verification; absent ones take the defaults. */
export interface OAuthSettings {
  scopes?: ScopeSettings;
  requireScopes?: ScopeRequirement;
  claims?: ClaimMapping;
}

export interface AuthenticatorOptions {
  /** The surface a key must list to be accepted. Default `mcp`. */
  surface?: 'mcp';
  /** Passed to the API key store (watch, signals, debounce, onReload). */
  keys?: Omit<ApiKeyStoreOptions, 'log'>;
  jwt?: Pick<JwtSettings, 'clockToleranceSeconds' | 'jwks' | 'jwksLoader'>;
  /** Fetch bounds of the issuer's discovery document (AUTH_JWT_ISSUER without AUTH_JWKS_URL). */
  discovery?: Omit<DiscoveryOptions, 'log'>;
}

export class AuthConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthConfigError';
  }
}

const MESSAGES = {
  missing_credentials: 'Authentication is required: send `Authorization: Bearer <API key or JWT>`.',
  malformed_header: 'The Authorization header must be `Bearer <token>`.',
  unknown_key: 'The API key was not accepted.',
  surface_denied: 'The API key is not allowed on the MCP surface.',
} as const;

const unauthenticated = (reason: AuthFailureReason, message: string): AuthFailure => ({
  ok: false,
  status: 401,
  code: 'unauthenticated',
  reason,
  message,
});

/** RFC 6750 `b64token` after `Bearer` and one or more spaces; the scheme is case-insensitive (RFC 9110 §11.1). */
const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

export function parseBearer(header: string | undefined): string | AuthFailure {
  if (header === undefined || header.trim() === '') {
    return unauthenticated('missing_credentials', MESSAGES.missing_credentials);
  }
  const match = BEARER.exec(header);
  return match ? match[1]! : unauthenticated('malformed_header', MESSAGES.malformed_header);
}

/** Every anonymous caller's outcome: one object, never changed. */
const ANONYMOUS_OUTCOME: AuthOutcome = Object.freeze({ ok: true, identity: ANONYMOUS_IDENTITY });

/**
 * No credentials configured: everyone is served as anonymous, which only a loopback bind (or an
 * explicit AUTH_ALLOW_ANONYMOUS=true) allows.
 */
function anonymousAuthenticator(config: AuthenticatorConfig, log: Log): Authenticator {
  const { auth } = config;
  if (!isLoopbackHost(config.host) && !auth.allowAnonymous) {
    throw new AuthConfigError(
      `no authentication is configured and HOST=${config.host} is not a loopback address: set AUTH_API_KEYS_FILE ` +
        'or a JWT mode (AUTH_JWT_SECRET, AUTH_JWT_PUBLIC_KEY, AUTH_JWKS_URL), or AUTH_ALLOW_ANONYMOUS=true to serve anyone',
    );
  }
  log.warn(
    // Why anonymous callers are served: the bind address, or the explicit setting.
    { host: config.host, anonymousBecause: auth.allowAnonymous ? 'AUTH_ALLOW_ANONYMOUS' : 'loopback' },
    '!!! NO AUTHENTICATION: every caller is served as "anonymous" with unrestricted read access. ' +
      'Configure AUTH_API_KEYS_FILE or a JWT mode before exposing the gateway. !!!',
  );
  return {
    anonymous: true,
    jwtMode: undefined,
    authorizationServers: [],
    scopes: undefined,
    authenticate: () => ANONYMOUS_OUTCOME,
    reloadKeys: () => false,
    close: async () => {},
  };
}

/**
 * AUTH_JWT_ISSUER alone (no secret, public key or JWKS URL): the JWKS URL is read from the issuer's
 * discovery document. Undefined in every other configuration.
 */
function issuerToDiscover(auth: AuthenticatorConfig['auth']): string | undefined {
  if (auth.jwtSecret !== undefined || auth.jwtPublicKey !== undefined || auth.jwksUrl !== undefined) {
    return undefined;
  }
  if (auth.jwtIssuer === undefined) return undefined;
  const issuers = issuerUrls(auth.jwtIssuer);
  if (issuers.length !== 1 || auth.jwtIssuer.includes(',')) {
    throw new AuthConfigError(
      'AUTH_JWT_ISSUER without AUTH_JWKS_URL must be one http:// or https:// URL, the issuer whose ' +
        'discovery document names the JWKS',
    );
  }
  return issuers[0];
}

/** The JWT verifier of the configured mode (shared secret, public key or JWKS), with its checks. */
async function jwtVerifierFor(
  auth: AuthenticatorConfig['auth'],
  audience: string | undefined,
  options: AuthenticatorOptions,
  log: Log,
): Promise<JwtVerifier> {
  // The built-in authorization server's keys are read in-process, not discovered.
  const discover = options.jwt?.jwksLoader === undefined ? issuerToDiscover(auth) : undefined;
  const jwksUrl =
    discover === undefined
      ? auth.jwksUrl
      : (await discoverJwksUrl(discover, { ...options.discovery, log })).jwksUrl;
  return createJwtVerifier({
    ...(auth.jwtSecret !== undefined ? { secret: auth.jwtSecret } : {}),
    ...(auth.jwtPublicKey !== undefined ? { publicKey: auth.jwtPublicKey } : {}),
    ...(jwksUrl !== undefined ? { jwksUrl } : {}),
    ...(auth.jwtIssuer !== undefined ? { issuer: auth.jwtIssuer } : {}),
    ...(audience !== undefined ? { audience } : {}),
    ...(auth.claims !== undefined ? { claims: auth.claims } : {}),
    ...options.jwt,
    log,
  });
}

/** A token's identity as its scopes allow it, or the step-up refusal when it lacks the read scope. */
function scoped(identity: Identity, scopes: ScopeSettings | undefined): AuthOutcome {
  if (scopes === undefined) return { ok: true, identity };
  const grant = scopeGrant(identity.scopes ?? [], scopes);
  if (grant.missing.length > 0) {
    return {
      ok: false,
      status: 403,
      code: 'unauthorized',
      reason: 'insufficient_scope',
      message: `The bearer token lacks the scope ${grant.missing.join(' ')} this endpoint requires.`,
      identity,
      scope: grant.missing.join(' '),
    };
  }
  return {
    ok: true,
    identity: Object.freeze(
      merged(identity, {
        readsWorkbooks: grant.readsWorkbooks,
        ...(grant.workspaces === undefined ? {} : { scopeWorkspaces: grant.workspaces }),
      }),
    ),
  };
}

/** Settings that have no effect with the credentials configured: said once at start. */
function warnIgnoredSettings(auth: AuthenticatorConfig['auth'], jwtConfigured: boolean, log: Log): void {
  if (auth.allowAnonymous) {
    log.warn({}, 'AUTH_ALLOW_ANONYMOUS is ignored: credentials are configured, so every request needs one');
  }
  if (auth.jwtAudience !== undefined && !jwtConfigured) {
    log.warn({}, 'AUTH_JWT_AUDIENCE is ignored: no JWT mode is configured');
  }
}

/** The scopes a token must carry: always, never, or (`auto`) when an authorization server issues them. */
function requiredScopes(auth: AuthenticatorConfig['auth'], oauthMode: boolean): ScopeSettings | undefined {
  const requirement = auth.requireScopes ?? 'auto';
  return requirement === 'always' || (requirement === 'auto' && oauthMode)
    ? (auth.scopes ?? DEFAULT_SCOPES)
    : undefined;
}

/** What one presented credential is checked against. */
interface CredentialSources {
  keys: ApiKeyStore | undefined;
  jwt: JwtVerifier | undefined;
  groups: ReturnType<typeof watchGroups> | undefined;
  scopes: ScopeSettings | undefined;
  surface: 'mcp';
}

/**
 * The check of an `Authorization` header: a JWT-shaped token goes to the verifier (when there is one),
 * anything else to the key file. Not async: an API key is checked synchronously, and a promise per
 * request would cost a turn; only a JWT's verification answers with a promise.
 */
function credentialCheck(sources: CredentialSources): Authenticator['authenticate'] {
  const { keys, jwt, groups, scopes, surface } = sources;
  async function authenticateJwt(verifier: JwtVerifier, token: string): Promise<AuthOutcome> {
    const result = await verifier.verify(token);
    if (!result.ok) return unauthenticated(result.reason, result.message);
    return scoped(
      groups === undefined ? result.identity : applyGroups(result.identity, groups.current()),
      scopes,
    );
  }

  return (header) => {
    const token = parseBearer(header);
    if (typeof token !== 'string') return token;
    if (jwt !== undefined && (keys === undefined || looksLikeJwt(token))) return authenticateJwt(jwt, token);
    const entry = keys?.find(token);
    if (entry === undefined) return unauthenticated('unknown_key', MESSAGES.unknown_key);
    if (!entry.surfaces.includes(surface)) {
      return {
        ok: false,
        status: 403,
        code: 'invalid_api_key_surface',
        reason: 'surface_denied',
        message: MESSAGES.surface_denied,
        identity: entry.identity,
      };
    }
    return { ok: true, identity: entry.identity };
  };
}

/**
 * Builds the authenticator from the auth configuration. Throws AuthConfigError (or the key file's and
 * JWT's own errors) for a configuration the gateway must not start with, e.g. no credentials on a
 * non-loopback bind without AUTH_ALLOW_ANONYMOUS=true.
 */
export async function createAuthenticator(
  config: AuthenticatorConfig,
  log: Log = silentLog,
  options: AuthenticatorOptions = {},
): Promise<Authenticator> {
  const { auth } = config;
  const surface = options.surface ?? 'mcp';
  // AUTH_JWT_ISSUER alone is JWKS mode too, its set found through the issuer's discovery document.
  const jwtConfigured = [auth.jwtSecret, auth.jwtPublicKey, auth.jwksUrl, auth.jwtIssuer].some(
    (value) => value !== undefined,
  );

  if (auth.apiKeysFile === undefined && !jwtConfigured) return anonymousAuthenticator(config, log);
  warnIgnoredSettings(auth, jwtConfigured, log);
  const oauthMode = jwtConfigured && auth.jwtSecret === undefined;
  const audience = oauthMode ? tokenAudience(config, log) : auth.jwtAudience;

  const keys: ApiKeyStore | undefined =
    auth.apiKeysFile === undefined
      ? undefined
      : createApiKeyStore(auth.apiKeysFile, { ...options.keys, log });
  let jwt: JwtVerifier | undefined;
  try {
    jwt = jwtConfigured ? await jwtVerifierFor(auth, audience, options, log) : undefined;
  } catch (error) {
    keys?.close();
    throw error;
  }
  let groups: ReturnType<typeof watchGroups> | undefined;
  try {
    groups =
      auth.groupsFile === undefined ? undefined : watchGroups(auth.groupsFile, { ...options.keys, log });
  } catch (error) {
    keys?.close();
    await jwt?.close();
    throw error;
  }

  const scopes = requiredScopes(auth, oauthMode);

  const authenticate = credentialCheck({ keys, jwt, groups, scopes, surface });

  return {
    anonymous: false,
    jwtMode: jwt?.mode,
    authorizationServers: oauthMode ? issuerUrls(auth.jwtIssuer) : [],
    scopes,
    authenticate,
    reloadKeys: () => keys?.reload('manual') ?? false,
    async close() {
      keys?.close();
      groups?.close();
      await jwt?.close();
    },
  };
}

/** The `iss` values that are URLs of an authorization server a client can discover. */
const issuerUrls = (issuers: string | undefined): string[] =>
  (issuers ?? '')
    .split(',')
    .map((issuer) => issuer.trim())
    .filter((issuer) => /^https?:\/\/[^\s]+$/.test(issuer));

/**
 * The audience an authorization server's token must name: AUTH_JWT_AUDIENCE, else this resource
 * (`<PUBLIC_URL><MCP_PATH>`, RFC 8707). Without either, any token of the issuer would be accepted
 * whatever resource it was issued for: refused off loopback, warned about on it.
 */
function tokenAudience(config: AuthenticatorConfig, log: Log): string | undefined {
  if (config.auth.jwtAudience !== undefined) return config.auth.jwtAudience;
  if (config.publicUrl !== undefined)
    return `${config.publicUrl.replace(/\/+$/, '')}${config.mcpPath ?? '/mcp'}`;
  const problem =
    'no token audience: set PUBLIC_URL (the audience is then <PUBLIC_URL>/mcp) or AUTH_JWT_AUDIENCE, ' +
    'or tokens issued for any other resource are accepted';
  if (!isLoopbackHost(config.host)) throw new AuthConfigError(problem);
  log.warn({ host: config.host }, problem);
  return undefined;
}
