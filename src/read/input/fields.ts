import {
  READ_INPUT_FIELDS,
  READ_TARGETS,
  type ReadInputField,
  type ReadTarget,
  TARGET_FIELDS,
  type TargetField,
} from '../../core/contract.ts';
import type { TargetDefinition } from '../definition.ts';
import { TARGET_DEFINITIONS } from '../targets/index.ts';

/**
 * The field and target tables of the contract (docs/contract.md, "Input" and "Target contracts"):
 * the field table as data, the target table derived from the target definitions (src/read/targets/).
 * Validation, the JSON schema and the tests are derived from these.
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

/** The target table of some definitions; every field not listed is forbidden. */
export function targetSpecsOf(
  definitions: Readonly<Record<ReadTarget, TargetDefinition>>,
): Readonly<Record<ReadTarget, TargetSpec>> {
  const specs = {} as Record<ReadTarget, TargetSpec>;
  for (const target of READ_TARGETS) {
    const definition = definitions[target];
    const { required, optional, together = [], defaults = {} } = definition.fields;
    const uriInTargetMode = definition.uri?.targetMode !== undefined;
    specs[target] = Object.freeze({ required, optional, together, defaults, uriInTargetMode });
  }
  return Object.freeze(specs);
}

/** The contract's target table, from the target definitions (src/read/targets/). */
export const TARGET_SPECS: Readonly<Record<ReadTarget, TargetSpec>> = targetSpecsOf(TARGET_DEFINITIONS);

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
