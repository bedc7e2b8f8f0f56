import { shownValue } from '../../core/shown-value.ts';
import {
  DAGS_MAX_PER_PAGE,
  dagLabels,
  hasAllLabels,
  localPagination,
  planDagList,
} from '../../dagu/dialect.ts';
import { scrubPaths } from '../../dagu/errors.ts';
import { defineTarget, type TargetHandler } from '../definition.ts';
import { ReadError, readError } from '../errors.ts';
import { int, LABELS, oneOf, TEXT } from '../query-params.ts';
import { runStatusLabel } from '../status.ts';
import { toRfc3339Millis } from '../time.ts';
import { assertDagReadable, hiddenAsMissing } from '../upstream/access.ts';
import { integer, type Json, list, object, optionalText, strings, text } from '../upstream/bodies.ts';
import {
  canSeeDagEntry,
  canSeeDagOf,
  dagFileName,
  listAllDagFiles,
  withSuggestions,
} from '../upstream/dags.ts';
import { failure, fetchAny, isSuccess } from '../upstream/fetch.ts';
import type { ReadScope } from '../upstream/scope.ts';
import { dagsSpecUri, SHAPES } from '../uri-shapes.ts';

/**
 * `dags`, `dag` and `dag_spec` over `GET /dags`, `GET /dags/{fileName}` and `GET /dags/{fileName}/spec`.
 *
 * - `dags` passes `page`, `perPage`, `name`, `sort` and `order` to `GET /dags` and returns Dagu's
 *   pagination as is. `perPage` is capped at 200 by the contract and by Dagu alike. `labels` goes to
 *   2.x as is; on 1.x, which filters one `tag` only, a single label is sent as `tag` and several
 *   labels are matched by the gateway over the full listing, which it then pages itself with Dagu's
 *   page arithmetic. The gateway also pages itself when the caller's access is restricted to some
 *   DAGs or workspaces, so that pages and totals count only readable DAGs.
 * - A DAG in a workspace the caller may not read answers `dag` and `dag_spec` exactly as a DAG that
 *   does not exist (src/read/upstream/access.ts).
 * - Not listed: DAGs that exist only under `paths.alt_dags_dir` (Dagu's REST list does not include
 *   them; `dag` and `dag_spec` still find them by name).
 * - An unknown DAG name is `resource_not_found` with close readable names in `details.didYouMean`.
 */

/** Longest DAG name whose file `<name>.yaml` fits the 255-byte file-name limit of common file systems. */
export const MAX_DAG_NAME_BYTES = 250;

type LatestRun = {
  dagRunId: string;
  status: number;
  statusLabel: string;
  startedAt?: string;
  finishedAt?: string;
};

const dagSubject = (name: string) => `DAG ${shownValue(name)}`;

/** `latestDAGRun` as the contract's `latestRun`, only when the DAG has run (Dagu sends a zero run otherwise). */
export function latestRunOf(value: unknown): LatestRun | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const run = value as Json;
  const dagRunId = optionalText(run.dagRunId);
  if (dagRunId === undefined) return undefined;
  const status = integer(run.status, 'latestDAGRun.status');
  const latest: LatestRun = { dagRunId, status, statusLabel: runStatusLabel(status, run.statusLabel) };
  const startedAt = toRfc3339Millis(run.startedAt);
  const finishedAt = toRfc3339Millis(run.finishedAt);
  if (startedAt !== undefined) latest.startedAt = startedAt;
  if (finishedAt !== undefined) latest.finishedAt = finishedAt;
  return latest;
}

/** Fields shared by a list item and the DAG detail: description, labels, schedule, errors. */
function dagExtras(dag: Json | undefined, errors: unknown): Json {
  const extras: Json = {};
  if (dag !== undefined) {
    const description = optionalText(dag.description);
    if (description !== undefined) extras.description = description;
    const labels = dagLabels(dag);
    if (labels.length > 0) extras.labels = labels;
    const schedule = list(dag.schedule, 'dag.schedule')
      .map((entry) => optionalText((entry as { expression?: unknown } | null)?.expression))
      .filter((expression): expression is string => expression !== undefined);
    if (schedule.length > 0) extras.schedule = schedule;
  }
  const problems = strings(errors).map(scrubPaths);
  if (problems.length > 0) extras.errors = problems;
  return extras;
}

/** One `DAGFile` of `GET /dags` as a contract list item. */
export function dagListItem(entry: Json): Json {
  const name = dagFileName(entry);
  const dag = entry.dag === null || entry.dag === undefined ? undefined : object(entry.dag, 'dag');
  const item: Json = { name, uri: dagsSpecUri(name), suspended: entry.suspended === true };
  Object.assign(item, dagExtras(dag, entry.errors));
  const latestRun = latestRunOf(entry.latestDAGRun);
  if (latestRun !== undefined) item.latestRun = latestRun;
  const nextRun = toRfc3339Millis(entry.nextRun);
  if (nextRun !== undefined) item.nextRun = nextRun;
  return item;
}

/** Dagu's pagination object, keeping only its five numbers. */
export function paginationOf(value: unknown): Json {
  const pagination = object(value, 'pagination');
  const out: Json = {};
  for (const key of ['totalRecords', 'currentPage', 'totalPages', 'nextPage', 'prevPage']) {
    out[key] = integer(pagination[key], `pagination.${key}`);
  }
  return out;
}

const readDags: TargetHandler = async (request, deps, call) => {
  const scope: ReadScope = { request, deps, call };
  const plan = planDagList(deps.dagu.generation, request.query?.params ?? []);
  const pagesLocally = plan.clientLabels.length > 0 || !call.access.unrestricted;
  if (!pagesLocally) {
    const response = await fetchAny(scope, { route: '/dags', query: plan.upstream });
    if (!isSuccess(response)) throw failure(scope, response);
    const body = object(response.body, 'the DAG list');
    const items = list(body.dags, 'dags').map((entry) => dagListItem(object(entry, 'a DAG entry')));
    return { data: { items, pagination: paginationOf(body.pagination) }, upstreamStatus: response.status };
  }
  const query = plan.upstream.filter(([key]) => key !== 'page' && key !== 'perPage');
  const files = await listAllDagFiles(scope, query);
  const kept = files.filter(
    (entry) => hasAllLabels(entry.dag, plan.clientLabels) && canSeeDagEntry(scope, entry),
  );
  const perPage = Math.min(plan.perPage, DAGS_MAX_PER_PAGE);
  const start = (plan.page - 1) * perPage;
  const items = kept.slice(start, start + perPage).map(dagListItem);
  return {
    data: { items, pagination: localPagination(kept.length, plan.page, perPage) },
    upstreamStatus: 200,
  };
};

/** Reads `GET /dags/{fileName}[/spec]`; an unknown name becomes not-found with suggestions. */
async function fetchDag(
  scope: ReadScope,
  route: string,
  name: string,
): Promise<{ body: Json; status: number }> {
  try {
    assertDagReadable(scope, name);
  } catch (error) {
    // A file name instead of a DAG name: suggest the DAG.
    if (error instanceof ReadError && error.code === 'resource_not_found')
      throw await withSuggestions(scope, error, name);
    throw error;
  }
  // `<name>.yaml` must fit a file name (255 bytes). Dagu 1.30 answers a longer name with HTTP 200 and a
  // load error instead of 404, so such a name is answered here: no DAG can have it.
  if (Buffer.byteLength(name, 'utf8') > MAX_DAG_NAME_BYTES) {
    throw readError.notFound(`${dagSubject(name)} does not exist.`);
  }
  let response: Awaited<ReturnType<typeof fetchAny>>;
  try {
    response = await fetchAny(scope, { route, params: { fileName: name } });
  } catch (error) {
    // A name Dagu would read as path structure is refused before any request: no such DAG.
    if (error instanceof ReadError) throw await withSuggestions(scope, error, name);
    throw error;
  }
  if (!isSuccess(response)) {
    throw await withSuggestions(scope, failure(scope, response, { subject: dagSubject(name) }), name);
  }
  const body = object(response.body, `the answer of ${route}`);
  if (!(await canSeeDagOf(scope, name, body.dag))) {
    throw await withSuggestions(scope, hiddenAsMissing(scope, dagSubject(name)), name);
  }
  return { body, status: response.status };
}

export const dagTargets = {
  dags: defineTarget({
    fields: { required: [], optional: ['query'] },
    query: {
      params: {
        page: int(1),
        perPage: int(1, 200),
        name: TEXT,
        labels: LABELS,
        sort: oneOf('name', 'nextRun'),
        order: oneOf('asc', 'desc'),
      },
    },
    uri: { shapes: [SHAPES.dags] },
    handle: readDags,
  }),
  dag: defineTarget({
    fields: { required: ['name'], optional: [] },
    handle: async (request, deps, call) => {
      const { name } = request.fields;
      const { body, status } = await fetchDag({ request, deps, call }, '/dags/{fileName}', name);
      const dag = body.dag === null || body.dag === undefined ? undefined : object(body.dag, 'dag');
      const data: Json = { name, specUri: dagsSpecUri(name), suspended: body.suspended === true };
      Object.assign(data, dagExtras(dag, body.errors));
      const latestRun = latestRunOf(body.latestDAGRun);
      if (latestRun !== undefined) data.latestRun = latestRun;
      return { data, upstreamStatus: status };
    },
  }),
  dag_spec: defineTarget({
    fields: { required: ['name'], optional: [] },
    uri: { shapes: [SHAPES.dagSpec], targetMode: (fields) => dagsSpecUri(fields.name) },
    handle: async (request, deps, call) => {
      const { name } = request.fields;
      const { body, status } = await fetchDag({ request, deps, call }, '/dags/{fileName}/spec', name);
      return {
        data: {
          name,
          mimeType: 'application/yaml',
          spec: text(body.spec, 'spec'),
          errors: strings(body.errors).map(scrubPaths),
        },
        upstreamStatus: status,
      };
    },
  }),
};
