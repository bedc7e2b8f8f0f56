import type { Pool } from 'undici';
import { type CallSignal, timeoutReason } from '../core/deadline.ts';
import { DaguError } from './errors.ts';

/**
 * One GET to Dagu through the pool, and what its failures mean: the transport under the REST client
 * (src/dagu/client.ts), which adds routes, coalescing, tracing and metrics on top.
 */

/**
 * How one upstream request ended, as metrics label it: the HTTP status when a whole answer came, else
 * what went wrong: `timeout` (its own timeout or the caller's deadline), `aborted` (the caller went),
 * `network_error` (no connection, a reset, no answer), `bad_body` (an answer cut short or too large).
 */
export type UpstreamOutcome = number | 'timeout' | 'aborted' | 'network_error' | 'bad_body';

/** Bodies larger than this are refused rather than buffered (a 10 000-line log is far below it). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

export const isTimeoutReason = (reason: unknown) => reason instanceof Error && reason.name === 'TimeoutError';

/** A GET given up before Dagu answered: its time ran out (`timeout`), or its caller went (`cancelled`). */
export const abortError = (timedOut: boolean, cause: unknown) =>
  timedOut
    ? new DaguError('timeout', 'Dagu did not answer in time.', { cause })
    : new DaguError('cancelled', 'The read was cancelled before Dagu answered.', { cause });

/** How one GET ended before a status and a whole body were in hand. */
export class TransportFailure extends Error {
  constructor(
    readonly kind: 'no_answer' | 'truncated' | 'too_large',
    readonly upstreamStatus: number | undefined,
    /** Why the request was aborted, when it was: its own timeout, or the caller's signal. */
    readonly aborted: 'timeout' | 'caller' | undefined,
    cause: unknown,
  ) {
    super(kind, { cause });
  }
}

const asError = (reason: unknown) => (reason instanceof Error ? reason : new Error(String(reason)));

/**
 * One GET through the pool's dispatcher, the body gathered as it arrives: undici's `request()` would
 * wrap every answer in a stream read through an async iterator, a cost paid on every read for bodies
 * that are read whole anyway. The request is aborted after `timeoutMs` (one timer, cleared at the end)
 * or when `signal` aborts. Rejects with a TransportFailure.
 */
export function dispatchGet(
  pool: Pool,
  path: string,
  headers: Readonly<Record<string, string>>,
  timeoutMs: number,
  signal: CallSignal | undefined,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    let abortRequest: ((reason: Error) => void) | undefined;
    let abortedBy: TransportFailure['aborted'];
    let abortReason: Error | undefined;
    let status: number | undefined;
    let size = 0;
    const chunks: Buffer[] = [];
    let settled = false;
    const stop = (by: 'timeout' | 'caller', reason: Error) => {
      if (abortedBy !== undefined) return;
      abortedBy = by;
      abortReason = reason;
      abortRequest?.(reason);
    };
    const timer = setTimeout(() => stop('timeout', timeoutReason('Dagu did not answer in time.')), timeoutMs);
    const onAbort = () => stop('caller', asError(signal!.reason));
    const settle = (failure: TransportFailure | undefined, text?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (failure !== undefined) reject(failure);
      else resolve({ status: status!, text: text! });
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    pool.dispatch(
      { method: 'GET', path, headers },
      {
        onConnect(abort) {
          abortRequest = abort;
          if (abortReason !== undefined) abort(abortReason);
        },
        onHeaders(statusCode) {
          status = statusCode;
          return true;
        },
        onData(chunk) {
          size += chunk.byteLength;
          if (size > MAX_BODY_BYTES) {
            settle(new TransportFailure('too_large', status, undefined, undefined));
            abortRequest?.(new Error('the body is too large'));
            return false;
          }
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          if (status === undefined)
            return settle(new TransportFailure('no_answer', undefined, abortedBy, undefined));
          settle(
            undefined,
            (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)).toString('utf8'),
          );
        },
        onError(error) {
          settle(
            new TransportFailure(status === undefined ? 'no_answer' : 'truncated', status, abortedBy, error),
          );
        },
      },
    );
  });
}

/** How a GET that ended without a whole answer is labelled for metrics, and the DaguError it raises. */
export function failureOf(
  failure: TransportFailure,
  callerSignal: CallSignal | undefined,
): { outcome: UpstreamOutcome; error: DaguError } {
  if (failure.kind === 'too_large') {
    return {
      outcome: 'bad_body',
      error: new DaguError('bad_body', 'Dagu returned a response that is too large to read.', {
        upstreamStatus: failure.upstreamStatus,
        cause: failure,
      }),
    };
  }
  if (failure.aborted !== undefined) {
    const timedOut = failure.aborted === 'timeout' || isTimeoutReason(callerSignal?.reason);
    return { outcome: timedOut ? 'timeout' : 'aborted', error: abortError(timedOut, failure.cause) };
  }
  if (failure.kind === 'truncated') {
    return {
      outcome: 'bad_body',
      error: new DaguError('bad_body', 'Dagu returned a malformed response (the body was cut short).', {
        upstreamStatus: failure.upstreamStatus,
        cause: failure.cause,
      }),
    };
  }
  return {
    outcome: 'network_error',
    error: new DaguError('unreachable', 'Dagu is unreachable.', { cause: failure.cause }),
  };
}
