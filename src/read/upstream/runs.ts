import { merged } from '../../core/merged.ts';
import { shownValue } from '../../core/shown-value.ts';
import { ReadError } from '../errors.ts';
import { toRfc3339Millis } from '../time.ts';
import type { RunRef } from '../uri-shapes.ts';
import { assertDagReadable, canSee, hiddenAsMissing } from './access.ts';
import { type Json, list, object, text } from './bodies.ts';
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
    merged(error.toObject(), { message: `DAG ${shownValue(name)} does not exist.` }),
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
  return run.dagRunId === 'latest' ? merged(run, { dagRunId: await resolveLatest(scope, run) }) : run;
}

/**
 * The access check of a read addressed by run: the run's DAG by name, and, when it takes reading the
 * run (a child run, whose own DAG must be readable too, or a caller narrowed to some workspaces, which
 * the run's labels decide), the run itself. Returns the run with `latest` resolved when that read
 * resolved it.
 */
export async function assertRunReadable(scope: ReadScope, run: RunRef): Promise<RunRef> {
  assertDagReadable(scope, run.name);
  const { access } = scope.call;
  if (access.everyWorkspace && (run.subRunId === undefined || access.unrestricted)) return run;
  const { details, run: resolved } = await fetchRunDetails(scope, run);
  // The details read resolved `latest` already: hand the resolved run on, so it is not resolved again.
  return resolved.subRunId === undefined
    ? merged(resolved, { dagRunId: text(details.dagRunId, 'dagRunDetails.dagRunId') })
    : resolved;
}

/**
 * A run in a workspace the caller may not read is answered as a run that does not exist, and its DAG
 * as a DAG that does not exist when the caller sees none of it (src/read/upstream/access.ts).
 */
function hiddenRunError(scope: ReadScope, run: RunRef): Promise<ReadError> {
  return runNotFound(scope, run.name, hiddenAsMissing(scope, runSubject(run)));
}

/** `dagRunDetails` of the addressed root or child run, and the run as addressed (a sub run's root `latest` resolved). */
export async function fetchRunDetails(
  scope: ReadScope,
  run: RunRef,
): Promise<{ details: Json; status: number; run: RunRef }> {
  assertDagReadable(scope, run.name);
  const resolved = run.subRunId === undefined ? run : await withRootChecked(scope, run);
  const route = runRoute(resolved);
  const fetched = await fetchDetails(scope, run, route.prefix, route.params);
  // A child run belongs to its own DAG, which the caller must be allowed to read as well.
  if (run.subRunId !== undefined) assertDagReadable(scope, text(fetched.details.name, 'dagRunDetails.name'));
  // Seen synchronously: a visible run costs no turn of the event loop.
  if (!canSee(scope, fetched.details)) throw await hiddenRunError(scope, run);
  // Fields one by one, not `{ ...fetched, run }`: a map per result on Node 20 (src/core/merged.ts).
  return { details: fetched.details, status: fetched.status, run: resolved };
}

/**
 * A child run's root: Dagu resolves `latest` for a root run but not for the root of a sub run, so it is
 * resolved first; a caller narrowed to some workspaces must see the root run too, whatever the child's
 * own workspace (both are read, both must be visible).
 */
async function withRootChecked(scope: ReadScope, run: RunRef): Promise<RunRef> {
  if (scope.call.access.everyWorkspace) return withLatestResolved(scope, run);
  const root: RunRef = { name: run.name, dagRunId: run.dagRunId };
  const { details } = await fetchDetails(scope, root, '/dag-runs/{name}/{dagRunId}', { ...root });
  // A hidden root is answered as a root run that does not exist.
  if (!canSee(scope, details)) throw await hiddenRunError(scope, root);
  return merged(run, { dagRunId: text(details.dagRunId, 'dagRunDetails.dagRunId') });
}

/** The run a request addresses: a root run, or a child run under its root. */
export function runOfRequest(fields: { name: string; dagRunId: string; subRunId?: string }): RunRef {
  const { name, dagRunId, subRunId } = fields;
  return subRunId === undefined ? { name, dagRunId } : { name, dagRunId, subRunId };
}

/**
 * Nodes in execution order: by start time; nodes not started keep Dagu's order, after the others.
 * Dagu usually lists them in that order already: then its list is returned as it is, with no sort keys
 * or sorted copy made per node.
 */
export function nodesInExecutionOrder(details: Json): Json[] {
  const nodes = list(details.nodes, 'nodes').map((node) => object(node, 'a node'));
  const started = nodes.map((node) => toRfc3339Millis(node.startedAt));
  if (inStartOrder(started)) return nodes;
  const order = nodes.map((_node, index) => index);
  order.sort((a, b) => {
    const startedA = started[a];
    const startedB = started[b];
    if (startedA === undefined || startedB === undefined) {
      if (startedA !== startedB) return startedA === undefined ? 1 : -1;
      return a - b;
    }
    return startedA < startedB ? -1 : startedA > startedB ? 1 : a - b;
  });
  return order.map((index) => nodes[index]!);
}

/** True when the start times never go back and every node not started comes after the started ones. */
function inStartOrder(started: readonly (string | undefined)[]): boolean {
  for (let i = 1; i < started.length; i += 1) {
    const previous = started[i - 1];
    const current = started[i];
    if (current === undefined) continue;
    if (previous === undefined || previous > current) return false;
  }
  return true;
}
