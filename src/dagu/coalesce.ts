/**
 * Identical GETs asked for in the same event-loop turn share one request to Dagu (request coalescing).
 *
 * A GET joins only a request that has not been sent yet: every request is sent at the end of the turn in
 * which it was first asked for, so Dagu reads what it answers after every caller of it asked. No caller
 * gets an answer older than a request of its own would have given: this is not a cache.
 *
 * Each caller keeps its own deadline and cancellation: a caller whose signal aborts is answered at once
 * (the shared request goes on for the others), and the shared request is aborted only when every caller
 * of it has gone.
 */

import type { CallSignal } from '../core/deadline.ts';

export interface Answer {
  status: number;
  text: string;
}

export type Send = (route: string, path: string, signal?: CallSignal) => Promise<Answer>;

interface Caller {
  signal: CallSignal | undefined;
  resolve(answer: Answer): void;
  reject(error: unknown): void;
  /** The listener on the caller's signal, removed once the caller is answered. */
  onAbort: () => void;
  settled: boolean;
}

interface Batch {
  route: string;
  callers: Caller[];
  /** Aborts the shared request; set once it is sent to more than one caller. */
  abort?: (reason: unknown) => void;
}

export interface CoalescingOptions {
  /** The error for a caller whose signal aborted before the answer came. */
  aborted(signal: CallSignal): Error;
  /** One GET that joined a request another caller had asked for. */
  onJoined?(route: string): void;
}

/** Listener options of every caller: one object, not one per GET. */
const ONCE = Object.freeze({ once: true });
const unsettled = (caller: Caller) => !caller.settled;

export function coalescing(send: Send, options: CoalescingOptions): Send {
  let waiting = new Map<string, Batch>();

  function start(path: string, batch: Batch): void {
    // Emptied, the Map is replaced rather than deleted from: a long-lived Map churned on every GET
    // keeps old batches, their callers and answers alive (core/linked-list.ts). A turn's batches all
    // start in the turn after, so under load the Map empties every turn.
    if (waiting.size === 1) waiting = new Map();
    else waiting.delete(path);
    // No caller joins a batch once it starts: when none has gone, the list is used as it is.
    const callers = batch.callers.every(unsettled) ? batch.callers : batch.callers.filter(unsettled);
    if (callers.length === 0) return;
    const finish = (answer: Answer | undefined, error?: unknown) => {
      for (const caller of callers) {
        if (caller.settled) continue;
        caller.settled = true;
        caller.signal?.removeEventListener('abort', caller.onAbort);
        if (answer === undefined) caller.reject(error);
        else caller.resolve(answer);
      }
    };
    let signal: CallSignal | undefined;
    if (callers.length === 1) {
      // Alone: the request follows the caller's own signal, as an unshared GET would.
      signal = callers[0]!.signal;
    } else {
      const controller = new AbortController();
      batch.abort = (reason) => controller.abort(reason);
      signal = controller.signal;
    }
    send(batch.route, path, signal).then(finish, (error) => finish(undefined, error));
  }

  return (route, path, signal) =>
    new Promise<Answer>((resolve, reject) => {
      if (signal?.aborted) {
        reject(options.aborted(signal));
        return;
      }
      let batch = waiting.get(path);
      if (batch === undefined) {
        const fresh: Batch = { route, callers: [] };
        batch = fresh;
        waiting.set(path, fresh);
        setImmediate(() => start(path, fresh));
      } else {
        options.onJoined?.(route);
      }
      const joined = batch;
      const onAbort = () => {
        if (caller.settled) return;
        caller.settled = true;
        reject(options.aborted(signal!));
        // The shared request goes on while any caller still waits for it.
        if (joined.abort !== undefined && joined.callers.every((other) => other.settled)) {
          joined.abort(signal!.reason);
        }
      };
      const caller: Caller = { signal, resolve, reject, onAbort, settled: false };
      signal?.addEventListener('abort', onAbort, ONCE);
      batch.callers.push(caller);
    });
}
