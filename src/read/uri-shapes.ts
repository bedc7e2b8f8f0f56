import { ALL_WORKSPACES } from '../core/contract.ts';
import { merged } from '../core/merged.ts';
import { pathEscape } from './input/percent.ts';
import type { ReadFields } from './types.ts';

/**
 * The `dagu://` URI shapes and their canonical builders. One shape table drives parsing
 * (src/read/input/uri.ts), canonical building and resource-link naming, so the three can never
 * disagree. Targets build the URIs they return with these builders.
 */

export const RESOURCE_FAMILIES = ['reference', 'dags', 'runs', 'wiki'] as const;
export type ResourceFamily = (typeof RESOURCE_FAMILIES)[number];

export type Slot =
  | 'name'
  | 'dagRunId'
  | 'subRunId'
  | 'stepName'
  | 'item'
  | 'bodyStepName'
  | 'workspace'
  | 'path';

/** A literal segment, one value segment, or (`rest`) a value spanning every remaining segment. */
export type Part = string | { slot: Slot; label?: string; rest?: true };

export interface ResourceLinkInfo {
  name: string;
  mimeType: string;
}

export interface UriShape {
  id: string;
  family: ResourceFamily;
  parts: readonly Part[];
  /** The resource link of a returned URI of this shape (the contract's resource-link table). */
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
  linkName: string,
  mimeType: string,
];

// The contract's URI list ("Addressing modes") and resource-link table, one row per shape; which
// target a shape reads is said by that target's definition.
const SHAPE_ROWS: readonly ShapeRow[] = [
  ['references', 'reference', [], 'dagu_references', JSON_MIME],
  ['reference', 'reference', [{ slot: 'name', label: 'topic' }], 'dagu_reference', 'text/markdown'],
  ['dags', 'dags', [], 'dags', JSON_MIME],
  ['dag_spec', 'dags', [N, 'spec'], 'dag_spec', 'application/yaml'],
  ['runs', 'runs', [], 'dag_runs', JSON_MIME],
  ['run', 'runs', [N, ID], 'dag_run', JSON_MIME],
  ['run_logs', 'runs', [N, ID, 'logs'], 'dag_run_logs', JSON_MIME],
  ['step_log', 'runs', [N, ID, ...STEP, 'logs'], 'dag_run_step_log', JSON_MIME],
  ['sub_run', 'runs', [N, ID, ...SUB], 'sub_dag_run', JSON_MIME],
  ['sub_step_log', 'runs', [N, ID, ...SUB, ...STEP, 'logs'], 'sub_dag_run_step_log', JSON_MIME],
  ['foreach_items', 'runs', [N, ID, ...STEP, 'foreach'], 'dag_run_foreach_items', JSON_MIME],
  ['foreach_item', 'runs', [N, ID, ...STEP, 'foreach', ITEM], 'dag_run_foreach_item', JSON_MIME],
  [
    'foreach_step_log',
    'runs',
    [N, ID, ...STEP, 'foreach', ITEM, ...BODY],
    'dag_run_foreach_step_log',
    JSON_MIME,
  ],
  ['sub_foreach_items', 'runs', [N, ID, ...SUB, ...STEP, 'foreach'], 'sub_dag_run_foreach_items', JSON_MIME],
  [
    'sub_foreach_item',
    'runs',
    [N, ID, ...SUB, ...STEP, 'foreach', ITEM],
    'sub_dag_run_foreach_item',
    JSON_MIME,
  ],
  [
    'sub_foreach_step_log',
    'runs',
    [N, ID, ...SUB, ...STEP, 'foreach', ITEM, ...BODY],
    'sub_dag_run_foreach_step_log',
    JSON_MIME,
  ],
  ['wiki', 'wiki', [], 'wiki', JSON_MIME],
  ['wiki_workspace', 'wiki', [{ slot: 'workspace' }], 'wiki', JSON_MIME],
  ['wiki_page', 'wiki', [{ slot: 'workspace' }, { slot: 'path', rest: true }], 'wiki_page', 'text/markdown'],
];

function templateOf(family: ResourceFamily, parts: readonly Part[]): string {
  const tail = parts.map((part) => (typeof part === 'string' ? part : `{${part.label ?? part.slot}}`));
  return [`dagu://${family}`, ...tail].join('/');
}

/** Every shape in the order of the contract's URI list; src/read/input/uri.ts adds each one's target. */
export const SHAPE_TABLE: readonly UriShape[] = Object.freeze(
  SHAPE_ROWS.map(
    ([id, family, parts, name, mimeType]): UriShape =>
      Object.freeze({ id, family, parts, link: { name, mimeType }, template: templateOf(family, parts) }),
  ),
);

const SHAPE_BY_ID: ReadonlyMap<string, UriShape> = new Map(SHAPE_TABLE.map((shape) => [shape.id, shape]));

export function shapeById(id: string): UriShape {
  const shape = SHAPE_BY_ID.get(id);
  if (shape === undefined) throw new Error(`unknown URI shape ${id}`);
  return shape;
}

// ---- building -------------------------------------------------------------------------------

/**
 * One value segment, escaped like Go's `url.PathEscape`. A `.` or `..` value is refused: escaping
 * leaves dots alone, and a URI with such a segment is malformed, one the gateway itself
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

/** Appends `parts` of `shape` to `uri`, every value escaped per segment like Go's `url.PathEscape`. */
function appendParts(uri: string, shape: UriShape, parts: readonly Part[], fields: ReadFields): string {
  let out = uri;
  for (const part of parts) {
    if (typeof part === 'string') {
      out += `/${part}`;
      continue;
    }
    const value = fields[part.slot] ?? '';
    // A Wiki page path spans several segments; each of its segments is escaped on its own.
    out += `/${
      part.rest
        ? value
            .split('/')
            .map((piece) => segment(shape, part.slot, piece))
            .join('/')
        : segment(shape, part.slot, value)
    }`;
  }
  return out;
}

/**
 * A shape of single-segment values as its literal runs between the values (`dagu://runs/`, `/`,
 * `/steps/`, `/logs`), joined once at start-up: building then adds one value and one literal per
 * slot, where appending part by part made a string for every `/` and literal segment.
 */
interface CompiledShape {
  literals: readonly string[];
  slots: readonly Slot[];
}

const COMPILED = new Map<UriShape, CompiledShape | undefined>();

function compiled(shape: UriShape): CompiledShape | undefined {
  if (COMPILED.has(shape)) return COMPILED.get(shape);
  let result: CompiledShape | undefined;
  // A Wiki page path spans several segments: those shapes are built part by part.
  if (!shape.parts.some((part) => typeof part !== 'string' && part.rest === true)) {
    let literal = `dagu://${shape.family}`;
    const literals: string[] = [];
    const slots: Slot[] = [];
    for (const part of shape.parts) {
      if (typeof part === 'string') literal += `/${part}`;
      else {
        literals.push(`${literal}/`);
        slots.push(part.slot);
        literal = '';
      }
    }
    literals.push(literal);
    result = Object.freeze({ literals: Object.freeze(literals), slots: Object.freeze(slots) });
  }
  COMPILED.set(shape, result);
  return result;
}

/** Builds a shape's canonical URI: every value escaped per segment like Go's `url.PathEscape`. */
export function buildUri(shape: UriShape, fields: ReadFields): string {
  const compiledShape = compiled(shape);
  if (compiledShape === undefined) return appendParts(`dagu://${shape.family}`, shape, shape.parts, fields);
  const { literals, slots } = compiledShape;
  let out = literals[0]!;
  for (let i = 0; i < slots.length; i += 1) {
    const slot = slots[i]!;
    out += segment(shape, slot, fields[slot] ?? '') + literals[i + 1]!;
  }
  return out;
}

/**
 * The URIs of `shape` that differ only in one (single-segment) slot, the other parts built once from
 * the shape's literal runs: a run lists one step-log URI per step, and building the run's part again
 * for each step cost more than the rest of the step's mapping.
 */
function slotBuilder(shape: UriShape, fields: ReadFields, slot: Slot): (value: string) => string {
  const compiledShape = compiled(shape);
  const at = compiledShape === undefined ? -1 : compiledShape.slots.indexOf(slot);
  if (compiledShape === undefined || at < 0) {
    throw new Error(`the ${shape.template} URI has no single-segment ${slot} slot`);
  }
  const { literals, slots } = compiledShape;
  const valueAt = (i: number) => segment(shape, slots[i]!, fields[slots[i]!] ?? '');
  // The head ends with the slot's separator, so a step adds its segment and the tail: two strings.
  let head = literals[0]!;
  for (let i = 0; i < at; i += 1) head += valueAt(i) + literals[i + 1]!;
  let tail = literals[at + 1]!;
  for (let i = at + 1; i < slots.length; i += 1) tail += valueAt(i) + literals[i + 1]!;
  return (value) => head + segment(shape, slot, value) + tail;
}

/** Every shape by name, for definitions and builders. */
export const SHAPES = {
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
  return topic === undefined ? buildUri(SHAPES.references, {}) : buildUri(SHAPES.reference, { name: topic });
}

export function dagsUri(query?: string): string {
  return withQuery(buildUri(SHAPES.dags, {}), query);
}

export function dagsSpecUri(name: string): string {
  return buildUri(SHAPES.dagSpec, { name });
}

export function runsUri(query?: string): string {
  return withQuery(buildUri(SHAPES.runs, {}), query);
}

export function runUri(name: string, dagRunId: string, subRunId?: string): string {
  const run = { name, dagRunId, subRunId };
  return isSub(run) ? buildUri(SHAPES.subRun, run) : buildUri(SHAPES.run, run);
}

export function runLogsUri(name: string, dagRunId: string, query?: string): string {
  return withQuery(buildUri(SHAPES.runLogs, { name, dagRunId }), query);
}

export function stepLogUri(run: RunRef, stepName: string, query?: string): string {
  return withQuery(
    buildUri(isSub(run) ? SHAPES.subStepLog : SHAPES.stepLog, merged(run, { stepName })),
    query,
  );
}

/** The step-log URIs of one run's steps (`stepLogUri` without a query), the run's part built once. */
export function stepLogUris(run: RunRef): (stepName: string) => string {
  return slotBuilder(isSub(run) ? SHAPES.subStepLog : SHAPES.stepLog, run, 'stepName');
}

export function foreachItemsUri(run: RunRef, stepName: string, query?: string): string {
  return withQuery(
    buildUri(isSub(run) ? SHAPES.subForeachItems : SHAPES.foreachItems, merged(run, { stepName })),
    query,
  );
}

export function foreachItemUri(run: RunRef, stepName: string, item: string): string {
  return buildUri(isSub(run) ? SHAPES.subForeachItem : SHAPES.foreachItem, merged(run, { stepName, item }));
}

export function foreachStepLogUri(
  run: RunRef,
  stepName: string,
  item: string,
  bodyStepName: string,
  query?: string,
): string {
  const shape = isSub(run) ? SHAPES.subForeachStepLog : SHAPES.foreachStepLog;
  return withQuery(buildUri(shape, merged(run, { stepName, item, bodyStepName })), query);
}

/** `dagu://wiki` for all workspaces (absent or `all`), else `dagu://wiki/{workspace}`. */
export function wikiUri(workspace?: string, query?: string): string {
  const uri =
    workspace === undefined || workspace === ALL_WORKSPACES
      ? buildUri(SHAPES.wiki, {})
      : buildUri(SHAPES.wikiWorkspace, { workspace });
  return withQuery(uri, query);
}

/** `dagu://wiki/{workspace}/{path}` with the page path's `/` kept as segment separators. */
export function wikiPageUri(workspace: string, path: string): string {
  return buildUri(SHAPES.wikiPage, { workspace, path });
}
