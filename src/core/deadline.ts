/**
 * A call's deadline as a cancellation signal, without an AbortController or a timer of its own.
 *
 * An AbortController's signal is an EventTarget (two Maps, a prototype set at creation) and each
 * listener an object of Node's event machinery: on Node 20, bench:profile counted about 25 objects and
 * 15–20 µs per call for the signal and its two listeners, for a signal that almost never fires. `AbortSignal.timeout` keeps its timer until it fires (a 30 s deadline
 * at 1,000 calls/s keeps 30,000 timers alive), and `AbortSignal.any` registers every combined signal
 * for garbage-collection tracking. A Deadline is one object: deadlines of one duration expire in the
 * order they started, so they wait in one list with one timer for its head, and a finished call
 * unlinks its own in O(1).
 */

/**
 * What the per-call path needs of a cancellation signal. An AbortSignal has it (the stdio path, tests
 * and start-up probes pass one); so does a Deadline.
 */
export interface CallSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface Deadline {
  readonly signal: CallSignal;
  /** Ends the wait; the signal stays as it is. */
  done(): void;
}

/** The reason a deadline aborts with: a `TimeoutError`, as `AbortSignal.timeout` would give. */
export const timeoutReason = (message: string) => new DOMException(message, 'TimeoutError');

/**
 * A libuv timer fires when its millisecond has come, which performance.now() may see a fraction of a
 * millisecond earlier: a deadline that close is due, as a Node timer of the same length would be.
 */
const DUE_WITHIN_MS = 1;

/** The pending deadlines of one duration, oldest first: the order they expire in. */
class DeadlineList {
  head: CallDeadline | undefined;
  tail: CallDeadline | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ms: number) {}

  add(deadline: CallDeadline): void {
    deadline.previous = this.tail;
    if (this.tail === undefined) this.head = deadline;
    else this.tail.next = deadline;
    this.tail = deadline;
    if (this.timer === undefined) this.arm(this.ms);
  }

  remove(deadline: CallDeadline): void {
    const { previous, next } = deadline;
    if (previous === undefined) this.head = next;
    else previous.next = next;
    if (next === undefined) this.tail = previous;
    else next.previous = previous;
    deadline.previous = undefined;
    deadline.next = undefined;
  }

  /** One timer for the head; a head that finished meanwhile only makes it wait again for the next. */
  private arm(ms: number): void {
    this.timer = setTimeout(() => this.expire(), ms);
    // A pending deadline never keeps the process alive on its own.
    this.timer.unref();
  }

  private expire(): void {
    this.timer = undefined;
    const now = performance.now();
    while (this.head !== undefined && this.head.expiresAt <= now + DUE_WITHIN_MS) {
      const due = this.head;
      this.remove(due);
      due.abort();
    }
    if (this.head !== undefined) this.arm(Math.ceil(this.head.expiresAt - now));
  }
}

/** Durations are settings (CALL_DEADLINE_MS): a handful of lists for the process. */
const LISTS = new Map<number, DeadlineList>();

class CallDeadline implements CallSignal, Deadline {
  aborted = false;
  reason: unknown = undefined;
  previous: CallDeadline | undefined = undefined;
  next: CallDeadline | undefined = undefined;
  private listeners: Array<() => void> | undefined = undefined;
  private pending = true;
  readonly expiresAt: number;

  constructor(
    private readonly list: DeadlineList,
    ms: number,
    private readonly message: string,
  ) {
    this.expiresAt = performance.now() + ms;
    list.add(this);
  }

  get signal(): CallSignal {
    return this;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    // Listeners added after the abort are never called, as on an aborted AbortSignal.
    if (this.aborted) return;
    this.listeners ??= [];
    this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }

  done(): void {
    if (!this.pending) return;
    this.pending = false;
    this.list.remove(this);
  }

  /** Called by its list when due: the listeners run once, in the order they were added. */
  abort(): void {
    this.pending = false;
    this.aborted = true;
    this.reason = timeoutReason(this.message);
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        // As an EventTarget does: the others still run, the throw is reported as uncaught.
        process.nextTick(() => {
          throw error;
        });
      }
    }
  }
}

/** A signal that aborts with a `TimeoutError` after `ms`, unless `done()` came first. */
export function startDeadline(ms: number, message = 'The deadline passed.'): Deadline {
  let list = LISTS.get(ms);
  if (list === undefined) {
    list = new DeadlineList(ms);
    LISTS.set(ms, list);
  }
  return new CallDeadline(list, ms, message);
}
