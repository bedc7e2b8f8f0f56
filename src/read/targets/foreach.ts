import { merged } from '../../core/merged.ts';
import { serves, upstreamPair } from '../../dagu/dialect.ts';
import type { DaguResponse } from '../../dagu/types.ts';
import { defineTarget, RUN_ECHO } from '../definition.ts';
import { queryEscape } from '../input/percent.ts';
import { int, oneOf, TEXT } from '../query-params.ts';
import { nodeStatusLabel } from '../status.ts';
import { toRfc3339Millis } from '../time.ts';
import { isRecord, malformedBody, optionalInteger, optionalText } from '../upstream/bodies.ts';
import { failure, fetchAny, isMissingRoute } from '../upstream/fetch.ts';
import { explainMissingForeachRoutes } from '../upstream/foreach.ts';
import { assertRunReadable, runOfRequest, runRoute } from '../upstream/runs.ts';
import type { ReadScope } from '../upstream/scope.ts';
import { foreachItemsUri, foreachItemUri, foreachStepLogUri, type RunRef, SHAPES } from '../uri-shapes.ts';

const malformed = (what: string) => malformedBody('a foreach read', what);

/**
 * `foreach_items` and `foreach_item` over Dagu 2.x's foreach REST routes:
 * `GET /dag-runs/{name}/{dagRunId}[/sub-dag-runs/{subRunId}]/steps/{stepName}/foreach[/{item}]`.
 * Dagu reads the item records the executor keeps beside the body logs, counts every item before the
 * `status` filter, sorts failed and aborted items first, then running (and retrying) ones, then the
 * rest by index, and pages with `page`/`perPage` (clamped at 500, the contract's maximum too).
 * Dagu 1.x has no foreach steps and no such routes (its router answers a plain-text 404), so on
 * generation 1 both targets are `resource_unavailable` without a Dagu call.
 */

export const FOREACH_STATUS_BUCKETS = ['notStarted', 'running', 'succeeded', 'failed', 'aborted'] as const;
export type ForeachCounts = Record<(typeof FOREACH_STATUS_BUCKETS)[number], number>;

function statusOf(raw: Record<string, unknown>, what: string): { status: number; statusLabel: string } {
  const status = optionalInteger(raw.status);
  if (status === undefined) throw malformed(`${what} without a numeric status`);
  return { status, statusLabel: nodeStatusLabel(status, raw.statusLabel) };
}

/** Copies `error`, `startedAt` and `finishedAt` when recorded (Dagu sends `""` for "not recorded"). */
function addRecorded(target: Record<string, unknown>, raw: Record<string, unknown>): void {
  const error = optionalText(raw.error);
  if (error !== undefined) target.error = error;
  const startedAt = toRfc3339Millis(raw.startedAt);
  if (startedAt !== undefined) target.startedAt = startedAt;
  const finishedAt = toRfc3339Millis(raw.finishedAt);
  if (finishedAt !== undefined) target.finishedAt = finishedAt;
}

/** Sort rank of an item status, as Dagu sorts: failed/aborted, then running/retrying, then the rest. */
export function foreachItemRank(status: number): number {
  if (status === 2 || status === 3) return 0;
  if (status === 1 || status === 9) return 1;
  return 2;
}

/** Failed first, then running, then the rest; index order inside each group (pure). */
export function sortForeachItems<T extends { status: number; index: number }>(items: readonly T[]): T[] {
  return [...items].sort(
    (a, b) => foreachItemRank(a.status) - foreachItemRank(b.status) || a.index - b.index,
  );
}

type MappedItem = Record<string, unknown> & { item: string; index: number; status: number };

/** The fields an item summary and an item share (2.x `ForeachItemSummary` / `ForeachItem` shape). */
function mapItemFields(raw: unknown): MappedItem {
  if (!isRecord(raw)) throw malformed('an item that is not an object');
  const item = typeof raw.item === 'string' && raw.item !== '' ? raw.item : undefined;
  const index = optionalInteger(raw.index);
  if (item === undefined || index === undefined) throw malformed('an item without item path or index');
  const entry: MappedItem = {
    item,
    index,
    key: typeof raw.key === 'string' ? raw.key : String(index),
    ...statusOf(raw, 'an item'),
  };
  addRecorded(entry, raw);
  return entry;
}

/** `ForeachItemList` (2.x body shape) → the contract's foreach-items model. */
export function mapForeachItemList(body: unknown, run: RunRef, stepName: string): Record<string, unknown> {
  if (!isRecord(body)) throw malformed('not an object');
  const items = body.items ?? [];
  if (!Array.isArray(items)) throw malformed('items is not an array');
  const rawCounts = isRecord(body.counts) ? body.counts : {};
  const counts = {} as ForeachCounts;
  for (const bucket of FOREACH_STATUS_BUCKETS) counts[bucket] = optionalInteger(rawCounts[bucket]) ?? 0;
  const mapped = items.map((raw) => {
    const entry = mapItemFields(raw);
    entry.uri = foreachItemUri(run, stepName, entry.item);
    return entry;
  });
  return {
    total: optionalInteger(body.total) ?? 0,
    counts,
    // Dagu already sorts; sorting again is a no-op on its pages and keeps the contract's order firm.
    items: sortForeachItems(mapped),
  };
}

/** One `ForeachBodyStep` (2.x body shape) → the contract's body step, with its log and nested-items URIs. */
export function mapForeachBodyStep(
  raw: unknown,
  run: RunRef,
  stepName: string,
  item: string,
): Record<string, unknown> {
  if (!isRecord(raw) || typeof raw.name !== 'string') throw malformed('a body step without a name');
  const step: Record<string, unknown> = {
    name: raw.name,
    ...statusOf(raw, 'a body step'),
    hasStdout: raw.hasStdout === true,
    hasStderr: raw.hasStderr === true,
  };
  const id = optionalText(raw.id);
  if (id !== undefined) step.id = id;
  addRecorded(step, raw);
  const retryCount = optionalInteger(raw.retryCount);
  if (retryCount !== undefined && retryCount > 0) step.retryCount = retryCount;
  const foreachParent = optionalText(raw.foreachParent);
  if (foreachParent !== undefined) {
    step.foreachParent = foreachParent;
    step.foreachUri = foreachItemsUri(run, stepName, `parent=${queryEscape(foreachParent)}`);
  }
  // Newer Dagu versions add these (already secret-masked); passed through in the HTTP API's shape.
  if (raw.agentSession !== undefined && raw.agentSession !== null) step.agentSession = raw.agentSession;
  if (raw.modelUsage !== undefined && raw.modelUsage !== null) step.modelUsage = raw.modelUsage;
  step.logUri = foreachStepLogUri(run, stepName, item, raw.name);
  return step;
}

/** `ForeachItem` (2.x body shape) → the contract's foreach-item model. */
export function mapForeachItem(body: unknown, run: RunRef, stepName: string): Record<string, unknown> {
  const data = mapItemFields(body);
  const steps = (body as Record<string, unknown>).steps ?? [];
  if (!Array.isArray(steps)) throw malformed('steps is not an array');
  data.steps = steps.map((raw) => mapForeachBodyStep(raw, run, stepName, data.item));
  return data;
}

const FOREACH_LIST_PARAMS = new Set(['parent', 'status', 'page', 'perPage']);

/**
 * One GET below a foreach step: the allowlist check, the generation check (Dagu 1.x has no foreach
 * steps), then the route; `field` is the input a 400 is about. Without foreach routes (1.x, 2.x up to
 * v2.15.1) what the request names is established from the run details first (upstream/foreach.ts).
 */
async function fetchForeach(
  scope: ReadScope,
  run: RunRef,
  request: { below: string; params: Record<string, string>; query?: Array<[string, string]>; field: string },
): Promise<DaguResponse> {
  await assertRunReadable(scope, run);
  const stepName = request.params.stepName ?? '';
  if (!serves(scope.deps.dagu.generation, 'foreach')) {
    throw await explainMissingForeachRoutes(scope, run, stepName);
  }
  const route = runRoute(run);
  const response = await fetchAny(scope, {
    route: `${route.prefix}/steps/{stepName}/foreach${request.below}`,
    params: merged(route.params, request.params),
    ...(request.query === undefined ? {} : { query: request.query }),
  });
  // A Dagu 2.x older than the foreach REST routes (e.g. 2.15) answers them with its router's 404.
  if (isMissingRoute(response)) throw await explainMissingForeachRoutes(scope, run, stepName);
  if (response.status !== 200) throw failure(scope, response, { field: request.field });
  return response;
}

export const foreachTargets = {
  foreach_items: defineTarget({
    fields: { required: ['name', 'dagRunId', 'stepName'], optional: ['subRunId', 'query'] },
    query: {
      params: {
        // Dagu checks the structure of a foreachParent itself (400 → invalid_tool_input).
        parent: TEXT,
        status: oneOf('not_started', 'running', 'succeeded', 'failed', 'aborted'),
        page: int(1),
        perPage: int(1, 500),
      },
    },
    uri: {
      shapes: [SHAPES.foreachItems, SHAPES.subForeachItems],
      targetMode: (fields, query) => foreachItemsUri(runOfRequest(fields), fields.stepName, query),
    },
    echo: RUN_ECHO,
    handle: async (request, deps, call) => {
      const run = runOfRequest(request.fields);
      const { stepName } = request.fields;
      const query = (request.query?.params ?? [])
        .filter(([key]) => FOREACH_LIST_PARAMS.has(key))
        .map(upstreamPair);
      // A 400 here is Dagu refusing the `parent` path of the query.
      const response = await fetchForeach({ request, deps, call }, run, {
        below: '',
        params: { stepName },
        query,
        field: 'query',
      });
      return { data: mapForeachItemList(response.body, run, stepName), upstreamStatus: response.status };
    },
  }),
  foreach_item: defineTarget({
    fields: { required: ['name', 'dagRunId', 'stepName', 'item'], optional: ['subRunId'] },
    uri: {
      shapes: [SHAPES.foreachItem, SHAPES.subForeachItem],
      targetMode: (fields) => foreachItemUri(runOfRequest(fields), fields.stepName, fields.item),
    },
    echo: RUN_ECHO,
    handle: async (request, deps, call) => {
      const run = runOfRequest(request.fields);
      const { stepName, item } = request.fields;
      // A 400 here is Dagu refusing the item path.
      const response = await fetchForeach({ request, deps, call }, run, {
        below: '/{item}',
        params: { stepName, item },
        field: 'item',
      });
      return { data: mapForeachItem(response.body, run, stepName), upstreamStatus: response.status };
    },
  }),
};
