/**
 * A broad, deterministic matrix of `dagu_read` inputs, generated from the input layer's own tables:
 * every target alone and with its required fields, every target × every field with valid, empty,
 * blank, mistyped and path-like values, every query parameter of every query target at and beyond
 * its bounds (both addressing modes), every URI shape with and without queries, malformed URIs, and
 * arguments that are not objects. Values for names, runs and steps come from the seeded Dagu, so many
 * inputs read real data. For tests that compare two ways of answering the same input (the lean path
 * against the SDK path), not for checking answers on their own.
 */
import {
  DEPRECATED_TARGET_ALIASES,
  READ_TARGETS,
  type ReadTarget,
  TARGET_FIELDS,
  type TargetField,
} from '../../src/core/contract.ts';
import {
  FIELD_RULES,
  isQueryTarget,
  QUERY_TABLE,
  QUERY_TARGETS,
  type QueryTarget,
} from '../../src/read/input/index.ts';
import type { QueryParamSpec } from '../../src/read/query-params.ts';
import { TARGET_DEFINITIONS } from '../../src/read/targets/index.ts';
import { SHAPE_TABLE, type UriShape } from '../../src/read/uri-shapes.ts';

/** The query table a URI shape follows: its target's, when that target takes a query. */
function queryTargetOf(shape: UriShape): QueryTarget | undefined {
  for (const target of READ_TARGETS) {
    const shapes: readonly UriShape[] = TARGET_DEFINITIONS[target].uri?.shapes ?? [];
    if (shapes.includes(shape)) return isQueryTarget(target) ? target : undefined;
  }
  return undefined;
}

import type { DaguSeed } from './dagu.ts';

type Args = Record<string, unknown>;

/** A valid value per field, from the seed where one exists. */
function validValues(seed: DaguSeed): Record<TargetField, unknown> {
  return {
    name: seed.dags.twoSteps,
    dagRunId: seed.runs.twoStepsFirst,
    subRunId: seed.runs.childSub,
    stepName: seed.facts.twoStepsStepNames[0],
    item: '0',
    bodyStepName: 'body',
    query: 'tail=5',
    workspace: 'default',
    path: 'guides/start',
    password: 'secret',
    search: 'step',
    prefix: 'guides',
    cursor: 'c1',
    limit: 5,
  };
}

/** Required fields of a target, filled with valid values (reference and run targets read real data). */
function baseFor(target: ReadTarget, valid: Record<TargetField, unknown>, seed: DaguSeed): Args {
  const base: Args = { target };
  for (const field of TARGET_FIELDS) {
    if (FIELD_RULES[target][field] === 'required') base[field] = valid[field];
  }
  if (target === 'reference') base.name = 'tools';
  if (target === 'run' || target === 'run_logs') base.name = seed.dags.twoSteps;
  if (target === 'workbook') base.path = '/nonexistent/workbook.xlsx';
  return base;
}

/** Values that probe a field: wrong types, empty and blank text, path structure, escapes. */
const FIELD_PROBES: readonly unknown[] = [
  '',
  '   ',
  7,
  true,
  null,
  ['a'],
  { a: 1 },
  '../etc',
  'a/b',
  '%2F',
  'x'.repeat(300),
];

/** Query values for one parameter at and beyond the bounds its rule states. */
function queryValues(spec: QueryParamSpec): string[] {
  const { rule } = spec;
  switch (rule.kind) {
    case 'integer': {
      const values = [String(rule.min - 1), String(rule.min), 'abc', '1.5', '1e3', '9223372036854775808'];
      if (rule.max !== undefined) values.push(String(rule.max), String(rule.max + 1));
      return values;
    }
    case 'unixSeconds':
      return ['0', '-86400', '1751331600', '1.5', 'yesterday', '9223372036854775808'];
    case 'oneOf':
      return [...rule.values, rule.values[0]!.toUpperCase(), 'other'];
    case 'text':
      return ['x', '', 'a b', '%zz'];
    case 'labels':
      return ['alpha', 'alpha,beta', 'alpha,', ',', 'a,,b'];
    case 'wikiPagePrefix':
      return ['guides', 'guides/deploy', '/guides', 'a//b', '.hidden', 'x'.repeat(253)];
  }
}

/** Whole query strings beyond single parameters: syntax, repetition, unknown names. */
const QUERY_SHAPES: readonly string[] = ['', '&', '=', 'unknown=1', '%zz=1', 'a=1&a=2', 'tail=1;head=1'];

function queries(target: QueryTarget): string[] {
  const spec = QUERY_TABLE[target];
  const out: string[] = [...QUERY_SHAPES];
  for (const [param, paramSpec] of Object.entries(spec.params)) {
    for (const value of queryValues(paramSpec)) out.push(`${param}=${encodeURIComponent(value)}`);
    out.push(`${param}=1&${param}=2`);
  }
  if (spec.atMostOneOf) out.push(spec.atMostOneOf.map((param) => `${param}=1`).join('&'));
  if (spec.onlyWith) out.push(`${spec.onlyWith.param}=5&${spec.onlyWith.partner}=1`);
  return out;
}

/** A concrete URI for a shape from the seed's values. */
function uriFor(shape: UriShape, seed: DaguSeed): string {
  const values: Record<string, string> = {
    name: seed.dags.twoSteps,
    dagRunId: seed.runs.twoStepsFirst,
    subRunId: seed.runs.childSub,
    stepName: encodeURIComponent(seed.facts.twoStepsStepNames[0]),
    item: '0',
    bodyStepName: 'body',
    topic: 'tools',
    workspace: 'default',
    path: 'guides/start',
  };
  const tail = shape.parts.map((part) =>
    typeof part === 'string' ? part : (values[part.label ?? part.slot] ?? values[part.slot] ?? 'x'),
  );
  return [`dagu://${shape.family}`, ...tail].join('/');
}

const MALFORMED_URIS: readonly string[] = [
  '',
  '   ',
  'dagu:',
  'dagu://',
  'DAGU://dags',
  'http://dags',
  'dagu://nope',
  'dagu://dags/',
  'dagu://dags//spec',
  'dagu://dags/a%2Fb/spec',
  'dagu://dags/%2e%2e/spec',
  'dagu://dags/x%00/spec',
  'dagu://runs/a/b/c/d/e/f',
  'dagu://dags#frag',
  'dagu://reference/unknown-topic',
];

export interface ReadMatrix {
  /** `arguments` of `tools/call dagu_read`. */
  toolArguments: unknown[];
  /** `uri` of `resources/read`. */
  resourceUris: string[];
}

export function readInputMatrix(seed: DaguSeed): ReadMatrix {
  const valid = validValues(seed);
  const tool: unknown[] = [];
  for (const target of READ_TARGETS) {
    const base = baseFor(target, valid, seed);
    tool.push({ target }, base);
    for (const field of TARGET_FIELDS) {
      tool.push({ ...base, [field]: valid[field] });
      for (const probe of FIELD_PROBES) tool.push({ ...base, [field]: probe });
    }
    tool.push({ ...base, unknownField: 1 }, { ...base, uri: 'dagu://dags' });
  }
  for (const alias of Object.keys(DEPRECATED_TARGET_ALIASES)) tool.push({ target: alias });
  for (const target of QUERY_TARGETS) {
    const base = baseFor(target, valid, seed);
    for (const query of queries(target)) tool.push({ ...base, query });
  }
  const uris: string[] = [...MALFORMED_URIS];
  for (const shape of SHAPE_TABLE) {
    const uri = uriFor(shape, seed);
    uris.push(uri, `${uri}/`, `${uri}?`, `${uri}?unknown=1`);
    const queryTarget = queryTargetOf(shape);
    if (queryTarget !== undefined) for (const query of queries(queryTarget)) uris.push(`${uri}?${query}`);
  }
  for (const uri of uris) tool.push({ uri });
  tool.push({ uri: 7 }, { uri: 'dagu://dags', limit: 1 }, {}, 'a string', [1, 2], null, 42, true);
  tool.push(JSON.parse('{"__proto__":{"x":1},"target":"dags"}'));
  return { toolArguments: tool, resourceUris: uris };
}
