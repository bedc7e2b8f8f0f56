import { ALL_WORKSPACES, DEFAULT_WORKSPACE } from '../../core/contract.ts';
import { dagLabels, serves } from '../../dagu/dialect.ts';
import { type ReadError, readError } from '../errors.ts';
import { failure } from './fetch.ts';
import type { ReadScope } from './scope.ts';

/** The allowlist checks every target makes before it asks Dagu for anything. */

export const DAG_FILE_EXTENSION = /\.ya?ml$/i;

/** The `unauthorized` error when the caller may not read DAG `name`. */
export function assertDagReadable(scope: ReadScope, name: string): void {
  // Dagu also finds a DAG by its file name (`two-steps.yaml`): an alias that would slip past name
  // globs and give one DAG a second URI. The DAG name is the file name without the extension.
  if (DAG_FILE_EXTENSION.test(name)) {
    throw readError.notFound(
      `DAG ${JSON.stringify(name)} does not exist; DAG names have no .yaml extension.`,
    );
  }
  if (scope.call.access.canReadDag(name)) return;
  throw readError.unauthorized(`The credential is not authorized to read DAG ${JSON.stringify(name)}.`);
}

/** A workspace the caller names explicitly and may not read is refused, not silently emptied. */
export function assertWorkspaceReadable(scope: ReadScope, workspace: string): void {
  if (workspace === ALL_WORKSPACES || scope.call.access.canReadWorkspace(workspace)) return;
  throw readError.unauthorized(`The credential is not authorized to read workspace ${workspace}.`, {
    target: scope.request.target,
  });
}

// ---- the workspace a DAG or run belongs to ---------------------------------------------------

/**
 * The workspace of a label set, as Dagu 2.x decides it (`internal/workspace/labels.go`): the value of
 * its `workspace` labels when they agree and form a valid workspace name; `default` when there is no
 * such label (Dagu's own MCP server files unlabelled DAGs under `default` for workspace-scoped
 * callers); `undefined` when the label is empty, malformed or ambiguous, which no grant matches.
 * Dagu lower-cases label keys and values (`ir.ParseLabel`), so this does too.
 */
export function workspaceOfLabels(labels: readonly string[]): string | undefined {
  let found: string | undefined;
  for (const label of labels) {
    const cut = label.indexOf('=');
    const key = (cut < 0 ? label : label.slice(0, cut)).trim().toLowerCase();
    if (key !== 'workspace') continue;
    const value =
      cut < 0
        ? ''
        : label
            .slice(cut + 1)
            .trim()
            .toLowerCase();
    if (!isWorkspaceName(value)) return undefined;
    if (found !== undefined && found !== value) return undefined;
    found = value;
  }
  return found ?? DEFAULT_WORKSPACE;
}

const WORKSPACE_NAME = /^[A-Za-z0-9_-]+$/;
const RESERVED_WORKSPACES: ReadonlySet<string> = new Set(['all', 'default', 'global']);

/** Dagu's `workspace.ValidateName`: letters, digits, `_` and `-`, and none of the reserved names. */
function isWorkspaceName(value: string): boolean {
  return WORKSPACE_NAME.test(value) && !RESERVED_WORKSPACES.has(value.toLowerCase());
}

/**
 * May the caller see what `labelled` describes (a DAG, or a run's details or summary, whose labels
 * are its DAG's at run time), by its workspace? Dagu 1.x has no workspaces: all is in `default`.
 */
export function canSee(scope: ReadScope, labelled: unknown): boolean {
  const { access } = scope.call;
  if (access.everyWorkspace) return true;
  const labels = serves(scope.deps.dagu.generation, 'workspaces') ? dagLabels(labelled) : [];
  const workspace = workspaceOfLabels(labels);
  return workspace !== undefined && access.canReadWorkspace(workspace);
}

/**
 * What a caller is told about a DAG in a workspace it may not read: exactly what it is told about a
 * DAG that does not exist (Dagu's 404, read through the same mapping), so that no answer tells the two
 * apart. `subject` names what was read, as for a real 404.
 */
export function hiddenAsMissing(scope: ReadScope, subject: string): ReadError {
  return failure(scope, { status: 404, body: undefined }, { subject });
}
