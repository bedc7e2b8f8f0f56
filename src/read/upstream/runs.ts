import { shownValue } from '../../core/shown-value.ts';
import { ReadError } from '../errors.ts';
import type { RunRef } from '../uri-shapes.ts';
import { assertDagReadable } from './access.ts';
import { type Json, object, text } from './bodies.ts';
import { dagExists, withSuggestions } from './dags.ts';
import { failure, fetchAny, isSuccess } from './fetch.ts';
import type { ReadScope } from './scope.ts';

/** Reads addressed by run: route building, `latest`, the run's allowlist check, run details. */

/** `DAG-run "…" of DAG "…"` (or `Sub DAG-run … of …`): what a 404 says does not exist. */
export function runSubject(run: RunRef): string {
  const root = `DAG-run ${shownValue(run.dagRunId)} of DAG ${shownValue(run.name)}`;
  return run.subRunId === undefined ? root : `Sub DAG-run ${shownValue(run.subRunId)} of ${root}`;
}

/** The route prefix and `{…}` parameters of a root run, or of a child run under its root. */
export function runRoute(run: RunRef): { prefix: string; params: Record<string, string> } {
  const params: Record<string, string> = { name: run.name, dagRunId: run.dagRunId };
  if (run.subRunId !== undefined) {
    params.subRunId = run.subRunId;
    return { prefix: '/dag-runs/{name}/{dagRunId}/sub-dag-runs/{subRunId}', params };
  }
  return { prefix: '/dag-runs/{name}/{dagRunId}', params };
}

/** A not-found run: when the DAG itself does not exist, say so and suggest close names. */
async function runNotFound(scope: ReadScope, name: string, error: ReadError): Promise<ReadError> {
  if (error.code !== 'resource_not_found' || (await dagExists(scope, name))) return error;
  const missingDag = new ReadError(
    { ...error.toObject(), message: `DAG ${shownValue(name)} does not exist.` },
    { upstreamStatus: error.upstreamStatus, cause: error.cause },
  );
  return withSuggestions(scope, missingDag, name);
}

/** `dagRunDetails` of a run route, with a not-found run explained (missing DAG, close names). */
async function fetchDetails(
  scope: ReadScope,
  run: RunRef,
  route: string,
  params: Record<string, string>,
): Promise<{ details: Json; status: number }> {
  let response: Awaited<ReturnType<typeof fetchAny>>;
  try {
    response = await fetchAny(scope, { route, params });
  } catch (error) {
    if (error instanceof ReadError) throw await runNotFound(scope, run.name, error);
    throw error;
  }
  if (!isSuccess(response))
    throw await runNotFound(scope, run.name, failure(scope, response, { subject: runSubject(run) }));
  const details = object(object(response.body, 'the run details').dagRunDetails, 'dagRunDetails');
  return { details, status: response.status };
}

/** The id of the newest run of DAG `name` (`GET /dag-runs/{name}/latest`). */
async function resolveLatest(scope: ReadScope, run: RunRef): Promise<string> {
  const { details } = await fetchDetails(scope, run, '/dag-runs/{name}/{dagRunId}', {
    name: run.name,
    dagRunId: 'latest',
  });
  return text(details.dagRunId, 'dagRunDetails.dagRunId');
}

/** `run` with `dagRunId: latest` replaced by the newest run's id (routes below a run do not know it). */
export async function withLatestResolved(scope: ReadScope, run: RunRef): Promise<RunRef> {
  return run.dagRunId === 'latest' ? { ...run, dagRunId: await resolveLatest(scope, run) } : run;
}

/**
 * The allowlist check of a read addressed by run: the run's DAG, and for a child run its own DAG
 * too, which takes one read of the child's details (only when the caller's access is restricted).
 * Returns the run, with `latest` resolved when that read had to resolve it.
 */
export async function assertRunReadable(scope: ReadScope, run: RunRef): Promise<RunRef> {
  assertDagReadable(scope, run.name);
  if (run.subRunId === undefined || scope.call.access.unrestricted) return run;
  // The details read resolved `latest` already: hand the resolved run on, so it is not resolved again.
  return (await fetchRunDetails(scope, run)).run;
}

/** `dagRunDetails` of the addressed root or child run, and the run as addressed (a sub run's root `latest` resolved). */
export async function fetchRunDetails(
  scope: ReadScope,
  run: RunRef,
): Promise<{ details: Json; status: number; run: RunRef }> {
  assertDagReadable(scope, run.name);
  // Dagu resolves `latest` for a root run but not for the root of a sub run: resolve it first.
  const resolved = run.subRunId === undefined ? run : await withLatestResolved(scope, run);
  const route = runRoute(resolved);
  const fetched = await fetchDetails(scope, run, route.prefix, route.params);
  // A child run belongs to its own DAG, which the caller must be allowed to read as well.
  if (run.subRunId !== undefined) assertDagReadable(scope, text(fetched.details.name, 'dagRunDetails.name'));
  return { ...fetched, run: resolved };
}

/** The run a request addresses: a root run, or a child run under its root. */
export function runOfRequest(fields: { name: string; dagRunId: string; subRunId?: string }): RunRef {
  const { name, dagRunId, subRunId } = fields;
  return subRunId === undefined ? { name, dagRunId } : { name, dagRunId, subRunId };
}
