import { READ_TARGETS } from '../../core/contract.ts';
import { LIMIT_RANGE } from './fields.ts';
import { QUERY_TABLE, QUERY_TARGETS } from './query.ts';

/**
 * The `dagu_read` inputSchema advertised in tools/list (valid as draft-07 and 2020-12).
 * It describes the input for a model; resolveReadInput is the validator. Note it does not accept
 * every input the contract does: deprecated target aliases and untrimmed values are valid input
 * but fail this enum, so do not enforce this schema in front of resolveReadInput.
 *
 * Every field has one `type`. The contract treats `null` as absent and resolveReadInput still accepts
 * it, but the schema says "leave it out", which every tool-schema dialect can express: a union such as
 * `["string","null"]` is rejected or mangled by single-type dialects (Gemini function declarations).
 * A client that must mark every field required (OpenAI strict mode) makes them nullable itself, and
 * the nulls it then sends are absent fields here (test/unit/mcp/schemas.test.ts).
 */

const queryParams = QUERY_TARGETS.map(
  (target) => `${target}: ${Object.keys(QUERY_TABLE[target].params).join(', ')}`,
).join('; ');

const text = (description: string) => ({ type: 'string', description }) as const;

export const READ_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    target: {
      type: 'string',
      enum: [...READ_TARGETS],
      description:
        'What to read (target mode). Use either target with its fields, or uri alone. references/reference: MCP reference topics; dags, dag, dag_spec, dag_search: DAG definitions; wiki, wiki_page, wiki_search: Wiki pages; workbook: an .xlsx/.xlsm file on the server; runs, run, run_logs, step_log, foreach_items, foreach_item: DAG runs and their logs.',
    },
    name: text(
      'DAG name (dag, dag_spec, run, run_logs, step_log, foreach_items, foreach_item) or reference topic (reference, default authoring).',
    ),
    dagRunId: text('DAG-run ID (run, run_logs, step_log, foreach_items, foreach_item).'),
    subRunId: text(
      'Child DAG-run ID under the root run given by name and dagRunId (run, step_log, foreach_items, foreach_item).',
    ),
    stepName: text('Step name inside the run (step_log, foreach_items, foreach_item).'),
    item: text(
      'Foreach item path: the index, or for a nested foreach the foreachParent of a body step, a dot and the index (foreach_item; step_log with bodyStepName).',
    ),
    bodyStepName: text('Body step name or ID inside the foreach item (step_log, together with item).'),
    query: text(
      `URL query string without a leading ?, e.g. tail=100 (dags, wiki, runs, run_logs, step_log, foreach_items). Parameters: ${queryParams}. step_log takes at most one of tail, head, offset; limit only alone or with offset.`,
    ),
    workspace: text(
      'Workspace: all, default or a workspace name (wiki, wiki_search, dag_search: default all; wiki_page: required, not all).',
    ),
    path: text('Wiki page path without .md (wiki_page), or a workbook file path on the server (workbook).'),
    password: text('Password of a protected workbook (workbook), used exactly as given.'),
    search: text('Search text (dag_search, wiki_search).'),
    prefix: text('Wiki page path prefix (wiki, wiki_search).'),
    cursor: text('nextCursor from a previous page of the same search (dag_search, wiki_search).'),
    limit: {
      type: 'integer',
      minimum: LIMIT_RANGE.min,
      maximum: LIMIT_RANGE.max,
      description: `Maximum number of search results, ${LIMIT_RANGE.min}-${LIMIT_RANGE.max} (dag_search, wiki_search).`,
    },
    uri: text(
      'A dagu:// resource URI to read instead of target, e.g. dagu://runs/{name}/{dagRunId}/logs?tail=100 or dagu://reference/authoring. Use no other field with it.',
    ),
  },
  additionalProperties: false,
} as const;
