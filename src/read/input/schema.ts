import { READ_TARGETS, type ReadTarget, type TargetField } from '../../core/contract.ts';
import { referenceTargets } from '../targets/reference.ts';
import { workbookTargets } from '../targets/workbook.ts';
import { LIMIT_RANGE, TARGET_SPECS, type TargetSpec } from './fields.ts';
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
 *
 * Which targets take a field, and on what terms (required, default, together with), is not written
 * here: each description's target lists are computed from the target table, itself read from the
 * target definitions, so a field removed from a definition leaves its description with no other edit.
 */

const queryParams = QUERY_TARGETS.map(
  (target) => `${target}: ${Object.keys(QUERY_TABLE[target].params).join(', ')}`,
).join('; ');

/** How one target takes a field, from its definition. */
export interface FieldUse {
  target: ReadTarget;
  required: boolean;
  /** The value applied when the field is absent. */
  default: string | undefined;
  /** The field that must come with this one (the definition's `together`). */
  with: TargetField | undefined;
}

/** The targets that take `field`, in the contract's target order, each with its terms. */
export function fieldUses(specs: Readonly<Record<ReadTarget, TargetSpec>>, field: TargetField): FieldUse[] {
  return READ_TARGETS.flatMap((target) => {
    const spec = specs[target];
    const required = spec.required.includes(field);
    if (!required && !spec.optional.includes(field)) return [];
    const pair = spec.together.find((fields) => fields.includes(field));
    const partner = pair === undefined ? undefined : pair[0] === field ? pair[1] : pair[0];
    return [{ target, required, default: spec.defaults[field], with: partner }];
  });
}

const names = (uses: readonly FieldUse[]) => uses.map((use) => use.target).join(', ');
/** ` (list)`, or nothing when no target takes the field in this sense. */
const on = (list: string) => (list === '' ? '' : ` (${list})`);
const inFamily = (family: object) => (use: FieldUse) => Object.hasOwn(family, use.target);
const outside = (family: object) => (use: FieldUse) => !Object.hasOwn(family, use.target);
const withDefaults = (uses: readonly FieldUse[]) =>
  uses
    .map((use) => (use.default === undefined ? use.target : `${use.target}, default ${use.default}`))
    .join(', ');
/** Targets grouped by their terms: `a, b: default all; c: required, not all`. */
const byTerms = (uses: readonly FieldUse[], requiredTerms: string) => {
  const groups = new Map<string, FieldUse[]>();
  for (const use of uses) {
    const terms = use.default !== undefined ? `default ${use.default}` : use.required ? requiredTerms : '';
    groups.set(terms, [...(groups.get(terms) ?? []), use]);
  }
  return [...groups]
    .map(([terms, group]) => (terms === '' ? names(group) : `${names(group)}: ${terms}`))
    .join('; ');
};
const senses = (parts: ReadonlyArray<readonly [string, string]>, joiner: string) =>
  parts
    .filter(([, list]) => list !== '')
    .map(([text, list]) => `${text}${on(list)}`)
    .join(joiner);

/** Each target field's description, given the targets that take it. */
const FIELD_DESCRIPTIONS: { readonly [Field in TargetField]: (uses: readonly FieldUse[]) => string } = {
  name: (uses) =>
    `${senses(
      [
        ['DAG name', names(uses.filter(outside(referenceTargets)))],
        ['reference topic', withDefaults(uses.filter(inFamily(referenceTargets)))],
      ],
      ' or ',
    )}.`,
  dagRunId: (uses) => `DAG-run ID${on(names(uses))}.`,
  subRunId: (uses) => `Child DAG-run ID under the root run given by name and dagRunId${on(names(uses))}.`,
  stepName: (uses) => `Step name inside the run${on(names(uses))}.`,
  item: (uses) => {
    const alone = names(uses.filter((use) => use.with === undefined));
    const paired = uses.flatMap((use) => (use.with === undefined ? [] : [`${use.target} with ${use.with}`]));
    const list = [alone, ...paired].filter((part) => part !== '').join('; ');
    return `Foreach item path: the index, or for a nested foreach the foreachParent of a body step, a dot and the index${on(list)}.`;
  },
  bodyStepName: (uses) => {
    const list = uses.map((use) =>
      use.with === undefined ? use.target : `${use.target}, together with ${use.with}`,
    );
    return `Body step name or ID inside the foreach item${on(list.join('; '))}.`;
  },
  query: (uses) =>
    `URL query string without a leading ?, e.g. tail=100${on(names(uses))}. Parameters: ${queryParams}. step_log takes at most one of tail, head, offset; limit only alone or with offset.`,
  workspace: (uses) =>
    `Workspace: all, default or a workspace name${on(byTerms(uses, 'required, not all'))}.`,
  path: (uses) =>
    `${senses(
      [
        ['Wiki page path without .md', names(uses.filter(outside(workbookTargets)))],
        ['a workbook file path on the server', names(uses.filter(inFamily(workbookTargets)))],
      ],
      ', or ',
    )}.`,
  password: (uses) => `Password of a protected workbook${on(names(uses))}, used exactly as given.`,
  search: (uses) => `Search text${on(names(uses))}.`,
  prefix: (uses) => `Wiki page path prefix${on(names(uses))}.`,
  cursor: (uses) => `nextCursor from a previous page of the same search${on(names(uses))}.`,
  limit: (uses) =>
    `Maximum number of search results, ${LIMIT_RANGE.min}-${LIMIT_RANGE.max}${on(names(uses))}.`,
};

const text = (description: string) => ({ type: 'string', description }) as const;

/** The input schema for a target table: the advertised one, or (in tests) one of altered definitions. */
export function readInputSchema(specs: Readonly<Record<ReadTarget, TargetSpec>>) {
  const describe = (field: TargetField) => FIELD_DESCRIPTIONS[field](fieldUses(specs, field));
  return {
    type: 'object',
    properties: {
      target: {
        type: 'string',
        enum: [...READ_TARGETS],
        description:
          'What to read (target mode). Use either target with its fields, or uri alone. references/reference: MCP reference topics; dags, dag, dag_spec, dag_search: DAG definitions; wiki, wiki_page, wiki_search: Wiki pages; workbook: an .xlsx/.xlsm file on the server; runs, run, run_logs, step_log, foreach_items, foreach_item: DAG runs and their logs.',
      },
      name: text(describe('name')),
      dagRunId: text(describe('dagRunId')),
      subRunId: text(describe('subRunId')),
      stepName: text(describe('stepName')),
      item: text(describe('item')),
      bodyStepName: text(describe('bodyStepName')),
      query: text(describe('query')),
      workspace: text(describe('workspace')),
      path: text(describe('path')),
      password: text(describe('password')),
      search: text(describe('search')),
      prefix: text(describe('prefix')),
      cursor: text(describe('cursor')),
      limit: {
        type: 'integer',
        minimum: LIMIT_RANGE.min,
        maximum: LIMIT_RANGE.max,
        description: describe('limit'),
      },
      uri: text(
        'A dagu:// resource URI to read instead of target, e.g. dagu://runs/{name}/{dagRunId}/logs?tail=100 or dagu://reference/authoring. Use no other field with it.',
      ),
    },
    additionalProperties: false,
  } as const;
}

export const READ_INPUT_SCHEMA = readInputSchema(TARGET_SPECS);
