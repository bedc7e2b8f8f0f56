import picomatch from 'picomatch';
import { type AccessPolicy, UNRESTRICTED_ACCESS } from '../core/access.ts';

/** Dagu's roles, lowest first. Every role may read, so the role is recorded, not enforced. */
export const ROLES = ['viewer', 'operator', 'developer', 'manager', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** Who is calling, once authenticated. Never carries the credential itself. */
export interface Identity {
  readonly kind: 'api_key' | 'jwt' | 'anonymous';
  /** What the audit log records: the key name, the JWT `sub`, or `anonymous`. */
  readonly id: string;
  /** A display name: the key name, the JWT `username` (else `sub`), or `anonymous`. */
  readonly name: string;
  readonly role: Role;
  /** DAG name globs this identity may read; `undefined` means every DAG. */
  readonly dags?: readonly string[];
  /** Workspace name globs this identity may read; `undefined` means every workspace. */
  readonly workspaces?: readonly string[];
  /** The identity provider's groups a token names (AUTH_JWT_GROUPS_CLAIM), for AUTH_GROUPS_FILE. */
  readonly groups?: readonly string[];
  /** The OAuth scopes a token was granted (absent for API keys and tokens that name none). */
  readonly scopes?: readonly string[];
  /** Exact workspace names its workspace scopes grant; narrows `workspaces` further. */
  readonly scopeWorkspaces?: readonly string[];
  /** False when the token lacks the workbook scope; absent means allowed. */
  readonly readsWorkbooks?: boolean;
}

export const ANONYMOUS_IDENTITY: Identity = Object.freeze({
  kind: 'anonymous',
  id: 'anonymous',
  name: 'anonymous',
  role: 'viewer',
});

type Matcher = (value: string) => boolean;
const denyAll: Matcher = () => false;

/** Compiled allowlists, keyed by their patterns: JWT identities are built per request, their claims repeat. */
const matcherCache = new Map<string, Matcher>();
const MATCHER_CACHE_LIMIT = 512;

function matcherFor(patterns: readonly string[]): Matcher {
  if (patterns.length === 0) return denyAll;
  const key = JSON.stringify(patterns);
  let matcher = matcherCache.get(key);
  if (matcher === undefined) {
    // DAG names and workspaces are single path segments: `*` matches any name, dots included. A glob
    // picomatch cannot compile (e.g. `[z-a]`) matches only its own literal text: a typo denies, never allows.
    matcher = picomatch([...patterns], { dot: true });
    if (matcherCache.size >= MATCHER_CACHE_LIMIT) matcherCache.clear();
    matcherCache.set(key, matcher);
  }
  return matcher;
}

const policies = new WeakMap<Identity, AccessPolicy>();

/** Characters that make an allowlist entry a pattern rather than one workspace's name (picomatch syntax). */
const GLOB_SYNTAX = /[*?[\]{}()!+@]/;

/**
 * What the identity may read, for the read service. An absent allowlist allows everything; an empty
 * one allows nothing (the key file refuses empty lists, so that only happens through JWT claims).
 */
export function accessPolicyFor(identity: Identity): AccessPolicy {
  const { dags, workspaces, scopeWorkspaces, readsWorkbooks } = identity;
  if (
    dags === undefined &&
    workspaces === undefined &&
    scopeWorkspaces === undefined &&
    readsWorkbooks !== false
  )
    return UNRESTRICTED_ACCESS;
  let policy = policies.get(identity);
  if (policy === undefined) {
    const dag = dags === undefined ? undefined : matcherFor(dags);
    const workspace = workspaces === undefined ? undefined : matcherFor(workspaces);
    const scoped = scopeWorkspaces === undefined ? undefined : new Set(scopeWorkspaces);
    const canReadWorkspace = (name: string) =>
      (workspace === undefined || workspace(name)) && (scoped === undefined || scoped.has(name));
    const everyWorkspace = workspaces === undefined && scopeWorkspaces === undefined;
    // Workspace scopes name workspaces exactly; key and claim allowlists may hold patterns.
    const exact =
      scopeWorkspaces ??
      (workspaces?.some((pattern) => GLOB_SYNTAX.test(pattern)) === false ? workspaces : undefined);
    policy = Object.freeze({
      canReadDag: dag === undefined ? () => true : (name: string) => dag(name),
      canReadWorkspace,
      readsWorkbooks: readsWorkbooks !== false,
      unrestricted: dags === undefined && everyWorkspace,
      everyWorkspace,
      exactWorkspaces:
        exact === undefined ? undefined : Object.freeze([...new Set(exact)].filter(canReadWorkspace)),
    });
    policies.set(identity, policy);
  }
  return policy;
}

/** The rate-limit and concurrency key: one bucket per identity; anonymous callers are told apart by address. */
export function identityKey(identity: Identity, ip: string): string {
  return identity.kind === 'anonymous' ? `anonymous:${ip}` : `${identity.kind}:${identity.id}`;
}
