import {
  ALL_WORKSPACES,
  READ_INPUT_FIELDS,
  READ_TARGETS,
  type ReadInputField,
  type ReadTarget,
  TARGET_FIELDS,
  type TargetField,
} from '../../core/contract.ts';

/**
 * The field and target tables of Spec 021 ("Input" and "Target contracts"), as data.
 * Everything else in the input layer (validation, JSON schema, tests) is derived from these.
 */

/** Every field that belongs to target mode: combining any of them with `uri` is a mixed request. */
export const TARGET_MODE_FIELDS = ['target', ...TARGET_FIELDS] as const satisfies readonly ReadInputField[];

export interface FieldSpec {
  /** JSON type after `null` (= absent) is set aside. */
  type: 'string' | 'integer';
  /** Strings are trimmed, except `password`, which is kept exactly as supplied. */
  trim: boolean;
  mode: 'target' | 'uri';
}

export const FIELD_SPECS: Readonly<Record<ReadInputField, FieldSpec>> = Object.freeze({
  target: { type: 'string', trim: true, mode: 'target' },
  name: { type: 'string', trim: true, mode: 'target' },
  dagRunId: { type: 'string', trim: true, mode: 'target' },
  subRunId: { type: 'string', trim: true, mode: 'target' },
  stepName: { type: 'string', trim: true, mode: 'target' },
  item: { type: 'string', trim: true, mode: 'target' },
  bodyStepName: { type: 'string', trim: true, mode: 'target' },
  query: { type: 'string', trim: true, mode: 'target' },
  workspace: { type: 'string', trim: true, mode: 'target' },
  path: { type: 'string', trim: true, mode: 'target' },
  password: { type: 'string', trim: false, mode: 'target' },
  search: { type: 'string', trim: true, mode: 'target' },
  prefix: { type: 'string', trim: true, mode: 'target' },
  cursor: { type: 'string', trim: true, mode: 'target' },
  limit: { type: 'integer', trim: false, mode: 'target' },
  uri: { type: 'string', trim: true, mode: 'uri' },
});

/** The `limit` field's range where a target allows it. */
export const LIMIT_RANGE = Object.freeze({ min: 1, max: 50 });

/** The topic `reference` reads when `name` is absent. */
export const DEFAULT_REFERENCE_TOPIC = 'authoring';

export interface TargetSpec {
  required: readonly TargetField[];
  optional: readonly TargetField[];
  /** Optional fields that must come together: each one requires the other. */
  together: readonly (readonly [TargetField, TargetField])[];
  /** Values applied when an optional field is absent. */
  defaults: Readonly<Partial<Record<TargetField, string>>>;
  /** Whether target mode returns a `uri` (the contract's "Output `uri`" column). */
  uriInTargetMode: boolean;
}

function spec(
  required: readonly TargetField[],
  optional: readonly TargetField[],
  uriInTargetMode: boolean,
  extra: Partial<Pick<TargetSpec, 'together' | 'defaults'>> = {},
): TargetSpec {
  return Object.freeze({
    required,
    optional,
    together: extra.together ?? [],
    defaults: extra.defaults ?? {},
    uriInTargetMode,
  });
}

const RUN: readonly TargetField[] = ['name', 'dagRunId'];
const STEP: readonly TargetField[] = ['name', 'dagRunId', 'stepName'];
const ALL = { workspace: ALL_WORKSPACES } as const;

/** The contract's target table: required and optional fields; every other target field is forbidden. */
export const TARGET_SPECS: Readonly<Record<ReadTarget, TargetSpec>> = Object.freeze({
  references: spec([], [], false),
  reference: spec([], ['name'], true, { defaults: { name: DEFAULT_REFERENCE_TOPIC } }),
  dags: spec([], ['query'], false),
  dag: spec(['name'], [], false),
  dag_spec: spec(['name'], [], true),
  dag_search: spec(['search'], ['workspace', 'cursor', 'limit'], false, { defaults: ALL }),
  wiki: spec([], ['workspace', 'query', 'prefix'], true, { defaults: ALL }),
  wiki_page: spec(['workspace', 'path'], [], true),
  wiki_search: spec(['search'], ['workspace', 'prefix', 'cursor', 'limit'], false, { defaults: ALL }),
  workbook: spec(['path'], ['password'], false),
  runs: spec([], ['query'], false),
  run: spec(RUN, ['subRunId'], true),
  run_logs: spec(RUN, ['query'], true),
  step_log: spec(STEP, ['subRunId', 'query', 'item', 'bodyStepName'], true, {
    together: [['item', 'bodyStepName']],
  }),
  foreach_items: spec(STEP, ['subRunId', 'query'], true),
  foreach_item: spec([...STEP, 'item'], ['subRunId'], true),
});

export type FieldRule = 'required' | 'optional' | 'forbidden';

/** Target × field matrix, precomputed once so per-call checks are lookups. */
export const FIELD_RULES: Readonly<Record<ReadTarget, Readonly<Record<TargetField, FieldRule>>>> = (() => {
  const rules = {} as Record<ReadTarget, Readonly<Record<TargetField, FieldRule>>>;
  for (const target of READ_TARGETS) {
    const { required, optional } = TARGET_SPECS[target];
    const row = {} as Record<TargetField, FieldRule>;
    for (const field of TARGET_FIELDS) {
      row[field] = required.includes(field)
        ? 'required'
        : optional.includes(field)
          ? 'optional'
          : 'forbidden';
    }
    rules[target] = Object.freeze(row);
  }
  return Object.freeze(rules);
})();

export function fieldRule(target: ReadTarget, field: TargetField): FieldRule {
  return FIELD_RULES[target][field];
}

const INPUT_FIELD_SET: ReadonlySet<string> = new Set(READ_INPUT_FIELDS);

/** Own-key membership test that is safe for keys such as `__proto__` or `constructor`. */
export function isReadInputField(key: string): key is ReadInputField {
  return INPUT_FIELD_SET.has(key);
}
