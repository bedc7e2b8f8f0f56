import { ALL_WORKSPACES, type ReadTarget } from '../../core/contract.ts';
import { ReadError, readError } from '../errors.ts';
import type { ReadFields, ReadQuery } from '../types.ts';
import { wikiPagePathProblem } from './page-path.ts';
import { pathEscape, percentDecode } from './percent.ts';
import { type QueryTarget, shown, validateQuery } from './query.ts';

/**
 * The `dagu://` URI model (design §1): one shape table drives parsing, canonical building and
 * resource-link naming, so the three can never disagree. URIs are parsed by hand: WHATWG `URL`
 * would drop `..` segments, accept `%zz` and keep host case before we could validate them.
 */

export const RESOURCE_FAMILIES = ['reference', 'dags', 'runs', 'wiki'] as const;
export type ResourceFamily = (typeof RESOURCE_FAMILIES)[number];

type Slot = 'name' | 'dagRunId' | 'subRunId' | 'stepName' | 'item' | 'bodyStepName' | 'workspace' | 'path';

/** A literal segment, one value segment, or (`rest`) a value spanning every remaining segment. */
type Part = string | { slot: Slot; label?: string; rest?: true };

export interface ResourceLinkInfo {
  name: string;
  mimeType: string;
}

export interface UriShape {
  id: string;
  family: ResourceFamily;
  parts: readonly Part[];
  target: ReadTarget;
  /** The query table this shape follows; absent for singular resources, which take no query. */
  query?: QueryTarget;
  link: ResourceLinkInfo;
  /** Readable form, e.g. `dagu://runs/{name}/{dagRunId}/logs` (resource templates, messages). */
  template: string;
}

const JSON_MIME = 'application/json';
const N: Part = { slot: 'name' };
const ID: Part = { slot: 'dagRunId' };
const SUB: readonly Part[] = ['sub', { slot: 'subRunId' }];
const STEP: readonly Part[] = ['steps', { slot: 'stepName' }];
const ITEM: Part = { slot: 'item' };
const BODY: readonly Part[] = ['steps', { slot: 'bodyStepName' }, 'logs'];

type ShapeRow = [
  id: string,
  family: ResourceFamily,
  parts: readonly Part[],
  target: ReadTarget,
  query: QueryTarget | undefined,
  linkName: string,
  mimeType: string,
];

// The contract's URI list ("Addressing modes") and resource-link table, one row per shape.
const SHAPE_ROWS: readonly ShapeRow[] = [
  ['references', 'reference', [], 'references', undefined, 'dagu_references', JSON_MIME],
  [
    'reference',
    'reference',
    [{ slot: 'name', label: 'topic' }],
    'reference',
    undefined,
    'dagu_reference',
    'text/markdown',
  ],
  ['dags', 'dags', [], 'dags', 'dags', 'dags', JSON_MIME],
  ['dag_spec', 'dags', [N, 'spec'], 'dag_spec', undefined, 'dag_spec', 'application/yaml'],
  ['runs', 'runs', [], 'runs', 'runs', 'dag_runs', JSON_MIME],
  ['run', 'runs', [N, ID], 'run', undefined, 'dag_run', JSON_MIME],
  ['run_logs', 'runs', [N, ID, 'logs'], 'run_logs', 'run_logs', 'dag_run_logs', JSON_MIME],
  ['step_log', 'runs', [N, ID, ...STEP, 'logs'], 'step_log', 'step_log', 'dag_run_step_log', JSON_MIME],
  ['sub_run', 'runs', [N, ID, ...SUB], 'run', undefined, 'sub_dag_run', JSON_MIME],
  [
    'sub_step_log',
    'runs',
    [N, ID, ...SUB, ...STEP, 'logs'],
    'step_log',
    'step_log',
    'sub_dag_run_step_log',
    JSON_MIME,
  ],
  [
    'foreach_items',
    'runs',
    [N, ID, ...STEP, 'foreach'],
    'foreach_items',
    'foreach_items',
    'dag_run_foreach_items',
    JSON_MIME,
  ],
  [
    'foreach_item',
    'runs',
    [N, ID, ...STEP, 'foreach', ITEM],
    'foreach_item',
    undefined,
    'dag_run_foreach_item',
    JSON_MIME,
  ],
  [
    'foreach_step_log',
    'runs',
    [N, ID, ...STEP, 'foreach', ITEM, ...BODY],
    'step_log',
    'step_log',
    'dag_run_foreach_step_log',
    JSON_MIME,
  ],
  [
    'sub_foreach_items',
    'runs',
    [N, ID, ...SUB, ...STEP, 'foreach'],
    'foreach_items',
    'foreach_items',
    'sub_dag_run_foreach_items',
    JSON_MIME,
  ],
  [
    'sub_foreach_item',
    'runs',
    [N, ID, ...SUB, ...STEP, 'foreach', ITEM],
    'foreach_item',
    undefined,
    'sub_dag_run_foreach_item',
    JSON_MIME,
  ],
  [
    'sub_foreach_step_log',
    'runs',
    [N, ID, ...SUB, ...STEP, 'foreach', ITEM, ...BODY],
    'step_log',
    'step_log',
    'sub_dag_run_foreach_step_log',
    JSON_MIME,
  ],
  ['wiki', 'wiki', [], 'wiki', 'wiki', 'wiki', JSON_MIME],
  ['wiki_workspace', 'wiki', [{ slot: 'workspace' }], 'wiki', 'wiki', 'wiki', JSON_MIME],
  [
    'wiki_page',
    'wiki',
    [{ slot: 'workspace' }, { slot: 'path', rest: true }],
    'wiki_page',
    undefined,
    'wiki_page',
    'text/markdown',
  ],
];

function templateOf(family: ResourceFamily, parts: readonly Part[]): string {
  const tail = parts.map((part) => (typeof part === 'string' ? part : `{${part.label ?? part.slot}}`));
  return [`dagu://${family}`, ...tail].join('/');
}

export const URI_SHAPES: readonly UriShape[] = Object.freeze(
  SHAPE_ROWS.map(([id, family, parts, target, query, name, mimeType]): UriShape => {
    const shape: UriShape = {
      id,
      family,
      parts,
      target,
      link: { name, mimeType },
      template: templateOf(family, parts),
    };
    if (query !== undefined) shape.query = query;
    return Object.freeze(shape);
  }),
);

const SHAPE_BY_ID: ReadonlyMap<string, UriShape> = new Map(URI_SHAPES.map((shape) => [shape.id, shape]));
const SHAPES_BY_FAMILY: ReadonlyMap<string, readonly UriShape[]> = new Map(
  RESOURCE_FAMILIES.map((family) => [family, URI_SHAPES.filter((shape) => shape.family === family)]),
);
const FAMILY_TEMPLATES: ReadonlyMap<string, string> = new Map(
  RESOURCE_FAMILIES.map((family) => [
    family,
    (SHAPES_BY_FAMILY.get(family) ?? []).map((shape) => shape.template).join(', '),
  ]),
);

function shapeById(id: string): UriShape {
  const shape = SHAPE_BY_ID.get(id);
  if (shape === undefined) throw new Error(`unknown URI shape ${id}`);
  return shape;
}

// ---- building -------------------------------------------------------------------------------

/**
 * One value segment, escaped like Go's `url.PathEscape`. A `.` or `..` value is refused: escaping
 * leaves dots alone, and a URI with such a segment is malformed (design §1), one the gateway itself
 * would reject. Target mode answers such input with resource_not_found before building anything;
 * a caller that builds from upstream data must not pass one either.
 */
function segment(shape: UriShape, slot: Slot, value: string): string {
  if (value === '.' || value === '..') {
    throw new RangeError(
      `A ${shape.template} URI cannot hold ${JSON.stringify(value)} as its ${slot} segment.`,
    );
  }
  return pathEscape(value);
}

/** Builds a shape's canonical URI: every value escaped per segment like Go's `url.PathEscape`. */
function buildUri(shape: UriShape, fields: ReadFields): string {
  let uri = `dagu://${shape.family}`;
  for (const part of shape.parts) {
    if (typeof part === 'string') {
      uri += `/${part}`;
      continue;
    }
    const value = fields[part.slot] ?? '';
    // A Wiki page path spans several segments; each of its segments is escaped on its own.
    uri += `/${
      part.rest
        ? value
            .split('/')
            .map((piece) => segment(shape, part.slot, piece))
            .join('/')
        : segment(shape, part.slot, value)
    }`;
  }
  return uri;
}

const S = {
  references: shapeById('references'),
  reference: shapeById('reference'),
  dags: shapeById('dags'),
  dagSpec: shapeById('dag_spec'),
  runs: shapeById('runs'),
  run: shapeById('run'),
  runLogs: shapeById('run_logs'),
  stepLog: shapeById('step_log'),
  subRun: shapeById('sub_run'),
  subStepLog: shapeById('sub_step_log'),
  foreachItems: shapeById('foreach_items'),
  foreachItem: shapeById('foreach_item'),
  foreachStepLog: shapeById('foreach_step_log'),
  subForeachItems: shapeById('sub_foreach_items'),
  subForeachItem: shapeById('sub_foreach_item'),
  subForeachStepLog: shapeById('sub_foreach_step_log'),
  wiki: shapeById('wiki'),
  wikiWorkspace: shapeById('wiki_workspace'),
  wikiPage: shapeById('wiki_page'),
};

/** A root run, or a child run addressed under its root. */
export interface RunRef {
  name: string;
  dagRunId: string;
  subRunId?: string | undefined;
}

const isSub = (run: RunRef): boolean => run.subRunId !== undefined && run.subRunId !== '';

/** `uri` plus `?query` when the query is non-empty; the query is appended exactly as given. */
export function withQuery(uri: string, query?: string): string {
  return query === undefined || query === '' ? uri : `${uri}?${query}`;
}

export function referenceUri(topic?: string): string {
  return topic === undefined ? buildUri(S.references, {}) : buildUri(S.reference, { name: topic });
}

export function dagsUri(query?: string): string {
  return withQuery(buildUri(S.dags, {}), query);
}

export function dagsSpecUri(name: string): string {
  return buildUri(S.dagSpec, { name });
}

export function runsUri(query?: string): string {
  return withQuery(buildUri(S.runs, {}), query);
}

export function runUri(name: string, dagRunId: string, subRunId?: string): string {
  const run = { name, dagRunId, subRunId };
  return isSub(run) ? buildUri(S.subRun, run) : buildUri(S.run, run);
}

export function runLogsUri(name: string, dagRunId: string, query?: string): string {
  return withQuery(buildUri(S.runLogs, { name, dagRunId }), query);
}

export function stepLogUri(run: RunRef, stepName: string, query?: string): string {
  return withQuery(buildUri(isSub(run) ? S.subStepLog : S.stepLog, { ...run, stepName }), query);
}

export function foreachItemsUri(run: RunRef, stepName: string, query?: string): string {
  return withQuery(buildUri(isSub(run) ? S.subForeachItems : S.foreachItems, { ...run, stepName }), query);
}

export function foreachItemUri(run: RunRef, stepName: string, item: string): string {
  return buildUri(isSub(run) ? S.subForeachItem : S.foreachItem, { ...run, stepName, item });
}

export function foreachStepLogUri(
  run: RunRef,
  stepName: string,
  item: string,
  bodyStepName: string,
  query?: string,
): string {
  const shape = isSub(run) ? S.subForeachStepLog : S.foreachStepLog;
  return withQuery(buildUri(shape, { ...run, stepName, item, bodyStepName }), query);
}

/** `dagu://wiki` for all workspaces (absent or `all`), else `dagu://wiki/{workspace}`. */
export function wikiUri(workspace?: string, query?: string): string {
  const uri =
    workspace === undefined || workspace === ALL_WORKSPACES
      ? buildUri(S.wiki, {})
      : buildUri(S.wikiWorkspace, { workspace });
  return withQuery(uri, query);
}

/** `dagu://wiki/{workspace}/{path}` with the page path's `/` kept as segment separators. */
export function wikiPageUri(workspace: string, path: string): string {
  return buildUri(S.wikiPage, { workspace, path });
}

// ---- parsing --------------------------------------------------------------------------------

export interface ParsedResourceUri {
  shape: UriShape;
  target: ReadTarget;
  /** Values decoded from the path (plus `workspace: all` for `dagu://wiki`, `query` when given). */
  fields: ReadFields;
  /** The fields the URI itself gives: its path values and `query`, not the `workspace: all` default. */
  supplied: Array<keyof ReadFields>;
  query?: ReadQuery;
  /** Canonical form: rebuilt from the decoded segments, the query echoed exactly as given. */
  uri: string;
}

interface SplitUri {
  family: ResourceFamily;
  segments: string[];
  rawQuery: string;
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;

// Go's url.Parse refuses ASCII control characters anywhere in a URL.
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

// The families are exactly these hosts; the deprecated `docs`/`doc`/`doc_search` names are target
// values only (targets.ts), so `dagu://docs…` is an unsupported family like any other host.
function familyOf(host: string): ResourceFamily | undefined {
  return (RESOURCE_FAMILIES as readonly string[]).includes(host) ? (host as ResourceFamily) : undefined;
}

/** Syntax checks shared by parsing and link naming. `input` is the trimmed `uri` field. */
function splitUri(input: string): SplitUri {
  const invalid = (message: string) => readError.invalidUri(message, { field: 'uri', uri: input });
  if (hasControlCharacter(input)) throw invalid('The uri must not contain control characters.');
  const scheme = SCHEME.exec(input);
  if (scheme === null || scheme[1]?.toLowerCase() !== 'dagu') {
    throw invalid('The uri must be a dagu:// resource URI.');
  }
  const rest = input.slice(scheme[0].length);
  if (!rest.startsWith('//'))
    throw invalid('The uri must have the form dagu://{family}/…; opaque forms are not valid.');
  if (rest.includes('#')) throw invalid('The uri must not contain a fragment (#).');
  const afterSlashes = rest.slice(2);
  const queryAt = afterSlashes.indexOf('?');
  const hierarchy = queryAt < 0 ? afterSlashes : afterSlashes.slice(0, queryAt);
  const rawQuery = queryAt < 0 ? '' : afterSlashes.slice(queryAt + 1);
  const pathAt = hierarchy.indexOf('/');
  const host = pathAt < 0 ? hierarchy : hierarchy.slice(0, pathAt);
  const path = pathAt < 0 ? '' : hierarchy.slice(pathAt + 1);
  if (host === '') throw invalid('The uri must name a resource family after dagu://.');
  if (host.includes('@') || host.includes(':')) {
    throw invalid('The uri must not carry user information or a port.');
  }
  const segments: string[] = [];
  if (pathAt >= 0) {
    for (const raw of path.split('/')) {
      if (raw === '') throw invalid('The uri path must not have empty segments (no trailing or doubled /).');
      const segment = percentDecode(raw, false);
      if (segment === undefined) {
        throw invalid(
          'The uri path has an invalid percent-encoding (% must be followed by two hex digits of UTF-8).',
        );
      }
      // Checked after decoding: Dagu would clean `%2E%2E` into path structure as well.
      if (segment === '.' || segment === '..')
        throw invalid("The uri path must not have '.' or '..' segments.");
      segments.push(segment);
    }
  }
  const family = familyOf(host);
  if (family === undefined) {
    throw new ReadError({
      code: 'unsupported_resource',
      message: `The resource family ${shown(host)} is not supported; use one of ${RESOURCE_FAMILIES.join(', ')}.`,
      field: 'uri',
      uri: input,
    });
  }
  return { family, segments, rawQuery };
}

function matches(shape: UriShape, segments: readonly string[]): boolean {
  const last = shape.parts.at(-1);
  const spans = last !== undefined && typeof last !== 'string' && last.rest === true;
  if (spans ? segments.length < shape.parts.length : segments.length !== shape.parts.length) return false;
  return shape.parts.every((part, i) => typeof part !== 'string' || segments[i] === part);
}

function findShape(split: SplitUri): UriShape | undefined {
  return SHAPES_BY_FAMILY.get(split.family)?.find((shape) => matches(shape, split.segments));
}

function fieldsOf(shape: UriShape, segments: readonly string[]): ReadFields {
  const fields: ReadFields = {};
  shape.parts.forEach((part, i) => {
    if (typeof part === 'string') return;
    fields[part.slot] = part.rest ? segments.slice(i).join('/') : (segments[i] ?? '');
  });
  return fields;
}

/**
 * Parses and validates a `dagu://` URI (already trimmed). Order: control characters, scheme,
 * opaque form, fragment, authority, path segments (escapes, empty, dot), family, shape, query on a
 * singular resource, Wiki workspace and page path, query parameters.
 * Throws `invalid_resource_uri` / `unsupported_resource` with `field: "uri"` and the input as `uri`;
 * errors found once the shape is known also carry its `target`.
 */
export function parseResourceUri(input: string): ParsedResourceUri {
  const split = splitUri(input);
  const shape = findShape(split);
  if (shape === undefined) {
    throw readError.invalidUri(
      `The uri path is not a supported dagu://${split.family} shape; supported: ${FAMILY_TEMPLATES.get(split.family)}.`,
      { field: 'uri', uri: input },
    );
  }
  const { target } = shape;
  const invalid = (message: string) => readError.invalidUri(message, { target, field: 'uri', uri: input });
  const { rawQuery } = split;
  if (rawQuery !== '' && shape.query === undefined) {
    throw invalid(`${shape.template} resources do not accept query parameters.`);
  }
  const fields = fieldsOf(shape, split.segments);
  const supplied = Object.keys(fields) as Array<keyof ReadFields>;
  if (shape.family === 'wiki') {
    if (fields.workspace === ALL_WORKSPACES) {
      throw invalid(
        shape.id === 'wiki_page'
          ? 'A Wiki page URI needs one concrete workspace, not all.'
          : 'Use dagu://wiki for the Wiki of all workspaces.',
      );
    }
    if (fields.path !== undefined) {
      const problem = wikiPagePathProblem(fields.path);
      if (problem !== undefined) throw invalid(`The Wiki page path in the uri ${problem}.`);
    }
    fields.workspace ??= ALL_WORKSPACES;
  }
  const parsed: ParsedResourceUri = {
    shape,
    target,
    fields,
    supplied,
    uri: withQuery(buildUri(shape, fields), rawQuery),
  };
  if (rawQuery !== '' && shape.query !== undefined) {
    parsed.query = validateQuery(shape.query, rawQuery, { mode: 'uri', uri: input });
    fields.query = rawQuery;
    supplied.push('query');
  }
  return parsed;
}

/** The resource-link `name` and `mimeType` for any `dagu://` URI shape, or `undefined` if it has none. */
export function describeResourceUri(uri: string): ResourceLinkInfo | undefined {
  try {
    return findShape(splitUri(uri.trim()))?.link;
  } catch {
    return undefined;
  }
}

/** The resource-link content item for a returned URI (the contract's resource-link table). */
export function resourceLinkFor(
  uri: string,
): { type: 'resource_link'; uri: string; name: string; mimeType: string } | undefined {
  const link = describeResourceUri(uri);
  return link === undefined
    ? undefined
    : { type: 'resource_link', uri, name: link.name, mimeType: link.mimeType };
}
