/**
 * Property-based fuzzing of `dagu_read` input (fast-check): arbitraries that produce tool arguments
 * and `dagu://` URIs near the contract's edges (real targets and fields with hostile values, mixed
 * modes, unknown keys, percent escapes, long strings, non-JSON-object values), and the invariant every
 * answer must keep: a success envelope, or the contract's error object and nothing else.
 *
 * The run size and seed are fixed per run so a failure can be replayed: FUZZ_RUNS (default given by
 * the test), FUZZ_SEED (default below). `npm run fuzz` runs the same properties longer.
 */
import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import {
  DEPRECATED_TARGET_ALIASES,
  ERROR_CODES,
  READ_INPUT_FIELDS,
  READ_TARGETS,
  TARGET_FIELDS,
} from '../../src/core/contract.ts';

export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20261202);
/** `FUZZ_SCALE` multiplies every property's run count (`npm run fuzz` sets it). */
export const FUZZ_SCALE = Math.max(1, Number(process.env.FUZZ_SCALE ?? 1));

export const fuzzRuns = (runs: number): number => Math.round(runs * FUZZ_SCALE);

/** Values that sit on the contract's edges: path structure, escapes, controls, Unicode, names Dagu has. */
const EDGE_STRINGS = [
  '',
  ' ',
  '\t\n',
  '.',
  '..',
  '../..',
  '/',
  'a/b',
  'a\\b',
  '%2F',
  '%2e%2e',
  '%',
  '%zz',
  '%00',
  '\u0000',
  '\u007f',
  '\u202e',
  '\ud800',
  '😀',
  'é',
  'latest',
  'all',
  'default',
  'example',
  'nightly-report',
  'nightly.yaml',
  '__proto__',
  'constructor',
  '$HOME',
  '$'.concat('{X}'),
  '?x=1',
  '#frag',
  'a b',
  'A'.repeat(300),
  'x'.repeat(5000),
];

const QUERY_NAMES = [
  'tail',
  'head',
  'offset',
  'limit',
  'stream',
  'status',
  'labels',
  'from',
  'to',
  'page',
  'perPage',
  'cursor',
  'search',
  'name',
  'sort',
  'order',
  'attempt',
  'x',
  '',
];

const URI_FAMILIES = ['dags', 'runs', 'wiki', 'reference', 'workbook', 'search', 'dag-runs', 'foo', ''];

export const edgeString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...EDGE_STRINGS) },
  { weight: 3, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.nat({ max: 100_000 }).map(String) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...EDGE_STRINGS), fc.constantFrom(...EDGE_STRINGS))
      .map(([a, b]) => `${a}${b}`),
  },
);

/** A query string: known and unknown names, good and bad values, stray separators and escapes. */
export const queryString: fc.Arbitrary<string> = fc.oneof(
  fc
    .array(
      fc.tuple(
        fc.oneof(fc.constantFrom(...QUERY_NAMES), edgeString),
        fc.oneof(
          fc.nat({ max: 2000 }).map(String),
          fc.constantFrom('-1', '0', '1e3', 'stderr', 'stdout'),
          edgeString,
        ),
        fc.constantFrom('=', '', '=='),
      ),
      { maxLength: 4 },
    )
    .map((pairs) => pairs.map(([name, value, eq]) => `${name}${eq}${value}`).join('&')),
  edgeString.map((text) => `?${text}`),
  edgeString,
);

const segment = fc.oneof(edgeString, fc.constantFrom('latest', 'steps', 'logs', 'items', 'sub-runs', 'spec'));

/** `dagu://` URIs of every family, right and wrong shapes, plus other schemes. */
export const daguUri: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('dagu://', 'dagu://', 'dagu://', 'DAGU://', 'dagu:/', 'http://', ''),
    fc.constantFrom(...URI_FAMILIES),
    fc.array(segment.map(encodeURIComponentLoosely), { maxLength: 6 }),
    fc.option(queryString, { nil: undefined }),
    fc.option(edgeString, { nil: undefined }),
  )
  .map(([scheme, family, segments, query, fragment]) => {
    let uri = `${scheme}${family}${segments.map((part) => `/${part}`).join('')}`;
    if (query !== undefined) uri += `?${query}`;
    if (fragment !== undefined) uri += `#${fragment}`;
    return uri;
  });

/** Segments are sometimes escaped, sometimes raw (a raw `/` or `?` changes the URI's shape on purpose). */
function encodeURIComponentLoosely(value: string): string {
  if (value.length % 3 === 0) return value;
  try {
    return encodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Any JSON value, including non-objects and deep nesting, as a field value or whole arguments. */
const jsonish: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 2 });

const fieldValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: edgeString },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.oneof(fc.integer({ min: -10, max: 100 }), fc.double(), fc.boolean()) },
  { weight: 1, arbitrary: jsonish },
);

const targetValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...READ_TARGETS, ...Object.keys(DEPRECATED_TARGET_ALIASES)) },
  { weight: 1, arbitrary: fc.constantFrom(...READ_TARGETS).map((target) => ` ${target.toUpperCase()} `) },
  { weight: 1, arbitrary: fieldValue },
);

const unknownKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'toString', 'Target', 'name ', 'arguments', ''),
  fc.string({ maxLength: 10 }),
);

/**
 * The contract's target table as this test reads Spec 021 (required, then optional fields): the
 * fuzz's own copy, so it does not take the implementation's word for what is valid.
 */
const TARGET_SHAPES: Readonly<Record<string, readonly [readonly string[], readonly string[]]>> = {
  references: [[], []],
  reference: [[], ['name']],
  dags: [[], ['query']],
  dag: [['name'], []],
  dag_spec: [['name'], []],
  dag_search: [['search'], ['workspace', 'cursor', 'limit']],
  wiki: [[], ['workspace', 'query', 'prefix']],
  wiki_page: [['workspace', 'path'], []],
  wiki_search: [['search'], ['workspace', 'prefix', 'cursor', 'limit']],
  workbook: [['path'], ['password']],
  runs: [[], ['query']],
  run: [['name', 'dagRunId'], ['subRunId']],
  run_logs: [['name', 'dagRunId'], ['query']],
  step_log: [
    ['name', 'dagRunId', 'stepName'],
    ['subRunId', 'query', 'item', 'bodyStepName'],
  ],
  foreach_items: [
    ['name', 'dagRunId', 'stepName'],
    ['subRunId', 'query'],
  ],
  foreach_item: [['name', 'dagRunId', 'stepName', 'item'], ['subRunId']],
};

/** Plausible values per field: real-looking ones most of the time, hostile ones often. */
const PLAUSIBLE: Readonly<Record<string, readonly string[]>> = {
  name: ['example', 'nightly-report', 'authoring', 'tools', 'a.b_c-1'],
  dagRunId: ['latest', '20260701T010000Z', '0194f0c2-aaaa-7bbb-8ccc-0123456789ab'],
  subRunId: ['child-1', 'latest'],
  stepName: ['extract', 'step 1', 'main'],
  item: ['0', '1', 'item-a'],
  bodyStepName: ['body', 'inner'],
  workspace: ['all', 'default', 'ops'],
  path: ['index', 'guides/setup', 'report.xlsx', '/data/report.xlsx', 'a/../b'],
  password: ['secret', ' spaced '],
  search: ['error', 'timeout', 'x'],
  prefix: ['guides', 'guides/'],
  cursor: ['abc', '0', 'eyJ9'],
};

const plausibleValue = (field: string): fc.Arbitrary<unknown> => {
  if (field === 'limit') return fc.oneof(fc.integer({ min: -2, max: 60 }), fieldValue);
  if (field === 'query')
    return fc.oneof(
      {
        weight: 2,
        arbitrary: fc.constantFrom('tail=10', 'head=5', 'stream=stderr', 'status=failed', 'limit=3'),
      },
      { weight: 3, arbitrary: queryString },
      { weight: 1, arbitrary: fieldValue },
    );
  const known = PLAUSIBLE[field] ?? [];
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...known, 'example') },
    { weight: 1, arbitrary: fieldValue },
  );
};

/** A target with its required fields, some optional ones, and now and then one field too many or too few. */
const shapedTargetMode: fc.Arbitrary<Record<string, unknown>> = fc
  .constantFrom(...Object.keys(TARGET_SHAPES))
  .chain((target) => {
    const [required, optional] = TARGET_SHAPES[target]!;
    const fields = [...required, ...optional];
    return fc
      .tuple(
        fc.constant(target),
        fc.tuple(...fields.map((field) => plausibleValue(field))),
        fc.array(fc.boolean(), { minLength: fields.length, maxLength: fields.length }),
        fc.option(fc.tuple(fc.constantFrom(...TARGET_FIELDS, 'uri'), fieldValue), {
          nil: undefined,
          freq: 6,
        }),
        fc.nat({ max: 7 }).map((roll) => roll === 0),
      )
      .map(([name, values, keep, extra, dropRequired]) => {
        const args: Record<string, unknown> = { target: name };
        fields.forEach((field, at) => {
          const isRequired = at < required.length;
          if ((isRequired && !(dropRequired && at === 0)) || keep[at]) args[field] = values[at];
        });
        if (extra !== undefined) args[extra[0]] = extra[1];
        return args;
      });
  });

/** Target-mode arguments: a target and any fields (right, wrong, or foreign), maybe unknown keys. */
const looseTargetMode: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    targetValue,
    fc.dictionary(fc.constantFrom(...TARGET_FIELDS), fieldValue, { maxKeys: 5 }),
    fc.array(fc.tuple(unknownKey, fieldValue), { maxLength: 1 }),
  )
  .map(([target, fields, unknown]) => {
    const args: Record<string, unknown> = { target, ...fields };
    // defineProperty: `__proto__` must be an own key, as JSON.parse makes it.
    for (const [key, value] of unknown)
      Object.defineProperty(args, key, { value, enumerable: true, writable: true, configurable: true });
    return args;
  });

/** URI-mode arguments, sometimes mixed with target-mode fields. */
const uriMode: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    fc.oneof({ weight: 5, arbitrary: daguUri }, { weight: 1, arbitrary: fieldValue }),
    fc.dictionary(fc.constantFrom(...TARGET_FIELDS, 'target'), fieldValue, { maxKeys: 1 }),
    fc.boolean(),
  )
  .map(([uri, extra, mixed]) => (mixed ? { uri, ...extra } : { uri }));

/** Whole `dagu_read` arguments as a caller could send them in JSON. */
export const readArguments: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: shapedTargetMode },
  { weight: 2, arbitrary: looseTargetMode },
  { weight: 3, arbitrary: uriMode },
  { weight: 1, arbitrary: jsonish },
);

const ERROR_KEYS = new Set(['code', 'message', 'target', 'field', 'uri', 'details']);
const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);
const KNOWN_FIELDS: ReadonlySet<string> = new Set(READ_INPUT_FIELDS);

/**
 * The contract's error object and nothing else: known keys and code, a message, `field` naming a field
 * of the contract or a key the caller sent (an unknown field is named as sent), no internal error.
 * `suppliedKeys` are the own keys of the arguments, when they were an object.
 */
export function assertContractError(error: unknown, suppliedKeys: readonly string[] = []): void {
  assert.ok(error !== null && typeof error === 'object' && !Array.isArray(error), 'error is an object');
  const object = error as Record<string, unknown>;
  for (const key of Object.keys(object)) assert.ok(ERROR_KEYS.has(key), `unexpected error key ${key}`);
  assert.ok(typeof object.code === 'string' && KNOWN_CODES.has(object.code), `unknown code ${object.code}`);
  assert.notEqual(object.code, 'internal_error', `internal_error: ${object.message}`);
  assert.ok(typeof object.message === 'string' && object.message.length > 0, 'message is text');
  assertNoLeak(object.message, { strict: true });
  if (object.field !== undefined) {
    assert.equal(typeof object.field, 'string');
    assert.ok(
      KNOWN_FIELDS.has(object.field as string) || suppliedKeys.includes(object.field as string),
      `field ${JSON.stringify(object.field)} is neither a contract field nor a supplied key`,
    );
  }
  for (const key of ['target', 'uri'] as const)
    if (object[key] !== undefined) assert.equal(typeof object[key], 'string', key);
  if (object.details !== undefined)
    assert.ok(
      object.details !== null && typeof object.details === 'object' && !Array.isArray(object.details),
    );
}

/** Folders of this machine a caller must never see: the checkout, the home folder, the working folder. */
const MACHINE_PATHS = [
  ...new Set([process.cwd(), homedir(), fileURLToPath(new URL('../..', import.meta.url))]),
]
  .map((folder) => folder.replace(/\/+$/, ''))
  .filter((folder) => folder.length > 1);

/**
 * No stack trace, no source location and no folder of this machine in text a caller sees. With
 * `strict` (error messages), no absolute path of any kind either; success data may quote one
 * (the reference topics show `/var/reports/` in an example DAG).
 */
export function assertNoLeak(
  text: string,
  options: { strict?: boolean; paths?: readonly string[] } = {},
): void {
  assert.doesNotMatch(text, /\n\s+at |\bat [\w.<>]+ \(/, 'stack trace in a body');
  assert.doesNotMatch(text, /node_modules|\.ts:\d+/, 'source location in a body');
  for (const folder of [...MACHINE_PATHS, ...(options.paths ?? [])])
    assert.ok(!text.includes(folder), `a folder of this machine (${folder}) in a body`);
  if (options.strict)
    assert.doesNotMatch(
      text,
      /(?:^|[\s"'(])\/(?:root|home|work|tmp|usr|srv|var|etc)\/[\w.-]+/,
      'absolute path in an error message',
    );
}
