import { merged } from '../../core/merged.ts';
import { isMissingStepLog, serves } from '../../dagu/dialect.ts';
import type { DaguResponse } from '../../dagu/types.ts';
import { defineTarget, RUN_ECHO, type TargetDeps, type TargetRequest } from '../definition.ts';
import { readError } from '../errors.ts';
import { int, LOG_LINES, oneOf } from '../query-params.ts';
import type { CallContext, ReadQuery, TargetResult } from '../types.ts';
import { isRecord } from '../upstream/bodies.ts';
import { type LogWindowAnswer, readLogWindows } from '../upstream/cached-log.ts';
import { failure, fetchAny, isMissingRoute } from '../upstream/fetch.ts';
import type { LogStream } from '../upstream/finished-logs.ts';
import { explainMissingForeachRoutes } from '../upstream/foreach.ts';
import { EMPTY_LOG, type LogPart, parseLogBody } from '../upstream/log.ts';
import { assertRunReadable, runOfRequest, runRoute, withLatestResolved } from '../upstream/runs.ts';
import type { ReadScope } from '../upstream/scope.ts';
import { foreachStepLogUri, SHAPES, stepLogUri } from '../uri-shapes.ts';

/**
 * `step_log`: the stdout and stderr of one step of a root run, a child run, or (Dagu 2.x only) a body
 * step of one foreach item. Dagu's REST log routes return one stream per call, so the gateway reads
 * the two streams in parallel with the same positioning options and merges them. Verified against
 * Dagu 1.30.3:
 * - a log call without `stream` is an empty-bodied HTTP 500, so `stream` is always sent;
 * - without tail/head/offset/limit Dagu returns the FIRST 1000 lines; the contract wants the last
 *   1000 (Dagu's own MCP tool), so the gateway sends `tail=1000` itself;
 * - a missing log file (a step that never ran has an empty log path) is HTTP 500
 *   `{"code":"internal_error"}` on 1.30.3 and 404 "log file not found for step …" on 2.x; both read as
 *   an empty stream, while an unknown run or step (404 "… not found …") is `resource_not_found`;
 * - an empty log file answers `{"content":""}` without counters, which read as 0 / 0 / false.
 */

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
  if (!isMissingStepLog(generation, response)) return 'error';
  // The 2.x foreach body-log route says "log file not found" for a missing file, an unknown body step
  // and an item without a record alike.
  return foreachBody && response.status === 404 ? 'ambiguous' : 'missing';
}

/** Does a foreach item body (Dagu's `ForeachItem`) have a body step with this name or ID? */
export function foreachItemHasBodyStep(body: unknown, bodyStepName: string): boolean {
  if (!isRecord(body) || !Array.isArray(body.steps)) return false;
  return body.steps.some(
    (step) => isRecord(step) && (step.name === bodyStepName || step.id === bodyStepName),
  );
}

/**
 * The 2.x body-log route cannot tell a missing file from an unknown item or body step; the item
 * record settles it: a body step that exists but has no file is an empty stream.
 */
async function confirmForeachBodyStep(
  scope: ReadScope,
  itemRoute: string,
  params: Record<string, string>,
  body: { item: string; bodyStepName: string },
): Promise<void> {
  const { item, bodyStepName } = body;
  const { bodyStepName: _bodyStep, ...itemParams } = params;
  const response = await fetchAny(scope, { route: itemRoute, params: itemParams });
  if (response.status !== 200) throw failure(scope, response, { field: 'item' });
  if (!foreachItemHasBodyStep(response.body, bodyStepName)) {
    throw readError.notFound(`Body step ${bodyStepName} not found in foreach item ${item}.`);
  }
}

const STEP_LOG_FIELDS = {
  required: ['name', 'dagRunId', 'stepName'],
  optional: ['subRunId', 'query', 'item', 'bodyStepName'],
  together: [['item', 'bodyStepName']],
} as const;

type StepLogRequest = TargetRequest<
  (typeof STEP_LOG_FIELDS.required)[number],
  (typeof STEP_LOG_FIELDS.optional)[number]
>;

async function readStepLog(
  request: StepLogRequest,
  deps: TargetDeps,
  call: CallContext,
): Promise<TargetResult> {
  const scope: ReadScope = { request, deps, call };
  const requested = runOfRequest(request.fields);
  const checked = await assertRunReadable(scope, requested);
  const { item, bodyStepName } = request.fields;
  // The resolver requires item and bodyStepName together.
  const foreach = item !== undefined && bodyStepName !== undefined ? { item, bodyStepName } : undefined;
  const foreachBody = foreach !== undefined;
  if (foreachBody && !serves(deps.dagu.generation, 'foreach')) {
    throw await explainMissingForeachRoutes(scope, requested, request.fields.stepName ?? '');
  }

  // Dagu's log routes do not know `latest` (its run route does): read the newest run's id first.
  const resolved = await withLatestResolved(scope, checked);
  const run = runRoute(resolved);
  const params: Record<string, string> = merged(run.params, { stepName: request.fields.stepName });
  const stepRoute = `${run.prefix}/steps/{stepName}`;
  let route = `${stepRoute}/log`;
  if (foreach !== undefined) {
    params.item = foreach.item;
    params.bodyStepName = foreach.bodyStepName;
    route = `${stepRoute}/foreach/{item}/steps/{bodyStepName}/log`;
  }
  const plan = planStepLog(request.query);

  // One item lookup settles an ambiguous 404 for both streams.
  let bodyStepCheck: Promise<void> | undefined;
  const confirmBodyStep = (body: { item: string; bodyStepName: string }): Promise<void> => {
    bodyStepCheck ??= confirmForeachBodyStep(scope, `${stepRoute}/foreach/{item}`, params, body);
    return bodyStepCheck;
  };

  // Both streams meet the same missing foreach routes: explain them with one run-details read.
  let missingForeach: Promise<Error> | undefined;
  const explainMissingForeach = (): Promise<Error> => {
    missingForeach ??= explainMissingForeachRoutes(scope, requested, request.fields.stepName ?? '');
    return missingForeach;
  };

  const readFromDagu = async (stream: LogStream): Promise<LogWindowAnswer> => {
    const response = await fetchAny(scope, {
      route,
      params,
      query: [['stream', stream], ...plan.positioning],
    });
    if (response.status === 200) return { part: parseLogBody(response.body), status: 200, fresh: true };
    if (foreachBody && isMissingRoute(response)) throw await explainMissingForeach();
    const failed = classifyLogFailure(response, deps.dagu.generation, foreachBody);
    if (failed === 'ambiguous' && foreach !== undefined) await confirmBodyStep(foreach);
    else if (failed !== 'missing') throw failure(scope, response);
    return { part: EMPTY_LOG, status: response.status, fresh: false };
  };
  // A finished step's log windows are cached by file (Dagu 2.x writes each attempt's logs anew).
  const cacheable = foreach === undefined && serves(deps.dagu.generation, 'attemptStepLogs');
  const answers = await readLogWindows(
    scope,
    {
      cache: cacheable ? deps.logCache : undefined,
      run: resolved,
      stepName: request.fields.stepName,
      streams: plan.streams,
      positioning: plan.positioning,
    },
    readFromDagu,
  );
  const parts = answers.map((answer) => answer.part);
  const statuses = answers.map((answer) => answer.status);
  const byStream: Partial<Record<LogStream, LogPart>> = {};
  plan.streams.forEach((stream, index) => {
    byStream[stream] = parts[index];
  });
  const data = buildStepLogData(byStream, plan.only);
  // For the audit record: 200 when Dagu served every stream, else the status that was read as empty.
  const upstreamStatus = statuses.find((status) => status !== 200) ?? statuses[0];
  return upstreamStatus === undefined ? { data } : { data, upstreamStatus };
}

export const stepLogTargets = {
  step_log: defineTarget({
    fields: STEP_LOG_FIELDS,
    query: {
      params: {
        tail: LOG_LINES,
        head: LOG_LINES,
        offset: int(1),
        limit: LOG_LINES,
        stream: oneOf('stdout', 'stderr'),
      },
      atMostOneOf: ['tail', 'head', 'offset'],
      onlyWith: { param: 'limit', partner: 'offset' },
    },
    uri: {
      shapes: [SHAPES.stepLog, SHAPES.subStepLog, SHAPES.foreachStepLog, SHAPES.subForeachStepLog],
      targetMode: (fields, query) =>
        fields.item === undefined || fields.bodyStepName === undefined
          ? stepLogUri(runOfRequest(fields), fields.stepName, query)
          : foreachStepLogUri(runOfRequest(fields), fields.stepName, fields.item, fields.bodyStepName, query),
    },
    echo: RUN_ECHO,
    handle: readStepLog,
  }),
};
