/**
 * A deadline as an AbortSignal, with one timer that is cleared as soon as the work is done.
 *
 * `AbortSignal.timeout` keeps its timer until it fires (a 30 s call deadline at 1,000 calls/s keeps
 * 30,000 timers alive), and `AbortSignal.any` registers every combined signal for garbage-collection
 * tracking; on the per-call path both cost CPU and memory for nothing once the call has answered.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  /** True when the signal aborted because the time ran out (not because the parent aborted). */
  readonly timedOut: boolean;
  /** Clears the timer and stops following the parent; the signal stays as it is. */
  done(): void;
}

/** The reason a deadline aborts with: a `TimeoutError`, as `AbortSignal.timeout` would give. */
export const timeoutReason = (message: string) => new DOMException(message, 'TimeoutError');

/** A signal that aborts after `ms`, or as soon as `parent` aborts (with the parent's reason). */
export function startDeadline(ms: number, parent?: AbortSignal, message = 'The deadline passed.'): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(timeoutReason(message));
  }, ms);
  // A pending deadline never keeps the process alive on its own.
  timer.unref();
  const onParentAbort = () => controller.abort(parent?.reason);
  if (parent !== undefined) {
    if (parent.aborted) onParentAbort();
    else parent.addEventListener('abort', onParentAbort, { once: true });
  }
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    done() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}
