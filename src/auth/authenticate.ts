import { type GatewayConfig, isLoopbackHost } from '../config.ts';
import type { AuthFailureReason } from '../core/auth-reasons.ts';
import { type Log, silentLog } from '../core/log.ts';
import { type ApiKeyStore, type ApiKeyStoreOptions, createApiKeyStore } from './api-keys.ts';
import { ANONYMOUS_IDENTITY, type Identity } from './identity.ts';
import { createJwtVerifier, type JwtSettings, type JwtVerifier, looksLikeJwt } from './jwt.ts';

export { AUTH_FAILURE_REASONS, type AuthFailureReason } from '../core/auth-reasons.ts';

export interface AuthFailure {
  ok: false;
  status: 401 | 403;
  code: 'unauthenticated' | 'invalid_api_key_surface';
  reason: AuthFailureReason;
  message: string;
  /** Set when the credential was recognised but refused (a key without the `mcp` surface): for the audit log. */
  identity?: Identity;
}

export type AuthOutcome = { ok: true; identity: Identity } | AuthFailure;

export interface Authenticator {
  readonly anonymous: boolean;
  /** JWT verification mode, for the protected-resource metadata. */
  readonly jwtMode: JwtVerifier['mode'] | undefined;
  authenticate(authorization: string | undefined): Promise<AuthOutcome>;
  /** Re-reads the API key file (what SIGHUP does). False when it failed and the old keys stay. */
  reloadKeys(): boolean;
  close(): Promise<void>;
}

/** The listen address (anonymous access without AUTH_ALLOW_ANONYMOUS is loopback-only) and the auth settings. */
export type AuthenticatorConfig = Pick<GatewayConfig, 'host' | 'auth'>;

export interface AuthenticatorOptions {
  /** The surface a key must list to be accepted. Default `mcp`. */
  surface?: 'mcp';
  /** Passed to the API key store (watch, signals, debounce, onReload). */
  keys?: Omit<ApiKeyStoreOptions, 'log'>;
  jwt?: Pick<JwtSettings, 'clockToleranceSeconds' | 'jwks'>;
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
  const jwtConfigured =
    auth.jwtSecret !== undefined || auth.jwtPublicKey !== undefined || auth.jwksUrl !== undefined;

  if (auth.apiKeysFile === undefined && !jwtConfigured) {
    if (!isLoopbackHost(config.host) && !auth.allowAnonymous) {
      throw new AuthConfigError(
        `no authentication is configured and HOST=${config.host} is not a loopback address: set AUTH_API_KEYS_FILE ` +
          'or a JWT mode (AUTH_JWT_SECRET, AUTH_JWT_PUBLIC_KEY, AUTH_JWKS_URL), or AUTH_ALLOW_ANONYMOUS=true to serve anyone',
      );
    }
    log.warn(
      { host: config.host, allowAnonymous: auth.allowAnonymous },
      '!!! NO AUTHENTICATION: every caller is served as "anonymous" with unrestricted read access. ' +
        'Configure AUTH_API_KEYS_FILE or a JWT mode before exposing the gateway. !!!',
    );
    return {
      anonymous: true,
      jwtMode: undefined,
      authenticate: async () => ({ ok: true, identity: ANONYMOUS_IDENTITY }),
      reloadKeys: () => false,
      close: async () => {},
    };
  }
  if (auth.allowAnonymous) {
    log.warn({}, 'AUTH_ALLOW_ANONYMOUS is ignored: credentials are configured, so every request needs one');
  }
  if ((auth.jwtIssuer !== undefined || auth.jwtAudience !== undefined) && !jwtConfigured) {
    log.warn({}, 'AUTH_JWT_ISSUER / AUTH_JWT_AUDIENCE are ignored: no JWT mode is configured');
  }

  const keys: ApiKeyStore | undefined =
    auth.apiKeysFile === undefined
      ? undefined
      : createApiKeyStore(auth.apiKeysFile, { ...options.keys, log });
  let jwt: JwtVerifier | undefined;
  try {
    jwt = jwtConfigured
      ? await createJwtVerifier({
          ...(auth.jwtSecret !== undefined ? { secret: auth.jwtSecret } : {}),
          ...(auth.jwtPublicKey !== undefined ? { publicKey: auth.jwtPublicKey } : {}),
          ...(auth.jwksUrl !== undefined ? { jwksUrl: auth.jwksUrl } : {}),
          ...(auth.jwtIssuer !== undefined ? { issuer: auth.jwtIssuer } : {}),
          ...(auth.jwtAudience !== undefined ? { audience: auth.jwtAudience } : {}),
          ...options.jwt,
          log,
        })
      : undefined;
  } catch (error) {
    keys?.close();
    throw error;
  }

  async function authenticate(header: string | undefined): Promise<AuthOutcome> {
    const token = parseBearer(header);
    if (typeof token !== 'string') return token;
    if (jwt !== undefined && (keys === undefined || looksLikeJwt(token))) {
      const result = await jwt.verify(token);
      return result.ok ? result : unauthenticated(result.reason, result.message);
    }
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
  }

  return {
    anonymous: false,
    jwtMode: jwt?.mode,
    authenticate,
    reloadKeys: () => keys?.reload('manual') ?? false,
    async close() {
      keys?.close();
      await jwt?.close();
    },
  };
}
