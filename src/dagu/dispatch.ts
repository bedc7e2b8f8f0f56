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

type Settled = { status: number; text: string };

/** Listener options of every GET: one object, not one per request. */
const ONCE = Object.freeze({ once: true });

/** What a settled GET no longer calls. */
const SETTLED = () => {};

/**
 * One GET in flight: undici's handler and the request's own state in one object, its callbacks on the
 * prototype (an object literal of five closures and the closures they share cost seven objects per
 * request). Aborted after its timeout (one timer, cleared at the end) or when the caller's signal
 * aborts; settles once, with the answer or a TransportFailure.
 *
 * Settled, it lets go of everything of the call: undici still holds a finished request's handler for a
 * while, and one that kept the promise's `resolve` (and through the promise the answer), its chunks
 * and the caller's signal kept every answer alive through scavenges (bench/RESULTS.md, eighth round).
 */
class GetInFlight {
  private abortRequest: ((reason: Error) => void) | undefined = undefined;
  private abortedBy: TransportFailure['aborted'] = undefined;
  private abortReason: Error | undefined = undefined;
  private status: number | undefined = undefined;
  private size = 0;
  private readonly chunks: Buffer[] = [];
  private settled = false;
  private readonly timer: NodeJS.Timeout;
  /** The listener on the caller's signal, when there is one. */
  private onCallerAbort: (() => void) | undefined;

  constructor(
    timeoutMs: number,
    private signal: CallSignal | undefined,
    private resolve: (answer: Settled) => void,
    private reject: (failure: TransportFailure) => void,
  ) {
    this.timer = setTimeout(
      () => this.stop('timeout', timeoutReason('Dagu did not answer in time.')),
      timeoutMs,
    );
    if (signal === undefined) return;
    this.onCallerAbort = () => this.stop('caller', asError(signal.reason));
    if (signal.aborted) this.onCallerAbort();
    else signal.addEventListener('abort', this.onCallerAbort, ONCE);
  }

  private stop(by: 'timeout' | 'caller', reason: Error): void {
    if (this.abortedBy !== undefined) return;
    this.abortedBy = by;
    this.abortReason = reason;
    this.abortRequest?.(reason);
  }

  private settle(failure: TransportFailure | undefined, text?: string): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    if (this.onCallerAbort !== undefined) this.signal?.removeEventListener('abort', this.onCallerAbort);
    const { resolve, reject, status } = this;
    this.resolve = SETTLED;
    this.reject = SETTLED;
    this.signal = undefined;
    this.onCallerAbort = undefined;
    this.abortRequest = undefined;
    this.chunks.length = 0;
    if (failure !== undefined) reject(failure);
    else resolve({ status: status!, text: text! });
  }

  onConnect(abort: (reason: Error) => void): void {
    this.abortRequest = abort;
    if (this.abortReason !== undefined) abort(this.abortReason);
  }

  onHeaders(statusCode: number): boolean {
    this.status = statusCode;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.size += chunk.byteLength;
    if (this.size > MAX_BODY_BYTES) {
      const abort = this.abortRequest;
      this.settle(new TransportFailure('too_large', this.status, undefined, undefined));
      abort?.(new Error('the body is too large'));
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.status === undefined) {
      this.settle(new TransportFailure('no_answer', undefined, this.abortedBy, undefined));
      return;
    }
    const { chunks, size } = this;
    this.settle(undefined, (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)).toString('utf8'));
  }

  onError(error: Error): void {
    this.settle(
      new TransportFailure(
        this.status === undefined ? 'no_answer' : 'truncated',
        this.status,
        this.abortedBy,
        error,
      ),
    );
  }
}

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
): Promise<Settled> {
  return new Promise((resolve, reject) => {
    pool.dispatch({ method: 'GET', path, headers }, new GetInFlight(timeoutMs, signal, resolve, reject));
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
