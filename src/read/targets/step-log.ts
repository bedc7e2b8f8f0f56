import type { ReadTarget } from '../../core/contract.ts';
import type { DaguClient, DaguResponse } from '../../dagu/types.ts';
import { ReadError, readError } from '../errors.ts';
import type { TargetHandler } from '../handler.ts';
import type { ReadQuery, ResolvedRead } from '../types.ts';
import { upstreamError } from '../upstream/failure.ts';
import { EMPTY_LOG, type LogPart, parseLogBody } from './log.ts';
import { assertRunReadable, resolveLatest } from './runs.ts';
import { getFromDagu, isRecord } from './upstream.ts';

/**
 * `step_log`: the stdout and stderr of one step of a root run, a child run, or (Dagu 2.x only) a body
 * step of one foreach item. Dagu's REST log routes return one stream per call, so the gateway reads
 * the two streams in parallel with the same positioning options and merges them (dagu-rest-notes §1.14,
 * Part B §3). Verified against Dagu 1.30.3:
 * - a log call without `stream` is an empty-bodied HTTP 500, so `stream` is always sent;
 * - without tail/head/offset/limit Dagu returns the FIRST 1000 lines; the contract wants the last
 *   1000 (Dagu's own MCP tool), so the gateway sends `tail=1000` itself;
 * - a missing log file (a step that never ran has an empty log path) is HTTP 500
 *   `{"code":"internal_error"}` on 1.30.3 and 404 "log file not found for step …" on 2.x; both read as
 *   an empty stream, while an unknown run or step (404 "… not found …") is `resource_not_found`;
 * - an empty log file answers `{"content":""}` without counters, which read as 0 / 0 / false.
 */

export type LogStream = 'stdout' | 'stderr';

/** Positioning parameters forwarded unchanged to Dagu. */
const POSITIONING = new Set(['tail', 'head', 'offset', 'limit']);

/** Dagu's MCP step log shows the last 1000 lines when the caller positions nothing. */
export const DEFAULT_TAIL = '1000';

/** What one `step_log` read asks of Dagu: which streams, and the query both stream calls share. */
export interface StepLogPlan {
  streams: LogStream[];
  /** `undefined` when both streams are read; otherwise the other content is `""`. */
  only?: LogStream;
  positioning: Array<[string, string]>;
}

/** Turns the validated `step_log` query into the REST calls to make (pure). */
export function planStepLog(query: ReadQuery | undefined): StepLogPlan {
  let only: LogStream | undefined;
  const positioning: Array<[string, string]> = [];
  for (const [key, value] of query?.params ?? []) {
    if (key === 'stream') {
      if (value === 'stdout' || value === 'stderr') only = value;
    } else if (POSITIONING.has(key)) {
      positioning.push([key, value]);
    }
  }
  if (positioning.length === 0) positioning.push(['tail', DEFAULT_TAIL]);
  return only === undefined
    ? { streams: ['stdout', 'stderr'], positioning }
    : { streams: [only], only, positioning };
}

/** The contract's step-log model: both contents, counters of stdout unless only stderr was asked for. */
export function buildStepLogData(
  parts: Partial<Record<LogStream, LogPart>>,
  only?: LogStream,
): Record<string, unknown> {
  const stdout = parts.stdout ?? EMPTY_LOG;
  const stderr = parts.stderr ?? EMPTY_LOG;
  const counters = only === 'stderr' ? stderr : stdout;
  return {
    stdoutContent: only === 'stderr' ? '' : stdout.content,
    stderrContent: only === 'stdout' ? '' : stderr.content,
    lineCount: counters.lineCount,
    totalLines: counters.totalLines,
    hasMore: counters.hasMore,
    // Dagu estimates totalLines for files over 10 KB; say so rather than pass an estimate as a count.
    isEstimate: counters.isEstimate,
  };
}

function messageOf(body: unknown): string {
  return isRecord(body) && typeof body.message === 'string' ? body.message : '';
}

/** How a non-200 answer of a step-log route reads. */
export type LogFailure = 'missing' | 'ambiguous' | 'error';

/**
 * Classifies a failed step-log call (pure):
 * - `missing`: the step exists but has no log file for that stream → an empty stream;
 * - `ambiguous`: the 2.x foreach body-log route says "log file not found" for a missing file, an
 *   unknown body step and an item without a record alike; the caller must look the item up;
 * - `error`: anything else (unknown run or step, auth, 5xx) → mapped like any upstream failure.
 */
export function classifyLogFailure(
  response: DaguResponse,
  generation: 1 | 2,
  foreachBody: boolean,
): LogFailure {
  if (response.status === 404 && /^log file not found/i.test(messageOf(response.body))) {
    return foreachBody ? 'ambiguous' : 'missing';
  }
  // Dagu 1.x answers 404 for an unknown run or step and turns every error of the log reader
  // (missing file, empty log path) into a JSON 500 `internal_error`; nothing else in that handler
  // yields a JSON 500 (a panic, e.g. on a missing `stream`, is an empty-bodied 500).
  if (
    generation === 1 &&
    response.status === 500 &&
    isRecord(response.body) &&
    response.body.code === 'internal_error'
  ) {
    return 'missing';
  }
  return 'error';
}

/** Does a foreach item body (Dagu's `ForeachItem`) have a body step with this name or ID? */
export function foreachItemHasBodyStep(body: unknown, bodyStepName: string): boolean {
  if (!isRecord(body) || !Array.isArray(body.steps)) return false;
  return body.steps.some(
    (step) => isRecord(step) && (step.name === bodyStepName || step.id === bodyStepName),
  );
}

/** The route prefix and `{…}` parameters of a root run, or of a child run under its root. */
export function runRoute(fields: ResolvedRead['fields']): { prefix: string; params: Record<string, string> } {
  const params: Record<string, string> = { name: fields.name ?? '', dagRunId: fields.dagRunId ?? '' };
  if (fields.subRunId !== undefined) {
    params.subRunId = fields.subRunId;
    return { prefix: '/dag-runs/{name}/{dagRunId}/sub-dag-runs/{subRunId}', params };
  }
  return { prefix: '/dag-runs/{name}/{dagRunId}', params };
}

/** Validation guarantees these fields; a handler reached without them is a gateway bug. */
export function requireFields(
  request: ResolvedRead,
  names: ReadonlyArray<keyof ResolvedRead['fields']>,
): void {
  for (const name of names) {
    if (request.fields[name] === undefined) {
      throw readError.internal(`The ${String(name)} field reached the ${request.target} handler unset.`);
    }
  }
}

/**
 * Maps a failed Dagu answer like every target does (src/dagu/errors.ts), naming `field` on a 400 in
 * target mode when exactly one input field can have caused it.
 */
export function upstreamFailure(
  response: DaguResponse,
  request: ResolvedRead,
  options: { subject?: string; field?: string } = {},
): ReadError {
  const error = upstreamError(response, {
    mode: request.mode,
    target: request.target,
    ...(options.subject !== undefined ? { subject: options.subject } : {}),
  });
  if (options.field === undefined || error.code !== 'invalid_tool_input' || error.field !== undefined)
    return error;
  return new ReadError(
    { ...error.toObject(), field: options.field },
    { upstreamStatus: error.upstreamStatus, cause: error.cause },
  );
}

export const FOREACH_NEEDS_DAGU_2 =
  'Foreach items are served by Dagu 2.x only (its foreach REST routes); the connected Dagu 1.x has no foreach steps.';

export const FOREACH_ROUTES_MISSING =
  'The connected Dagu does not serve the foreach REST routes (GET /dag-runs/{name}/{dagRunId}/steps/{stepName}/foreach…); foreach reads need a Dagu 2.x release that has them.';

/**
 * A 404 from Dagu's router rather than from a handler: the route does not exist in this Dagu version.
 * Handlers answer JSON `{code, message}`; the router answers plain text ("404 page not found").
 */
export function isMissingRoute(response: DaguResponse): boolean {
  return response.status === 404 && (typeof response.body === 'string' || response.body === undefined);
}

/**
 * The 2.x body-log route cannot tell a missing file from an unknown item or body step; the item
 * record settles it: a body step that exists but has no file is an empty stream.
 */
async function confirmForeachBodyStep(
  dagu: DaguClient,
  request: ResolvedRead,
  itemRoute: string,
  params: Record<string, string>,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { bodyStepName = '', item = '' } = request.fields;
  const { bodyStepName: _bodyStep, ...itemParams } = params;
  const response = await getFromDagu(dagu, { route: itemRoute, params: itemParams, signal });
  if (response.status !== 200) throw upstreamFailure(response, request, { field: 'item' });
  if (!foreachItemHasBodyStep(response.body, bodyStepName)) {
    throw readError.notFound(`Body step ${bodyStepName} not found in foreach item ${item}.`);
  }
}

const readStepLog: TargetHandler = async (request, deps, call) => {
  requireFields(request, ['name', 'dagRunId', 'stepName']);
  await assertRunReadable({ request, deps, call });
  const { item, bodyStepName } = request.fields;
  const foreachBody = item !== undefined && bodyStepName !== undefined;
  const dagu = deps.dagu;
  if (foreachBody && dagu.generation === 1) {
    throw readError.unavailable(FOREACH_NEEDS_DAGU_2);
  }

  const run = runRoute(request.fields);
  const params: Record<string, string> = { ...run.params, stepName: request.fields.stepName ?? '' };
  // Dagu's log routes do not know `latest` (its run route does): read the newest run's id first.
  if (params.dagRunId === 'latest')
    params.dagRunId = await resolveLatest({ request, deps, call }, params.name ?? '');
  const stepRoute = `${run.prefix}/steps/{stepName}`;
  let route = `${stepRoute}/log`;
  if (foreachBody) {
    params.item = item;
    params.bodyStepName = bodyStepName;
    route = `${stepRoute}/foreach/{item}/steps/{bodyStepName}/log`;
  }
  const plan = planStepLog(request.query);

  // One item lookup settles an ambiguous 404 for both streams.
  let bodyStepCheck: Promise<void> | undefined;
  const confirmBodyStep = (): Promise<void> => {
    bodyStepCheck ??= confirmForeachBodyStep(
      dagu,
      request,
      `${stepRoute}/foreach/{item}`,
      params,
      call.signal,
    );
    return bodyStepCheck;
  };

  const statuses: number[] = [];
  const readPart = async (stream: LogStream): Promise<LogPart> => {
    const response = await getFromDagu(dagu, {
      route,
      params,
      query: [['stream', stream], ...plan.positioning],
      signal: call.signal,
    });
    statuses.push(response.status);
    if (response.status === 200) return parseLogBody(response.body);
    if (foreachBody && isMissingRoute(response)) {
      throw readError.unavailable(FOREACH_ROUTES_MISSING);
    }
    const failure = classifyLogFailure(response, dagu.generation, foreachBody);
    if (failure === 'missing') return EMPTY_LOG;
    if (failure === 'ambiguous') {
      await confirmBodyStep();
      return EMPTY_LOG;
    }
    throw upstreamFailure(response, request);
  };

  const parts = await Promise.all(plan.streams.map(readPart));
  const byStream: Partial<Record<LogStream, LogPart>> = {};
  plan.streams.forEach((stream, index) => {
    byStream[stream] = parts[index];
  });
  const data = buildStepLogData(byStream, plan.only);
  // For the audit record: 200 when Dagu served every stream, else the status that was read as empty.
  const upstreamStatus = statuses.find((status) => status !== 200) ?? statuses[0];
  return upstreamStatus === undefined ? { data } : { data, upstreamStatus };
};

export const stepLogHandlers: Partial<Record<ReadTarget, TargetHandler>> = {
  step_log: readStepLog,
};
