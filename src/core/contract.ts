/**
 * The words of the `dagu_read` contract (docs/contract.md) that several layers share: the read targets, the
 * error codes and the workspace names. Metrics label by them, the MCP schemas advertise them, the
 * read service implements them.
 */

/** Every read target of the contract, in the order the contract's target table lists them. */
export const READ_TARGETS = [
  'references',
  'reference',
  'dags',
  'dag',
  'dag_spec',
  'dag_search',
  'wiki',
  'wiki_page',
  'wiki_search',
  'workbook',
  'runs',
  'run',
  'run_logs',
  'step_log',
  'foreach_items',
  'foreach_item',
] as const;

export type ReadTarget = (typeof READ_TARGETS)[number];

/** Deprecated target names: accepted, never advertised. */
export const DEPRECATED_TARGET_ALIASES: Readonly<Record<string, ReadTarget>> = {
  docs: 'wiki',
  doc: 'wiki_page',
  doc_search: 'wiki_search',
};

export function isReadTarget(value: string): value is ReadTarget {
  return (READ_TARGETS as readonly string[]).includes(value);
}

/** The `dagu_read` input fields: the target-mode fields a target may require a target may require, allow or forbid (all but `target` and `uri`). */
export const TARGET_FIELDS = [
  'name',
  'dagRunId',
  'subRunId',
  'stepName',
  'item',
  'bodyStepName',
  'query',
  'workspace',
  'path',
  'password',
  'search',
  'prefix',
  'cursor',
  'limit',
] as const;

/** Every field the tool accepts, in the order of the contract's input table. */
export const READ_INPUT_FIELDS = ['target', ...TARGET_FIELDS, 'uri'] as const;

export type ReadInputField = (typeof READ_INPUT_FIELDS)[number];

export type TargetField = (typeof TARGET_FIELDS)[number];

/** The error codes of the `dagu_read` contract (docs/contract.md, "Errors"). */
export const ERROR_CODES = [
  'unauthenticated',
  'unauthorized',
  'invalid_tool_input',
  'unsupported_read_target',
  'invalid_resource_uri',
  'unsupported_resource',
  'resource_not_found',
  'resource_unavailable',
  'internal_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** `workspace` value meaning "every workspace": the default where optional, refused by `wiki_page`. */
export const ALL_WORKSPACES = 'all';

/** The workspace of a DAG or Wiki page for which Dagu reports none. */
export const DEFAULT_WORKSPACE = 'default';
