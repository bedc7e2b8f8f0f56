/**
 * OAuth scopes of this resource server (MCP authorization: scopes are declared in the
 * protected-resource metadata, named in challenges, and enforced). A token of an authorization server
 * must carry the read scope to use `/mcp`; the workbook target also needs the workbook scope; scopes
 * `<workspace prefix><name>` narrow the workspaces it reads to those named.
 */
export interface ScopeSettings {
  /** Required for every call at `/mcp` (default `dagu.read`). */
  read: string;
  /** Required in addition for the `workbook` target (default `dagu.workbook`). */
  workbook: string;
  /** `dagu.read:workspace/` → a scope `dagu.read:workspace/ops` limits reads to workspace `ops`. */
  workspacePrefix: string;
}

export const DEFAULT_SCOPES: ScopeSettings = {
  read: 'dagu.read',
  workbook: 'dagu.workbook',
  workspacePrefix: 'dagu.read:workspace/',
};

/** The scopes the metadata lists: the ones a client can ask for by name (once each). */
export const supportedScopes = (settings: ScopeSettings): string[] => [
  ...new Set([settings.read, settings.workbook]),
];

const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,256}$/;
const MAX_SCOPES = 256;

/**
 * The granted scopes of a token's claims: RFC 9068 / RFC 8693 `scope` (space-separated), or `scp`
 * (a list or a string, as Azure AD and Okta write it). Undefined when the token names none; false when
 * the claim is malformed.
 */
export function grantedScopes(claims: Record<string, unknown>): readonly string[] | undefined | false {
  const raw = claims.scope ?? claims.scp;
  if (raw === undefined) return undefined;
  const items = typeof raw === 'string' ? raw.split(' ').filter((item) => item !== '') : raw;
  if (!Array.isArray(items) || items.length > MAX_SCOPES) return false;
  if (!items.every((item) => typeof item === 'string' && SCOPE_TOKEN.test(item))) return false;
  return Object.freeze([...new Set(items as string[])]);
}

/** What a token's scopes allow beyond the read scope, for the access policy. */
export interface ScopeGrant {
  /** The scopes the token lacks for `/mcp` (empty: it may call). */
  missing: string[];
  readsWorkbooks: boolean;
  /** Workspaces named by workspace scopes; undefined when the token carries none (no narrowing). */
  workspaces: readonly string[] | undefined;
}

/**
 * The read scope, or at least one workspace scope (a narrower grant of the same), lets a token call.
 */
export function scopeGrant(scopes: readonly string[], settings: ScopeSettings): ScopeGrant {
  const workspaces = scopes
    .filter((scope) => scope.startsWith(settings.workspacePrefix))
    .map((scope) => scope.slice(settings.workspacePrefix.length))
    .filter((name) => name.length > 0);
  const reads = scopes.includes(settings.read) || workspaces.length > 0;
  return {
    missing: reads ? [] : [settings.read],
    readsWorkbooks: reads && scopes.includes(settings.workbook),
    workspaces: workspaces.length > 0 ? Object.freeze(workspaces) : undefined,
  };
}
