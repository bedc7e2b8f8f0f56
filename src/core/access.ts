/**
 * What the caller may see. The read service enforces it; it knows nothing of keys or tokens.
 * `auth/` builds one per identity; `http/` and `mcp/` carry it to the read service.
 */
export interface AccessPolicy {
  canReadDag(name: string): boolean;
  canReadWorkspace(workspace: string): boolean;
  /** False when the credential was not granted workbook reads (an OAuth token without that scope). */
  readonly readsWorkbooks: boolean;
  /** True when no allowlist restricts anything (lets collections skip filtering). */
  readonly unrestricted: boolean;
}

export const UNRESTRICTED_ACCESS: AccessPolicy = {
  canReadDag: () => true,
  canReadWorkspace: () => true,
  readsWorkbooks: true,
  unrestricted: true,
};
