/**
 * What the caller may see. The read service enforces it; it knows nothing of keys or tokens.
 * `auth/` builds one per identity; `http/` and `mcp/` carry it to the read service.
 */
export interface AccessPolicy {
  canReadDag(name: string): boolean;
  canReadWorkspace(workspace: string): boolean;
  /** True when no allowlist restricts anything (lets collections skip filtering). */
  readonly unrestricted: boolean;
}

export const UNRESTRICTED_ACCESS: AccessPolicy = {
  canReadDag: () => true,
  canReadWorkspace: () => true,
  unrestricted: true,
};
