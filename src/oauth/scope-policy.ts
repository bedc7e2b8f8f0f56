import { readFileSync } from 'node:fs';
import picomatch from 'picomatch';
import { applyGroups, parseGroups } from '../auth/groups.ts';
import { type ClaimMapping, identityFromClaims } from '../auth/jwt.ts';
import type { ScopeSettings } from '../auth/scopes.ts';

/** A space-separated scope parameter as its scopes (none for a missing one). */
export const scopeList = (value: unknown): string[] =>
  String(value ?? '')
    .split(' ')
    .filter((scope) => scope !== '');

export type ScopeDecision =
  | { ok: true; granted: string[]; rejected: string[] }
  | { ok: false; reason: string };

/**
 * What a signed-in user may be granted of what a host asked for: decided by the user's claims at the
 * upstream provider (the claim settings) and AUTH_GROUPS_FILE, never by the request alone. A user no
 * group grants anything gets nothing; a workspace scope only for a workspace the user may read.
 */
export function decideScopes(
  claims: Record<string, unknown>,
  requested: readonly string[],
  settings: { scopes: ScopeSettings; claims: ClaimMapping; groupsFile: string | undefined },
): ScopeDecision {
  // The host's request cannot add claims: only the identity, role and groups are read.
  const { scope: _s, scp: _p, dags: _d, workspaces: _w, ...own } = claims;
  let identity = identityFromClaims(own, settings.claims);
  if (identity === undefined)
    return { ok: false, reason: 'the upstream identity has no usable identity claim' };
  if (settings.groupsFile !== undefined) {
    const policy = parseGroups(readFileSync(settings.groupsFile, 'utf8'), settings.groupsFile);
    identity = applyGroups(identity, policy);
    if (identity.dags?.length === 0 || identity.workspaces?.length === 0)
      return { ok: false, reason: 'no group of AUTH_GROUPS_FILE grants this user access' };
  }
  const { read, workbook, workspacePrefix } = settings.scopes;
  const workspaceAllowed =
    identity.workspaces === undefined ? () => true : picomatch([...identity.workspaces]);
  const allowed = (scope: string) =>
    scope === read ||
    scope === workbook ||
    scope === 'openid' ||
    scope === 'offline_access' ||
    (scope.startsWith(workspacePrefix) && workspaceAllowed(scope.slice(workspacePrefix.length)));
  return {
    ok: true,
    granted: requested.filter(allowed),
    rejected: requested.filter((scope) => !allowed(scope)),
  };
}

/** The claims kept of an upstream sign-in: those the gateway's identity is made of. */
export function keptClaims(claims: Record<string, unknown>, mapping: ClaimMapping): Record<string, unknown> {
  const names = new Set([
    mapping.identity,
    mapping.role,
    mapping.groups ?? 'groups',
    'email',
    'preferred_username',
  ]);
  return Object.fromEntries(Object.entries(claims).filter(([name]) => names.has(name)));
}
