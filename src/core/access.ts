/**
 * What the caller may see. The read service enforces it; it knows nothing of keys or tokens.
 * `auth/` builds one per identity; `http/` and `mcp/` carry it to the read service.
 *
 * Workspaces mean what Dagu means: a DAG (and each of its runs) belongs to the workspace its
 * `workspace` label names, and a DAG without that label to `default` (src/read/upstream/access.ts).
 */
export interface AccessPolicy {
  canReadDag(name: string): boolean;
  canReadWorkspace(workspace: string): boolean;
  /** False when the credential was not granted workbook reads (an OAuth token without that scope). */
  readonly readsWorkbooks: boolean;
  /** True when no allowlist restricts anything (lets collections skip filtering). */
  readonly unrestricted: boolean;
  /** True when no workspace narrowing applies (reads need not learn a DAG's workspace first). */
  readonly everyWorkspace: boolean;
  /**
   * Every workspace the caller may read, when the grants name them exactly (no pattern among them);
   * `undefined` when every workspace is readable or a pattern decides. Lets Dagu filter a list when it
   * holds one name, and completion offer the granted workspaces.
   */
  readonly exactWorkspaces: readonly string[] | undefined;
}

export const UNRESTRICTED_ACCESS: AccessPolicy = Object.freeze({
  canReadDag: () => true,
  canReadWorkspace: () => true,
  readsWorkbooks: true,
  unrestricted: true,
  everyWorkspace: true,
  exactWorkspaces: undefined,
});
