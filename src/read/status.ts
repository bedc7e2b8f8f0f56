/**
 * Status numbers and labels of DAG runs and of their steps (nodes), identical in Dagu 1.x and 2.x except
 * that 2.x adds node status 9 (`retrying`). Labels are derived from the number so that every answer uses
 * the same words whatever Dagu version produced it.
 */

export const RUN_STATUS_LABELS: readonly string[] = Object.freeze([
  'not_started',
  'running',
  'failed',
  'aborted',
  'succeeded',
  'queued',
  'partially_succeeded',
  'waiting',
  'rejected',
]);

export const NODE_STATUS_LABELS: readonly string[] = Object.freeze([
  'not_started',
  'running',
  'failed',
  'aborted',
  'succeeded',
  'skipped',
  'partially_succeeded',
  'waiting',
  'rejected',
  'retrying',
]);

/** Node status of a step that waits on an approval gate or a human task. */
export const NODE_STATUS_WAITING = 7;

function label(table: readonly string[], status: number, upstreamLabel: unknown): string {
  const known = Number.isInteger(status) ? table[status] : undefined;
  if (known !== undefined) return known;
  return typeof upstreamLabel === 'string' && upstreamLabel !== '' ? upstreamLabel : 'unknown';
}

/** Label of a DAG-run status; an unknown number keeps Dagu's own label, else `unknown`. */
export function runStatusLabel(status: number, upstreamLabel?: unknown): string {
  return label(RUN_STATUS_LABELS, status, upstreamLabel);
}

/** Label of a step (node) status; an unknown number keeps Dagu's own label, else `unknown`. */
export function nodeStatusLabel(status: number, upstreamLabel?: unknown): string {
  return label(NODE_STATUS_LABELS, status, upstreamLabel);
}

/** Run statuses in which a run still changes on its own: running, queued, waiting (and not started). */
const UNFINISHED_RUN_STATUSES: ReadonlySet<number> = new Set([0, 1, 5, 7]);
/** Step statuses after which Dagu never writes the step's log files again (Dagu's own "done" set). */
const DONE_STEP_STATUSES: ReadonlySet<number> = new Set([2, 3, 4, 5, 6, 8]);

/** A run that nothing changes until someone acts on it (a retry, a status edit, a deletion). */
export const isFinishedRun = (status: unknown): boolean =>
  typeof status === 'number' && Number.isInteger(status) && status >= 0 && status <= 8
    ? !UNFINISHED_RUN_STATUSES.has(status)
    : false;

/** A step whose execution is over: failed, aborted, succeeded, skipped, partially succeeded or rejected. */
export const isDoneStep = (status: unknown): boolean =>
  typeof status === 'number' && DONE_STEP_STATUSES.has(status);
