import { basename, extname } from 'node:path';
import { ALL_WORKSPACES, READ_TARGETS, type ReadTarget, type TargetField } from '../../core/contract.ts';
import type { ReadFields } from '../types.ts';
import { LIMIT_RANGE } from './fields.ts';
import { wikiPagePathProblem } from './page-path.ts';

/**
 * Rules on the values of target-mode fields (step 8 of resolveReadInput) and the fields whose value is
 * one path segment (step 10).
 */

type FieldValue = string | number;

export interface ValueRule {
  field: TargetField;
  targets: readonly ReadTarget[];
  /** What is wrong with the value (completing "The {field} field …"), or undefined. */
  problem: (value: FieldValue) => string | undefined;
  /** The whole message instead of "The {field} field {problem} for target {target}.", where a spec words it. */
  message?: (value: FieldValue) => string;
}

// The same test and wording as the workbook reader's own check (src/workbook/locate.ts), so the
// answer does not depend on which layer sees the path first.
const WORKBOOK_EXTENSIONS: ReadonlySet<string> = new Set(['.xlsx', '.xlsm']);

// Value rules per field; each applies to the targets listed (the ones that allow the field).
const VALUE_RULES: readonly ValueRule[] = [
  {
    field: 'limit',
    targets: ['dag_search', 'wiki_search'],
    problem: (value) =>
      typeof value === 'number' && value >= LIMIT_RANGE.min && value <= LIMIT_RANGE.max
        ? undefined
        : `must be an integer from ${LIMIT_RANGE.min} through ${LIMIT_RANGE.max}`,
  },
  {
    field: 'workspace',
    targets: ['wiki_page'],
    problem: (value) =>
      value === ALL_WORKSPACES
        ? `must name one workspace (default or a workspace name), not ${ALL_WORKSPACES}`
        : undefined,
  },
  {
    field: 'path',
    targets: ['wiki_page'],
    problem: (value) => {
      const problem = wikiPagePathProblem(String(value));
      return problem === undefined ? undefined : `must be a Wiki page path without .md: it ${problem}`;
    },
  },
  {
    field: 'path',
    targets: ['workbook'],
    problem: (value) =>
      WORKBOOK_EXTENSIONS.has(extname(String(value)).toLowerCase())
        ? undefined
        : 'must name an .xlsx or .xlsm file',
    // docs/workbook-profile.md, "Input and errors": `<file name>: only .xlsx and .xlsm workbooks …`.
    message: (value) =>
      `${basename(String(value))}: only .xlsx and .xlsm workbooks are supported; save as .xlsx`,
  },
  {
    field: 'prefix',
    targets: ['wiki', 'wiki_search'],
    problem: (value) => {
      const problem = wikiPagePathProblem(String(value));
      return problem === undefined ? undefined : `must be a Wiki page path prefix: it ${problem}`;
    },
  },
];

export const VALUE_RULES_BY_TARGET: Readonly<Record<ReadTarget, readonly ValueRule[]>> = (() => {
  const out = {} as Record<ReadTarget, readonly ValueRule[]>;
  for (const target of READ_TARGETS)
    out[target] = VALUE_RULES.filter((rule) => rule.targets.includes(target));
  return out;
})();

/**
 * Fields whose value is one path segment: of the `dagu://` URI (and of the Dagu route) for every
 * target that takes them. `workspace` is a segment only of the Wiki listing and page URIs; for the
 * search targets it is a filter, where an unknown workspace simply finds nothing.
 */
const SEGMENT_FIELDS: ReadonlyArray<readonly [TargetField, readonly ReadTarget[] | 'all', string]> = [
  ['name', 'all', 'DAG'],
  ['dagRunId', 'all', 'DAG-run'],
  ['subRunId', 'all', 'sub DAG-run'],
  ['stepName', 'all', 'step'],
  ['item', 'all', 'foreach item'],
  ['bodyStepName', 'all', 'body step'],
  ['workspace', ['wiki', 'wiki_page'], 'workspace'],
];

const isDotSegment = (value: unknown): boolean => value === '.' || value === '..';

/** The first segment field (field-table order) whose value is `.` or `..`: it can never name anything. */
export function dotSegmentField(target: ReadTarget, fields: ReadFields): TargetField | undefined {
  for (const [field, targets] of SEGMENT_FIELDS) {
    if ((targets === 'all' || targets.includes(target)) && isDotSegment(fields[field])) return field;
  }
  return undefined;
}

export function segmentNoun(target: ReadTarget, field: TargetField): string {
  if (field === 'name' && target === 'reference') return 'reference topic';
  return SEGMENT_FIELDS.find(([candidate]) => candidate === field)?.[2] ?? field;
}
