import { upstreamCode } from './errors.ts';
import type { DaguResponse } from './types.ts';

/**
 * Every difference between Dagu 1.x (REST under `/api/v2`, generation 1) and Dagu 2.x (`/api/v1`,
 * generation 2) that the targets meet, in one place. Handlers ask this module what to
 * send and how to read the answer, and stay free of version checks.
 *
 * Differences handled (checked against Dagu 1.30.3's api.yaml, its handlers and a running 1.30.3, and
 * against 2.14's api.yaml):
 * - `GET /dags`: 2.x `labels` (comma list, all must match); 1.x only `tag` (a single tag). With several
 *   labels on 1.x, `tag` gets the first, the others are matched here (case-insensitively, as Dagu
 *   matches tags) and the page is cut here.
 * - DAG labels: 2.x `dag.labels` (`dag.tags` deprecated); 1.x `dag.tags`.
 * - `GET /dag-runs`: 2.x `status` repeatable, `limit`, `cursor`, `labels`, `name` as a case-insensitive
 *   substring, no default date window. 1.x: a single `status` (a repeated one is HTTP 400), no
 *   `limit`/`cursor`/`labels`, `name` compared with the run-store folder name (which misses DAG names
 *   with a dot), and only today's runs unless a date is given. On 1.x the gateway therefore filters
 *   name, several statuses and labels itself, sends `fromDate` = 2000-01-01 when no date is given,
 *   applies `limit`, and hands out its own cursor (an offset bound to the filters).
 * - Errors: 1.x answers some not-found cases with HTTP 500 and body code `not_found` (e.g. the spec of
 *   an unknown DAG); they read as 404. A missing scheduler log file is 404 "log file not found" on 2.x
 *   and a bare 500 on 1.x; both read as an empty log once the run itself was found.
 * - Approval gates: 2.x `step.approval`; 1.x the `hitl` executor's config. Human tasks and `foreach`
 *   steps exist only on 2.x.
 */

export type Generation = 1 | 2;
export type QueryPairs = ReadonlyArray<readonly [string, string]>;

/** Dagu's default page size for `GET /dags` (both generations) and its server-side cap. */
export const DAGS_DEFAULT_PER_PAGE = 50;
export const DAGS_MAX_PER_PAGE = 200;
/** Dagu 2.x's default `limit` for `GET /dag-runs` (applied by the gateway on 1.x), and its maximum. */
export const RUNS_DEFAULT_LIMIT = 100;
export const RUNS_MAX_LIMIT = 500;
/** 2000-01-01T00:00:00Z: the start of 2.x's implicit date window, sent to 1.x explicitly. */
export const RUNS_WINDOW_START = 946_684_800;

const valuesOf = (query: QueryPairs, key: string) => query.filter(([k]) => k === key).map(([, v]) => v);
const firstOf = (query: QueryPairs, key: string) => valuesOf(query, key)[0];

export function splitLabels(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((label) => label.trim())
    .filter((label) => label !== '');
}

// ---- responses ------------------------------------------------------------------------------

/** Reads 1.x's "HTTP 500 with body code not_found" as the 404 it means. */
export function normalizeResponse(generation: Generation, response: DaguResponse): DaguResponse {
  if (generation === 1 && response.status === 500 && upstreamCode(response.body) === 'not_found') {
    return { status: 404, body: response.body };
  }
  return response;
}

/**
 * True when a scheduler-log answer means "the run exists but its log file does not (yet)".
 * Only meaningful after the run itself was found.
 */
export function isMissingSchedulerLog(generation: Generation, response: DaguResponse): boolean {
  const message = (response.body as { message?: unknown } | undefined)?.message;
  if (response.status === 404) return typeof message === 'string' && /log file not found/i.test(message);
  // 1.x hides the reason behind a generic 500 ("An unexpected error occurred"); a missing file is the
  // case Dagu's own MCP tool reads as an empty log.
  return generation === 1 && response.status === 500;
}

/**
 * A failed step-log answer that means "the step exists but has no log file for this stream": 2.x says
 * 404 "log file not found"; 1.x turns every error of its log reader (missing file, empty log path) into
 * a JSON 500 `internal_error`, and nothing else in that handler yields a JSON 500 (a panic, e.g. on a
 * missing `stream`, is an empty-bodied 500).
 */
export function isMissingStepLog(generation: Generation, response: DaguResponse): boolean {
  const message = (response.body as { message?: unknown } | undefined)?.message;
  if (response.status === 404) return typeof message === 'string' && /^log file not found/i.test(message);
  return generation === 1 && response.status === 500 && upstreamCode(response.body) === 'internal_error';
}

// ---- features -------------------------------------------------------------------------------

/**
 * What only one generation serves: the Wiki, the DAG search feed (`GET /search/dags`; 1.x has the
 * older `GET /dags/search`), workspaces (the `workspace` filter of `GET /dag-runs`) and foreach steps
 * with their REST routes exist on 2.x only. `attemptStepLogs`:
 * 2.x writes each step execution's logs to files of their own in the attempt's folder, so a finished
 * step's log can be cached by file (src/read/upstream/finished-logs.ts); 1.x was not verified, and
 * reads its step logs without a cache.
 */
export type DaguFeature = 'wiki' | 'dagSearchFeed' | 'workspaces' | 'foreach' | 'attemptStepLogs';

export function serves(generation: Generation, _feature: DaguFeature): boolean {
  return generation === 2;
}

// ---- DAG list -------------------------------------------------------------------------------

export interface DagListPlan {
  /** Query for `GET /dags`; for a full listing, `page`/`perPage` are added per fetched page. */
  upstream: Array<[string, string]>;
  /** Labels the gateway must match itself (all of them). Non-empty means: list every page, cut locally. */
  clientLabels: string[];
  page: number;
  perPage: number;
}

/**
 * Dagu multiplies `page` by the page size in 64-bit integers and fails (HTTP 500) near the top of the
 * range the contract allows; any page past the end of a real list is empty, so larger pages are sent
 * as this one.
 */
export const MAX_UPSTREAM_PAGE = 1_000_000;

/** A query pair as sent upstream: `page` capped at MAX_UPSTREAM_PAGE, everything else as given. */
export const upstreamPair = ([key, value]: readonly [string, string]): [string, string] => [
  key,
  key === 'page' ? String(Math.min(Number(value), MAX_UPSTREAM_PAGE)) : value,
];

export function planDagList(generation: Generation, query: QueryPairs): DagListPlan {
  const page = Number(firstOf(query, 'page') ?? 1);
  const perPage = Math.min(Number(firstOf(query, 'perPage') ?? DAGS_DEFAULT_PER_PAGE), DAGS_MAX_PER_PAGE);
  if (generation === 2) return { upstream: query.map(upstreamPair), clientLabels: [], page, perPage };
  const labels = splitLabels(firstOf(query, 'labels'));
  const upstream: Array<[string, string]> = [];
  for (const pair of query) if (pair[0] !== 'labels') upstream.push(upstreamPair(pair));
  if (labels[0] !== undefined) upstream.push(['tag', labels[0]]);
  return { upstream, clientLabels: labels.slice(1), page, perPage };
}

/** The labels of a DAG as Dagu reports them (2.x `labels`; 1.x and deprecated 2.x `tags`). */
export function dagLabels(dag: unknown): string[] {
  if (dag === null || typeof dag !== 'object') return [];
  const { labels, tags } = dag as { labels?: unknown; tags?: unknown };
  const list = Array.isArray(labels) ? labels : Array.isArray(tags) ? tags : [];
  return list.filter((label): label is string => typeof label === 'string');
}

export function hasAllLabels(dag: unknown, wanted: readonly string[]): boolean {
  const have = new Set(dagLabels(dag).map((label) => label.toLowerCase()));
  return wanted.every((label) => have.has(label.toLowerCase()));
}

/** Dagu's pagination object for a list the gateway cut itself (the arithmetic of Dagu's paginator). */
export function localPagination(total: number, page: number, perPage: number) {
  const totalPages = Math.trunc((total - 1) / perPage) + 1;
  return {
    totalRecords: total,
    currentPage: page,
    totalPages,
    nextPage: Math.min(page + 1, totalPages),
    prevPage: Math.max(page - 1, 1),
  };
}

// ---- run list -------------------------------------------------------------------------------

export interface RunListPlan {
  upstream: Array<[string, string]>;
  /** The gateway's share of the work (1.x; and `dagRunId=latest` on both). */
  local: {
    /** Case-insensitive substring of the DAG name. */
    name?: string;
    statuses?: ReadonlySet<number>;
    /** All must be labels of the run's DAG; the handler resolves them to DAG names. */
    labels?: string[];
    /** Page size and start when the gateway pages (1.x). */
    limit?: number;
    offset?: number;
    /** Gateway cursors must come back with the same filters. */
    filterKey?: string;
    /** `dagRunId=latest`: only the newest matching run. */
    latestOnly?: boolean;
  };
}

/** A `cursor` the gateway cannot continue from (1.x, where the gateway issues the cursors). */
export class CursorError extends Error {}

/** FNV-1a (32-bit) of the filters a gateway cursor is bound to. */
function filterKeyOf(query: QueryPairs): string {
  const canonical = query
    .filter(([key]) => key !== 'cursor' && key !== 'limit')
    .map(([key, value]) => `${key}=${value}`)
    .sort()
    .join('&');
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(canonical, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36);
}

export function encodeGatewayCursor(offset: number, filterKey: string): string {
  return Buffer.from(JSON.stringify({ v: 1, o: offset, f: filterKey }), 'utf8').toString('base64url');
}

function decodeGatewayCursor(cursor: string, filterKey: string): number {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new CursorError('The cursor is not a cursor this gateway issued.');
  }
  const { v, o, f } = (parsed ?? {}) as { v?: unknown; o?: unknown; f?: unknown };
  if (v !== 1 || typeof o !== 'number' || !Number.isSafeInteger(o) || o < 0 || typeof f !== 'string') {
    throw new CursorError('The cursor is not a cursor this gateway issued.');
  }
  if (f !== filterKey) {
    throw new CursorError('The cursor belongs to a different query; continue with the same filters.');
  }
  return o;
}

/** What to ask Dagu and what to do locally. Throws CursorError for a cursor the gateway did not issue (1.x). */
// `filteredAfter`: the caller filters Dagu's runs further (workspace grants): `latest` cannot ask for one run.
export function planRunList(generation: Generation, query: QueryPairs, filteredAfter = false): RunListPlan {
  const latestOnly = firstOf(query, 'dagRunId') === 'latest';
  if (generation === 2) {
    const upstream: Array<[string, string]> = [];
    for (const [key, value] of query) {
      if (latestOnly && (key === 'dagRunId' || key === 'limit' || key === 'cursor')) continue;
      upstream.push([key, value]);
    }
    if (latestOnly) upstream.push(['limit', filteredAfter ? String(RUNS_MAX_LIMIT) : '1']);
    return { upstream, local: latestOnly ? { latestOnly } : {} };
  }

  const upstream: Array<[string, string]> = [];
  const local: RunListPlan['local'] = {};
  const statuses = valuesOf(query, 'status').map(Number);
  if (statuses.length === 1) upstream.push(['status', String(statuses[0])]);
  else if (statuses.length > 1) local.statuses = new Set(statuses);
  const dagRunId = firstOf(query, 'dagRunId');
  if (dagRunId !== undefined && !latestOnly) upstream.push(['dagRunId', dagRunId]);
  const fromDate = firstOf(query, 'fromDate');
  const toDate = firstOf(query, 'toDate');
  if (fromDate !== undefined) upstream.push(['fromDate', fromDate]);
  if (toDate !== undefined) upstream.push(['toDate', toDate]);
  if (fromDate === undefined && toDate === undefined) upstream.push(['fromDate', String(RUNS_WINDOW_START)]);
  const name = firstOf(query, 'name');
  if (name !== undefined) local.name = name;
  const labels = splitLabels(firstOf(query, 'labels'));
  if (labels.length > 0) local.labels = labels;
  if (latestOnly) {
    local.latestOnly = true;
    return { upstream, local };
  }
  local.limit = Number(firstOf(query, 'limit') ?? RUNS_DEFAULT_LIMIT);
  local.filterKey = filterKeyOf(query);
  const cursor = firstOf(query, 'cursor');
  local.offset = cursor === undefined ? 0 : decodeGatewayCursor(cursor, local.filterKey);
  return { upstream, local };
}

export interface RunSummaryLike {
  name: string;
  status: number;
}

/**
 * Applies the gateway's share of a run-list plan to Dagu's answer (newest first, as Dagu sorts).
 * `labelledDags` holds the DAG names carrying every requested label, when labels were requested on 1.x.
 */
export function applyRunListPlan<T extends RunSummaryLike>(
  plan: RunListPlan,
  runs: readonly T[],
  labelledDags?: ReadonlySet<string>,
): { runs: T[]; nextCursor?: string } {
  const { local } = plan;
  const needle = local.name?.toLowerCase();
  const kept = runs.filter(
    (run) =>
      (needle === undefined || run.name.toLowerCase().includes(needle)) &&
      (local.statuses === undefined || local.statuses.has(run.status)) &&
      (labelledDags === undefined || labelledDags.has(run.name)),
  );
  if (local.latestOnly) return { runs: kept.slice(0, 1) };
  if (local.limit === undefined) return { runs: kept };
  const offset = local.offset ?? 0;
  const page = kept.slice(offset, offset + local.limit);
  const end = offset + page.length;
  return end < kept.length && local.filterKey !== undefined
    ? { runs: page, nextCursor: encodeGatewayCursor(end, local.filterKey) }
    : { runs: page };
}

/**
 * The cursor of the next run-list page: 2.x's own (none for a `latest` read, which asks for one run),
 * or on 1.x the gateway's cursor from applyRunListPlan.
 */
export function nextRunListCursor(
  generation: Generation,
  plan: RunListPlan,
  upstreamCursor: string | undefined,
  gatewayCursor: string | undefined,
): string | undefined {
  if (generation === 1) return gatewayCursor;
  return plan.local.latestOnly ? undefined : upstreamCursor;
}

// ---- run details ----------------------------------------------------------------------------

export interface ApprovalGate {
  prompt?: string;
  input?: string[];
  required?: string[];
}

const stringList = (value: unknown): string[] | undefined => {
  if (!Array.isArray(value)) return undefined;
  const list = value.filter((item): item is string => typeof item === 'string');
  return list.length > 0 ? list : undefined;
};

/** The approval gate a step declares: 2.x `step.approval`, or 1.x's `hitl` executor config. */
export function approvalOf(step: Record<string, unknown>): ApprovalGate | undefined {
  let source: unknown = step.approval;
  if (source === undefined || source === null) {
    const executor = step.executorConfig as { type?: unknown; config?: unknown } | undefined;
    if (executor?.type === 'hitl') source = executor.config ?? {};
  }
  if (source === null || typeof source !== 'object') return undefined;
  const { prompt, input, required } = source as { prompt?: unknown; input?: unknown; required?: unknown };
  const gate: ApprovalGate = {};
  if (typeof prompt === 'string' && prompt !== '') gate.prompt = prompt;
  const inputs = stringList(input);
  if (inputs !== undefined) gate.input = inputs;
  const requiredInputs = stringList(required);
  if (requiredInputs !== undefined) gate.required = requiredInputs;
  return gate;
}

/** 2.x `step.humanTask`: `prompt` (resolved and masked by Dagu) and `form` when non-empty. */
export function humanTaskOf(step: Record<string, unknown>): { prompt: string; form?: object } | undefined {
  const task = step.humanTask;
  if (task === null || typeof task !== 'object') return undefined;
  const { prompt, form } = task as { prompt?: unknown; form?: unknown };
  if (typeof prompt !== 'string') return undefined;
  const out: { prompt: string; form?: object } = { prompt };
  if (form !== null && typeof form === 'object' && Object.keys(form).length > 0) out.form = form;
  return out;
}

/** True for a `foreach` step (2.x; Dagu's spec builder gives every foreach step this executor type). */
export function isForeachStep(step: Record<string, unknown>): boolean {
  return (step.executorConfig as { type?: unknown } | undefined)?.type === 'foreach';
}
