import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import { cutToCodePoints } from '../core/code-points.ts';
import { type Log, silentLog } from '../core/log.ts';
import { type Identity, isRole } from './identity.ts';
import {
  algorithmForKey,
  createJwksCache,
  type JwksCache,
  JwksKeyError,
  type JwksLoader,
  type JwksOptions,
} from './jwks.ts';
import { grantedScopes } from './scopes.ts';

export type JwtFailureReason =
  | 'invalid_token'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_audience'
  | 'wrong_issuer'
  | 'wrong_algorithm';

export type JwtResult =
  | { ok: true; identity: Identity }
  | { ok: false; reason: JwtFailureReason; message: string };

export interface JwtSettings {
  /** HS256 shared secret (with Dagu's token secret, Dagu's own login tokens are accepted). */
  secret?: string;
  /** RS256/ES256 public key: PEM text (`\n` escapes allowed) or a path to a PEM file. */
  publicKey?: string;
  jwksUrl?: string;
  /** A JWKS this process reads itself (the built-in authorization server's rotating keys). */
  jwksLoader?: JwksLoader;
  /** Accepted `iss` values (a list or comma-separated); when set, tokens without `iss` are refused. */
  issuer?: string | string[];
  /** Accepted `aud` values (a list or comma-separated); when set, tokens without `aud` are refused. */
  audience?: string | string[];
  clockToleranceSeconds?: number;
  log?: Log;
  jwks?: Omit<JwksOptions, 'log'>;
  claims?: ClaimMapping;
}

export interface JwtVerifier {
  readonly mode: 'hs256' | 'public_key' | 'jwks';
  readonly algorithms: readonly string[];
  verify(token: string): Promise<JwtResult>;
  close(): Promise<void>;
}

export class JwtConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JwtConfigError';
  }
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Three base64url segments (the last may be empty, as with `alg: none`). API keys never contain a dot. */
export const looksLikeJwt = (token: string): boolean => JWT_SHAPE.test(token);

const MESSAGES: Record<JwtFailureReason, string> = {
  invalid_token: 'The bearer token is not valid.',
  expired: 'The bearer token has expired.',
  not_yet_valid: 'The bearer token is not valid yet.',
  wrong_audience: 'The bearer token was issued for another audience.',
  wrong_issuer: 'The bearer token was not issued by an accepted issuer.',
  wrong_algorithm: 'The bearer token is not signed with an accepted algorithm.',
};

const fail = (reason: JwtFailureReason): JwtResult => ({ ok: false, reason, message: MESSAGES[reason] });

/** Maps fast-jwt's TokenError (what @fastify/jwt throws) and our JWKS errors to a bounded reason. */
function reasonFor(error: unknown): JwtFailureReason {
  const { code, message, originalError } = (error ?? {}) as {
    code?: string;
    message?: string;
    originalError?: unknown;
  };
  switch (code) {
    case 'FAST_JWT_EXPIRED':
      return 'expired';
    case 'FAST_JWT_INACTIVE':
      return 'not_yet_valid';
    case 'FAST_JWT_INVALID_ALGORITHM':
    case 'FAST_JWT_MISSING_SIGNATURE':
      return 'wrong_algorithm';
    case 'FAST_JWT_INVALID_CLAIM_VALUE':
    case 'FAST_JWT_INVALID_CLAIM_TYPE':
    case 'FAST_JWT_MISSING_REQUIRED_CLAIM':
      if (/\baud\b/.test(message ?? '')) return 'wrong_audience';
      if (/\biss\b/.test(message ?? '')) return 'wrong_issuer';
      return 'invalid_token';
    case 'FAST_JWT_KEY_FETCHING_ERROR':
      return originalError instanceof JwksKeyError ? originalError.reason : 'invalid_token';
    default:
      return error instanceof JwksKeyError ? error.reason : 'invalid_token';
  }
}

const MAX_ALLOWLIST = 256;

/** A claim holding a list of names or globs: undefined when absent, false when malformed. */
function globList(value: unknown): readonly string[] | undefined | false {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length > MAX_ALLOWLIST) return false;
  if (!value.every((item) => typeof item === 'string' && item.length > 0 && item.length <= 256)) return false;
  return Object.freeze([...(value as string[])]);
}

/**
 * Claims → identity. `sub` is the identity (Dagu: the user id), `username` its display name, `role`
 * one of Dagu's roles (absent: viewer), and optional `dags` / `workspaces` arrays restrict what it reads.
 * Returns undefined when a claim is malformed or the role unknown.
 */
export function identityFromClaims(
  claims: Record<string, unknown>,
  mapping: ClaimMapping = DAGU_CLAIMS,
): Identity | undefined {
  const id = claims[mapping.identity];
  const role = claims[mapping.role];
  // A blank identity would be audited as no one.
  if (typeof id !== 'string' || id.trim().length === 0 || id.length > 256) return undefined;
  if (role !== undefined && !isRole(role)) return undefined;
  const dags = globList(claims.dags);
  const workspaces = globList(claims.workspaces);
  const scopes = grantedScopes(claims);
  const groupClaim = claims[mapping.groups ?? 'groups'];
  const groups = typeof groupClaim === 'string' ? globList([groupClaim]) : globList(groupClaim);
  if (dags === false || workspaces === false || scopes === false || groups === false) return undefined;
  const name = [claims.username, claims.preferred_username, claims.email].find(
    (value): value is string => typeof value === 'string' && value.trim().length > 0,
  );
  return Object.freeze({
    kind: 'jwt',
    id,
    name: name === undefined ? id : cutToCodePoints(name, 128),
    role: role ?? 'viewer',
    ...(dags === undefined ? {} : { dags }),
    ...(workspaces === undefined ? {} : { workspaces }),
    ...(scopes === undefined ? {} : { scopes }),
    ...(groups === undefined ? {} : { groups }),
  });
}

/** Which claims name the caller and its role: Dagu's own (`sub`, `role`) unless configured. */
export interface ClaimMapping {
  identity: string;
  role: string;
  /** The claim listing the caller's groups (default `groups`). */
  groups?: string;
}

export const DAGU_CLAIMS: ClaimMapping = { identity: 'sub', role: 'role' };

function readPemFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new JwtConfigError(
      `AUTH_JWT_PUBLIC_KEY: neither PEM text nor a readable file (${(error as NodeJS.ErrnoException).code})`,
    );
  }
}

/** PEM text (from the environment, where newlines are often written `\n`) or a path to a PEM file. */
function readPublicKey(value: string, log: Log): { pem: string; alg: 'RS256' | 'ES256' } {
  const text = value.includes('-----BEGIN') ? value.replace(/\\n/g, '\n') : readPemFile(value);
  if (/PRIVATE KEY/.test(text)) {
    log.warn(
      {},
      'AUTH_JWT_PUBLIC_KEY holds a private key; only its public half is used, keep private keys elsewhere',
    );
  }
  let key: ReturnType<typeof createPublicKey>;
  try {
    key = createPublicKey(text);
  } catch (error) {
    throw new JwtConfigError(
      `AUTH_JWT_PUBLIC_KEY: not a readable PEM public key (${(error as Error).message})`,
    );
  }
  const alg = algorithmForKey(key);
  if (typeof alg !== 'string') throw new JwtConfigError(`AUTH_JWT_PUBLIC_KEY: unsupported ${alg.unusable}`);
  return { pem: key.export({ type: 'spki', format: 'pem' }).toString(), alg };
}

const list = (value: string | string[] | undefined): string[] | undefined => {
  const items = (Array.isArray(value) ? value : (value?.split(',') ?? []))
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
  return items.length > 0 ? items : undefined;
};

/** What verifyToken answers for a cached verification whose key the JWKS no longer publishes. */
const KEY_LEFT_THE_SET = Symbol('key left the JWKS');
/** Per-call verify options: a verifier of its own, without a cache. */
const UNCACHED = { cache: false } as const;

/** A JSON part of a token (0: header, 1: payload) as an object, when it is readable. */
function tokenPart(token: string, index: 0 | 1): Record<string, unknown> | undefined {
  try {
    const part: unknown = JSON.parse(Buffer.from(token.split('.')[index] ?? '', 'base64url').toString());
    return typeof part === 'object' && part !== null ? (part as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The claims of a valid token. A JWKS verification stays cached only while the set still publishes
 * the token's key (by `kid`): once a refresh drops it, the token is refused at once. A token without
 * a readable `kid` names no key to check for, so it is verified afresh each time (about 3 µs more).
 */
async function verifyToken(
  host: FastifyInstance,
  jwks: JwksCache | undefined,
  token: string,
): Promise<unknown> {
  if (jwks === undefined) return host.jwt.verify(token);
  const kid = tokenPart(token, 0)?.kid;
  if (typeof kid !== 'string') return host.jwt.verify(token, UNCACHED);
  const claims: unknown = await host.jwt.verify(token);
  return jwks.publishes(kid) ? claims : KEY_LEFT_THE_SET;
}

/**
 * For a token refused as wrong_issuer (fast-jwt checks claims after the signature, so its `iss` is
 * the key holder's): when it differs from a configured issuer only by a trailing slash, the setting
 * is wrong, not the token. Said once per such issuer, for at most 8.
 */
function trailingSlashHint(issuers: readonly string[] | undefined, log: Log): (token: string) => void {
  const hinted = new Set<string>();
  const bare = (issuer: string) => issuer.replace(/\/+$/, '');
  return (token) => {
    const iss = tokenPart(token, 1)?.iss;
    if (typeof iss !== 'string' || hinted.has(iss) || hinted.size >= 8) return;
    const configured = issuers?.find((issuer) => issuer !== iss && bare(issuer) === bare(iss));
    if (configured === undefined) return;
    hinted.add(iss);
    log.warn(
      { configured, tokenIssuer: iss },
      'tokens are refused as wrong_issuer: their iss differs from AUTH_JWT_ISSUER only by a trailing slash; set AUTH_JWT_ISSUER to the issuer the provider reports',
    );
  };
}

/** What verifies a token's signature: a secret or PEM key, or (JWKS) a lookup by the token's header. */
type VerifyingKey = string | ((decoded: { header: Record<string, unknown> }) => Promise<string>);
type JwtAlgorithm = 'HS256' | 'RS256' | 'ES256';

/** A Fastify instance holding @fastify/jwt's verifier (fast-jwt) with the gateway's rules, ready. */
async function verifyingHost(rules: {
  secret: VerifyingKey;
  algorithms: JwtAlgorithm[];
  issuers: string[] | undefined;
  audiences: string[] | undefined;
  toleranceMs: number;
}): Promise<FastifyInstance> {
  const { secret, algorithms, issuers, audiences, toleranceMs } = rules;
  const host: FastifyInstance = Fastify({ logger: false });
  // Loaded only when JWTs are configured: a gateway of API keys never holds the package and fast-jwt.
  const { default: fastifyJwt } = await import('@fastify/jwt');
  await host.register(fastifyJwt, {
    // Only a public (verifying) side: the gateway never signs tokens.
    secret: { public: secret },
    verify: {
      algorithms,
      clockTolerance: toleranceMs,
      // fast-jwt skips the iss/aud checks on a token without that claim, so configured ones are required.
      requiredClaims: ['exp', 'sub', ...(issuers ? ['iss'] : []), ...(audiences ? ['aud'] : [])],
      ...(issuers ? { allowedIss: issuers } : {}),
      ...(audiences ? { allowedAud: audiences } : {}),
      // A client repeats its token on every call, so successes are cached (never past `exp`, at most a
      // minute); failures are never served from the cache (fast-jwt would otherwise keep them for the skew).
      cache: 1024,
      cacheTTL: 60_000,
      errorCacheTTL: () => -toleranceMs - 1,
    },
  });
  await host.ready();
  return host;
}

/**
 * JWT verification with @fastify/jwt (and so fast-jwt). Its `fastify.jwt.verify` lives on a Fastify
 * instance, so the verifier keeps a private one that never listens. Algorithms are pinned per mode
 * (HS256 for a secret; RS256 or ES256 from the public key's type; RS256/ES256 per JWKS key), which
 * refuses `alg: none` and HS/RS confusion; `exp` and `sub` are required; `exp`/`nbf` allow a small skew.
 */
export async function createJwtVerifier(settings: JwtSettings): Promise<JwtVerifier> {
  const log = settings.log ?? silentLog;
  const modes = [settings.secret, settings.publicKey, settings.jwksUrl, settings.jwksLoader].filter(
    (value) => value !== undefined,
  );
  if (modes.length !== 1)
    throw new JwtConfigError('configure exactly one of a JWT secret, public key or JWKS URL');

  let mode: JwtVerifier['mode'];
  let algorithms: JwtAlgorithm[];
  let secret: VerifyingKey;
  let jwks: JwksCache | undefined;
  if (settings.secret !== undefined) {
    if (settings.secret.length < 32) throw new JwtConfigError('AUTH_JWT_SECRET: use at least 32 characters');
    mode = 'hs256';
    algorithms = ['HS256'];
    secret = settings.secret;
  } else if (settings.publicKey !== undefined) {
    const { pem, alg } = readPublicKey(settings.publicKey, log);
    mode = 'public_key';
    algorithms = [alg];
    secret = pem;
  } else {
    mode = 'jwks';
    algorithms = ['RS256', 'ES256'];
    const cache = createJwksCache(settings.jwksUrl ?? settings.jwksLoader!, { ...settings.jwks, log });
    jwks = cache;
    // fast-jwt's key fetcher form: called with the decoded token, the key is chosen by `kid` and `alg`.
    secret = async (decoded) => (await cache.keyFor(decoded.header)).pem;
  }

  const issuers = list(settings.issuer);
  const audiences = list(settings.audience);
  const toleranceMs = (settings.clockToleranceSeconds ?? 30) * 1000;
  const host = await verifyingHost({ secret, algorithms, issuers, audiences, toleranceMs });
  if (jwks) void jwks.refresh();

  const hintTrailingSlash = trailingSlashHint(issuers, log);
  log.info({ mode, algorithms, issuers, audiences }, 'JWT verification enabled');

  return {
    mode,
    algorithms,
    async verify(token) {
      let claims: unknown;
      try {
        claims = await verifyToken(host, jwks, token);
      } catch (error) {
        const reason = reasonFor(error);
        if (reason === 'wrong_issuer') hintTrailingSlash(token);
        return fail(reason);
      }
      if (claims === KEY_LEFT_THE_SET) return fail('invalid_token');
      const identity =
        typeof claims === 'object' && claims !== null
          ? identityFromClaims(claims as Record<string, unknown>, settings.claims)
          : undefined;
      return identity === undefined ? fail('invalid_token') : { ok: true, identity };
    },
    close: () => host.close(),
  };
}
