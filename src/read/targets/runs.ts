import type { AccessPolicy } from '../../core/access.ts';
import { DEFAULT_WORKSPACE } from '../../core/contract.ts';
import { attemptIdOf } from '../../dagu/attempt.ts';
import {
  applyRunListPlan,
  approvalOf,
  CursorError,
  hasAllLabels,
  humanTaskOf,
  isForeachStep,
  isMissingSchedulerLog,
  nextRunListCursor,
  planRunList,
  type RunListPlan,
  serves,
} from '../../dagu/dialect.ts';
import { defineTarget, type TargetHandler } from '../definition.ts';
import { type ReadError, readError } from '../errors.ts';
import { int, LABELS, LOG_LINES, once, TEXT } from '../query-params.ts';
import { NODE_STATUS_WAITING, nodeStatusLabel, runStatusLabel } from '../status.ts';
import { toRfc3339Millis } from '../time.ts';
import { canSee } from '../upstream/access.ts';
import { integer, type Json, list, object, optionalText, text } from '../upstream/bodies.ts';
import { dagFileName, listAllDagFiles } from '../upstream/dags.ts';
import { failure, fetchAny, fetchOk, isSuccess } from '../upstream/fetch.ts';
import { EMPTY_LOG, type LogPart, parseLogBody } from '../upstream/log.ts';
import { fetchRunDetails, nodesInExecutionOrder, runOfRequest, runSubject } from '../upstream/runs.ts';
import type { ReadScope } from '../upstream/scope.ts';
import { foreachItemsUri, type RunRef, runLogsUri, runUri, SHAPES, stepLogUris } from '../uri-shapes.ts';

/**
 * `runs`, `run` (root and child) and `run_logs`.
 *
 * - `runs`: `GET /dag-runs`; the 1.x/2.x differences (status, limit, cursor, labels, name, date window)
 *   are planned in src/dagu/dialect.ts. `dagRunId=latest` returns the newest run matching the other
 *   filters (Dagu's list endpoints give `latest` no meaning of their own).
 * - `run`: `GET /dag-runs/{name}/{dagRunId}` or `…/sub-dag-runs/{subRunId}` (a child at any depth under
 *   the root). `data.uri` is built from the resolved ids (so `latest` becomes the real id); steps are
 *   Dagu's nodes in execution order (by start time; steps that have not started keep the DAG's order,
 *   last); handler steps (onExit, …) are not listed. Child runs of a step are listed as extra
 *   `subRuns` with their canonical child URIs.
 * - `run_logs`: run details plus `GET …/log?tail=N` (tail always sent, default 500, as Dagu's own MCP
 *   tool; without it Dagu returns the first lines). A missing scheduler log file is an empty log.
 *   `hasStdout`/`hasStderr` say whether Dagu recorded a log file for the stream (no per-step probing).
 * - Dagu's absolute file paths (`log`, node `stdout`/`stderr`) never reach `data`; occurrences of
 *   Dagu's log folders inside step error messages are replaced by `<dagu-logs>`.
 */

/** Lines of the scheduler log returned when the caller gives no `tail`. */
export const DEFAULT_RUN_LOG_TAIL = '500';

// ---- Dagu log paths in messages ---------------------------------------------------------------

const ABSOLUTE = /^(?:\/|[A-Za-z]:[\\/])/;

/** The folders holding this run's logs: `<logs>/<dag>/<dag-run_…>/<file>` and `…/<run_…>/<step file>`. */
export function logRootsOf(details: Json): string[] {
  const roots = new Set<string>();
  const add = (path: unknown, levels: number) => {
    if (typeof path !== 'string' || !ABSOLUTE.test(path)) return;
    const parts = path.split(/[\\/]/);
    const kept = parts.slice(0, Math.max(parts.length - levels, 0));
    // Never a bare drive or `/`: at least two named folders.
    if (kept.filter((part) => part !== '' && !/^[A-Za-z]:$/.test(part)).length >= 2) {
      roots.add(path.slice(0, kept.join('/').length));
    }
  };
  add(details.log, 3);
  for (const node of list(details.nodes, 'nodes')) {
    if (node === null || typeof node !== 'object') continue;
    add((node as Json).stdout, 4);
    add((node as Json).stderr, 4);
  }
  return [...roots].sort((a, b) => b.length - a.length);
}

export function redactLogPaths(message: string, roots: readonly string[]): string {
  let out = message;
  for (const root of roots) {
    let at = out.indexOf(root);
    while (at >= 0) {
      let end = at + root.length;
      while (end < out.length && !/[\s"'`]/.test(out[end] ?? ' ')) end++;
      out = `${out.slice(0, at)}<dagu-logs>${out.slice(end)}`;
      at = out.indexOf(root, at + '<dagu-logs>'.length);
    }
  }
  return out;
}

// ---- pure builders --------------------------------------------------------------------------

function putTime(target: Json, key: string, value: unknown): void {
  const time = toRfc3339Millis(value);
  if (time !== undefined) target[key] = time;
}

/** Name, id, URI (under `uriKey`), status and label of a run summary or run details (`what` names it in errors). */
type RunHead = Json & { name: string; dagRunId: string; status: number };

function runHeadOf(source: Json, what: string, uriKey: 'uri' | 'runUri'): RunHead {
  const name = text(source.name, `${what}.name`);
  const dagRunId = text(source.dagRunId, `${what}.dagRunId`);
  const status = integer(source.status, `${what}.status`);
  return {
    name,
    dagRunId,
    [uriKey]: runUri(name, dagRunId),
    status,
    statusLabel: runStatusLabel(status, source.statusLabel),
  };
}

/** One `DAGRunSummary` as a contract run-list item. */
export function runListItem(summary: Json): RunHead {
  const item = runHeadOf(summary, 'dagRuns[]', 'uri');
  putTime(item, 'startedAt', summary.startedAt);
  putTime(item, 'finishedAt', summary.finishedAt);
  putTime(item, 'queuedAt', summary.queuedAt);
  return item;
}

/** Where a run lives in `dagu://runs`: the root's name and id, plus the child id for a sub run. */
export interface RunAddress extends RunRef {
  name: string;
  dagRunId: string;
}

/** The address of a run from its details and the ids the caller asked for. */
export function runAddressOf(
  details: Json,
  requested: { name: string; dagRunId: string; subRunId?: string },
) {
  const name = text(details.name, 'dagRunDetails.name');
  const dagRunId = text(details.dagRunId, 'dagRunDetails.dagRunId');
  if (requested.subRunId === undefined) return { name, dagRunId, address: { name, dagRunId } as RunAddress };
  const address: RunAddress = {
    name: optionalText(details.rootDAGRunName) ?? requested.name,
    dagRunId: optionalText(details.rootDAGRunId) ?? requested.dagRunId,
    subRunId: dagRunId,
  };
  return { name, dagRunId, address };
}

function stepOf(
  node: Json,
  address: RunAddress,
  logUriOf: (stepName: string) => string,
  roots: () => readonly string[],
): Json {
  const step = object(node.step, 'node.step');
  const name = text(step.name, 'node.step.name');
  const status = integer(node.status, 'node.status');
  const entry: Json = {
    name,
    status,
    statusLabel: nodeStatusLabel(status, node.statusLabel),
    logUri: logUriOf(name),
  };
  putTime(entry, 'startedAt', node.startedAt);
  putTime(entry, 'finishedAt', node.finishedAt);
  const error = optionalText(node.error);
  if (error !== undefined) entry.error = redactLogPaths(error, roots());
  if (isForeachStep(step)) entry.foreachUri = foreachItemsUri(address, name);
  if (status === NODE_STATUS_WAITING) {
    const humanTask = humanTaskOf(step);
    if (humanTask !== undefined) entry.humanTask = humanTask;
    const approval = approvalOf(step);
    if (approval !== undefined) entry.approval = approval;
  }
  // Most steps have no sub runs: no joined list is made for them.
  const subRuns = list(node.subRuns, 'node.subRuns');
  const repeated = list(node.subRunsRepeated, 'node.subRunsRepeated');
  const children =
    repeated.length === 0 ? subRuns : subRuns.length === 0 ? repeated : [...subRuns, ...repeated];
  if (children.length > 0) {
    entry.subRuns = children.map((child) => {
      const childRun = object(child, 'a sub run');
      const id = text(childRun.dagRunId, 'subRuns[].dagRunId');
      const sub: Json = { dagRunId: id, uri: runUri(address.name, address.dagRunId, id) };
      const dagName = optionalText(childRun.dagName);
      if (dagName !== undefined) sub.dagName = dagName;
      return sub;
    });
  }
  return entry;
}

/** `dagRunDetails` as the contract's run-detail model (root or child). */
export function buildRunDetail(
  details: Json,
  requested: { name: string; dagRunId: string; subRunId?: string },
): Json {
  const { name, dagRunId, address } = runAddressOf(details, requested);
  const status = integer(details.status, 'dagRunDetails.status');
  const data: Json = {
    name,
    dagRunId,
    uri: runUri(address.name, address.dagRunId, address.subRunId),
  };
  if (address.subRunId === undefined) data.logsUri = runLogsUri(name, dagRunId);
  else
    data.root = {
      name: address.name,
      dagRunId: address.dagRunId,
      uri: runUri(address.name, address.dagRunId),
    };
  const attemptId = attemptIdOf(details);
  if (attemptId !== undefined) data.attemptId = attemptId;
  data.status = status;
  data.statusLabel = runStatusLabel(status, details.statusLabel);
  putTime(data, 'queuedAt', details.queuedAt);
  putTime(data, 'startedAt', details.startedAt);
  putTime(data, 'finishedAt', details.finishedAt);
  // Log folders are needed only to redact error messages: found when the first one is met.
  let found: string[] | undefined;
  const roots = () => {
    found ??= logRootsOf(details);
    return found;
  };
  const runError = optionalText(details.error);
  if (runError !== undefined) data.error = redactLogPaths(runError, roots());
  const logUriOf = stepLogUris(address);
  data.steps = nodesInExecutionOrder(details).map((node) => stepOf(node, address, logUriOf, roots));
  if (details.humanTaskResumePending === true) data.humanTaskResumePending = true;
  return data;
}

/** Run details plus the scheduler log as the contract's run-log model. */
export function buildRunLogs(details: Json, schedulerLog: LogPart): Json {
  const data = runHeadOf(details, 'dagRunDetails', 'runUri');
  const address: RunAddress = { name: data.name, dagRunId: data.dagRunId };
  putTime(data, 'startedAt', details.startedAt);
  putTime(data, 'finishedAt', details.finishedAt);
  data.schedulerLog = { ...schedulerLog };
  const logUriOf = stepLogUris(address);
  data.stepLogs = nodesInExecutionOrder(details).map((node) => {
    const step = object(node.step, 'node.step');
    const stepName = text(step.name, 'node.step.name');
    const stepStatus = integer(node.status, 'node.status');
    const entry: Json = {
      stepName,
      status: stepStatus,
      statusLabel: nodeStatusLabel(stepStatus, node.statusLabel),
    };
    putTime(entry, 'startedAt', node.startedAt);
    putTime(entry, 'finishedAt', node.finishedAt);
    entry.hasStdout = optionalText(node.stdout) !== undefined;
    entry.hasStderr = optionalText(node.stderr) !== undefined;
    entry.logUri = logUriOf(stepName);
    return entry;
  });
  return data;
}

// ---- handlers -------------------------------------------------------------------------------

function cursorProblem(scope: ReadScope, error: CursorError): ReadError {
  return scope.request.mode === 'uri'
    ? readError.invalidUri(error.message, { field: 'uri' })
    : readError.invalidInput(error.message, { field: 'query' });
}

/** 1.x: the DAG names carrying every label (Dagu filters one tag; the others are matched here). */
async function dagsWithLabels(scope: ReadScope, labels: readonly string[]): Promise<Set<string>> {
  const [firstLabel, ...others] = labels;
  const files = await listAllDagFiles(scope, firstLabel === undefined ? [] : [['tag', firstLabel]]);
  return new Set(files.filter((entry) => hasAllLabels(entry.dag, others)).map(dagFileName));
}

/**
 * Dagu 2.x filters runs by one workspace itself: a caller who may read exactly one, and not the
 * unlabelled runs of `default`, has its list filtered there first (the gateway filters again).
 */
function soleWorkspace(access: AccessPolicy): string | undefined {
  const [only, ...others] = access.exactWorkspaces ?? [];
  return others.length > 0 || only === DEFAULT_WORKSPACE ? undefined : only;
}

const readRuns: TargetHandler = async (request, deps, call) => {
  const scope: ReadScope = { request, deps, call };
  const { access } = call;
  let plan: RunListPlan;
  try {
    plan = planRunList(deps.dagu.generation, request.query?.params ?? [], !access.everyWorkspace);
  } catch (error) {
    if (error instanceof CursorError) throw cursorProblem(scope, error);
    throw error;
  }
  const sole = soleWorkspace(access);
  if (sole !== undefined && serves(deps.dagu.generation, 'workspaces'))
    plan.upstream.push(['workspace', sole]);
  const labelled =
    plan.local.labels === undefined ? undefined : await dagsWithLabels(scope, plan.local.labels);
  // Everything sent to the list route comes from `query`, so a refusal (Dagu 2.x: 400 "invalid query
  // cursor") is about that field.
  const { body, status } = await fetchOk(
    scope,
    { route: '/dag-runs', query: plan.upstream },
    { field: 'query' },
  );
  const readable = list(body.dagRuns, 'dagRuns')
    .map((entry) => object(entry, 'a DAG-run summary'))
    .filter((summary) => canSee(scope, summary))
    .map(runListItem)
    .filter((item) => access.canReadDag(item.name));
  const result = applyRunListPlan(plan, readable, labelled);
  const data: Json = { items: result.runs };
  const nextCursor = nextRunListCursor(
    deps.dagu.generation,
    plan,
    optionalText(body.nextCursor),
    result.nextCursor,
  );
  if (nextCursor !== undefined) data.nextCursor = nextCursor;
  return { data, upstreamStatus: status };
};

export const runTargets = {
  runs: defineTarget({
    fields: { required: [], optional: ['query'] },
    query: {
      params: {
        name: TEXT,
        dagRunId: TEXT,
        status: { rule: { kind: 'integer', min: 0, max: 8 }, repeatable: true },
        fromDate: once({ kind: 'unixSeconds' }),
        toDate: once({ kind: 'unixSeconds' }),
        limit: int(1, 500),
        cursor: TEXT,
        labels: LABELS,
      },
    },
    uri: { shapes: [SHAPES.runs] },
    handle: readRuns,
  }),
  run: defineTarget({
    fields: { required: ['name', 'dagRunId'], optional: ['subRunId'] },
    uri: {
      shapes: [SHAPES.run, SHAPES.subRun],
      targetMode: (fields) => runUri(fields.name, fields.dagRunId, fields.subRunId),
    },
    handle: async (request, deps, call) => {
      const run = runOfRequest(request.fields);
      const { details, status } = await fetchRunDetails({ request, deps, call }, run);
      return { data: buildRunDetail(details, run), upstreamStatus: status };
    },
  }),
  run_logs: defineTarget({
    fields: { required: ['name', 'dagRunId'], optional: ['query'] },
    query: { params: { tail: LOG_LINES } },
    uri: {
      shapes: [SHAPES.runLogs],
      targetMode: (fields, query) => runLogsUri(fields.name, fields.dagRunId, query),
    },
    handle: async (request, deps, call) => {
      const scope: ReadScope = { request, deps, call };
      const run = runOfRequest(request.fields);
      const { details } = await fetchRunDetails(scope, run);
      const tail = request.query?.params.find(([key]) => key === 'tail')?.[1] ?? DEFAULT_RUN_LOG_TAIL;
      // The resolved id keeps both reads on the same run even when `latest` moves in between.
      const params = {
        name: text(details.name, 'dagRunDetails.name'),
        dagRunId: text(details.dagRunId, 'dagRunId'),
      };
      const response = await fetchAny(scope, {
        route: '/dag-runs/{name}/{dagRunId}/log',
        params,
        query: [['tail', tail]],
      });
      let log: LogPart;
      if (isSuccess(response)) log = parseLogBody(response.body);
      else if (isMissingSchedulerLog(deps.dagu.generation, response)) log = { ...EMPTY_LOG };
      else throw failure(scope, response, { subject: runSubject(run) });
      return { data: buildRunLogs(details, log), upstreamStatus: response.status };
    },
  }),
};
