import { ALL_WORKSPACES } from '../../core/contract.ts';
import { readError } from '../errors.ts';
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
