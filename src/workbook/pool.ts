/**
 * Runs reads in worker threads: at most `size` at once, each worker with a heap limit and terminated
 * at the deadline or on abort. A worker that finished cleanly is kept for the next read (its start-up
 * is the costly part) and dropped after a while idle.
 *
 * Fair between callers: one caller holds at most `perCaller` workers and half of the queue, so slow
 * reads of one caller (an encrypted file with a high spinCount, say) never keep another caller's read
 * waiting behind them. Waiting reads start in order, skipping callers at their share; a read that
 * finds the queue full, or waits longer than `queueWaitMs`, is refused with a clear error.
 */
import { Worker } from 'node:worker_threads';
import type { CallSignal } from '../core/deadline.ts';
import { WorkbookError, workbookErrors } from './errors.ts';
import type { WorkbookModel } from './model.ts';
import type { ReadRequest } from './read-workbook.ts';
import type { WorkerJob, WorkerReply } from './worker.ts';

export interface PoolOptions {
  size: number;
  heapMb: number;
  deadlineMs: number;
  /** Most workers one caller holds at once. Default: half of `size`, at least one. */
  perCaller?: number;
  /** Most reads waiting for a worker, all callers together. */
  queueMax: number;
  /** How long a read may wait for a worker before it is refused. */
  queueWaitMs: number;
  /** How long a worker may sit idle before it is stopped. */
  idleMs?: number;
  /** Told of every refused read (for metrics). */
  onRefused?: (reason: PoolRefusal) => void;
}

export type PoolRefusal = 'queue_full' | 'queue_timeout';

export interface PoolLoad {
  /** Workers running a read. */
  running: number;
  /** Reads waiting for a worker. */
  queued: number;
  /** Started workers waiting for a read. */
  idle: number;
  /** The most workers that run at once. */
  size: number;
}

/** Who asked for a read (the identity); reads without one share a single caller. */
export type CallerKey = string;

const SELF = import.meta.url;
/** Run from the TypeScript sources (under tsx) the worker is worker.ts and needs tsx too; built, worker.js. */
const FROM_SOURCES = SELF.endsWith('.ts');
const WORKER_URL = new URL(FROM_SOURCES ? './worker.ts' : './worker.js', SELF);

/**
 * A worker for this build. From the sources, an eval'd bootstrap registers tsx's loader in the new
 * thread before importing worker.ts (`--import` in a worker's execArgv does not reach its entry
 * module on Node 20).
 */
function newWorker(heapMb: number): Worker {
  // No inherited flags: the parent's (`--input-type`, `--test`, …) can make a worker fail to start.
  // A young generation of 1/64 of the heap (12 MB by default): the stream's garbage dies young, and
  // V8's larger default mostly adds resident memory (measured: ~15 MB less peak RSS, ~10% more time).
  const young = Math.min(32, Math.max(8, Math.round(heapMb / 64)));
  const options = {
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: young },
  };
  if (!FROM_SOURCES) return new Worker(WORKER_URL, options);
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const entry = JSON.stringify(WORKER_URL.href);
  const bootstrap = `import(${tsx}).then((tsx) => { tsx.register(); return import(${entry}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

interface Job {
  request: ReadRequest;
  caller: CallerKey;
  signal: CallSignal | undefined;
  resolve: (model: WorkbookModel) => void;
  reject: (error: unknown) => void;
  onAbort?: () => void;
  waitTimer?: NodeJS.Timeout;
}

type Outcome = { model: WorkbookModel } | { error: unknown };

export class WorkerPool {
  private readonly idle = new Map<Worker, NodeJS.Timeout>();
  private readonly busy = new Set<Worker>();
  private readonly queue: Job[] = [];
  /** Running and queued reads per caller; a caller with neither has no entry. */
  private readonly callers = new Map<CallerKey, { running: number; queued: number }>();
  private readonly perCaller: number;
  private readonly queuePerCaller: number;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: PoolOptions) {
    this.perCaller = Math.min(options.size, options.perCaller ?? Math.max(1, Math.floor(options.size / 2)));
    this.queuePerCaller = Math.max(1, Math.floor(options.queueMax / 2));
  }

  run(request: ReadRequest, signal?: CallSignal, caller: CallerKey = ''): Promise<WorkbookModel> {
    return new Promise<WorkbookModel>((resolve, reject) => {
      if (this.closed) return reject(workbookErrors.cannotOpen(request.name, 'the reader is closed'));
      if (signal?.aborted) return reject(signal.reason);
      const counts = this.countsOf(caller);
      if (this.queue.length >= this.options.queueMax || counts.queued >= this.queuePerCaller) {
        this.forget(caller);
        this.options.onRefused?.('queue_full');
        const detail =
          counts.queued >= this.queuePerCaller
            ? `${counts.queued} reads of this caller already waiting`
            : `${this.queue.length} reads already waiting`;
        return reject(workbookErrors.busy(request.name, detail));
      }
      const job: Job = { request, caller, signal, resolve, reject };
      if (signal !== undefined) {
        job.onAbort = () => {
          if (this.dequeue(job)) reject(signal.reason);
        };
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      job.waitTimer = setTimeout(() => {
        if (!this.dequeue(job)) return;
        this.options.onRefused?.('queue_timeout');
        reject(workbookErrors.busy(request.name, `no reader was free within ${this.options.queueWaitMs} ms`));
      }, this.options.queueWaitMs);
      this.queue.push(job);
      counts.queued++;
      this.pump();
    });
  }

  /** Reads running now and waiting (for tests and metrics). */
  get load(): PoolLoad {
    return {
      running: this.busy.size,
      queued: this.queue.length,
      idle: this.idle.size,
      size: this.options.size,
    };
  }

  private countsOf(caller: CallerKey): { running: number; queued: number } {
    let counts = this.callers.get(caller);
    if (counts === undefined) {
      counts = { running: 0, queued: 0 };
      this.callers.set(caller, counts);
    }
    return counts;
  }

  private forget(caller: CallerKey): void {
    const counts = this.callers.get(caller);
    if (counts !== undefined && counts.running === 0 && counts.queued === 0) this.callers.delete(caller);
  }

  /** Takes a waiting job out of the queue; false when it already left (started, refused or aborted). */
  private dequeue(job: Job): boolean {
    const at = this.queue.indexOf(job);
    if (at === -1) return false;
    this.queue.splice(at, 1);
    this.settleWait(job);
    this.forget(job.caller);
    return true;
  }

  private settleWait(job: Job): void {
    clearTimeout(job.waitTimer);
    if (job.onAbort !== undefined) job.signal?.removeEventListener('abort', job.onAbort);
    this.countsOf(job.caller).queued--;
  }

  /** Starts waiting reads in order while workers are free, skipping callers that hold their share. */
  private pump(): void {
    while (!this.closed && this.busy.size < this.options.size) {
      const at = this.queue.findIndex((job) => this.countsOf(job.caller).running < this.perCaller);
      if (at === -1) return;
      const [job] = this.queue.splice(at, 1) as [Job];
      this.settleWait(job);
      this.countsOf(job.caller).running++;
      this.start(job);
    }
  }

  private spawn(): Worker {
    const worker = newWorker(this.options.heapMb);
    // Errors are handled per job; this keeps one outside a job from becoming an uncaught exception.
    worker.on('error', () => undefined);
    worker.on('exit', () => {
      const timer = this.idle.get(worker);
      if (timer !== undefined) clearTimeout(timer);
      this.idle.delete(worker);
    });
    return worker;
  }

  private takeWorker(): Worker {
    for (const [worker, timer] of this.idle) {
      clearTimeout(timer);
      this.idle.delete(worker);
      return worker;
    }
    return this.spawn();
  }

  private park(worker: Worker): void {
    worker.unref();
    const timer = setTimeout(() => {
      this.idle.delete(worker);
      void worker.terminate();
    }, this.options.idleMs ?? 30_000);
    timer.unref();
    this.idle.set(worker, timer);
  }

  private start(job: Job): void {
    const { request, signal } = job;
    const worker = this.takeWorker();
    worker.ref();
    this.busy.add(worker);
    const id = this.nextId++;
    let settled = false;

    const finish = (outcome: Outcome, keep: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      signal?.removeEventListener('abort', onAbort);
      this.busy.delete(worker);
      this.countsOf(job.caller).running--;
      this.forget(job.caller);
      if (keep && !this.closed) this.park(worker);
      else void worker.terminate();
      if ('model' in outcome) job.resolve(outcome.model);
      else job.reject(outcome.error);
      this.pump();
    };
    const onMessage = (reply: WorkerReply) => {
      if (reply.id !== id) return;
      if (reply.ok) finish({ model: reply.model }, true);
      else finish({ error: new WorkbookError(reply.error.kind, reply.error.message) }, true);
    };
    const onError = (error: Error & { code?: string }) => {
      const detail =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `memory limit of ${this.options.heapMb} MB` : null;
      finish(
        {
          error:
            detail === null
              ? workbookErrors.unexpected(request.name, error)
              : workbookErrors.limits(request.name, detail),
        },
        false,
      );
    };
    const onExit = () =>
      finish(
        {
          error: this.closed
            ? workbookErrors.cannotOpen(request.name, 'the reader is closed')
            : workbookErrors.limits(request.name, 'the reader stopped before finishing'),
        },
        false,
      );
    const onAbort = () => finish({ error: signal?.reason }, false);
    const timer = setTimeout(
      () =>
        finish(
          { error: workbookErrors.limits(request.name, `time limit of ${this.options.deadlineMs} ms`) },
          false,
        ),
      this.options.deadlineMs,
    );

    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.postMessage({ id, request } satisfies WorkerJob);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) {
      this.settleWait(job);
      job.reject(workbookErrors.cannotOpen(job.request.name, 'the reader is closed'));
    }
    const workers = [...this.idle.keys(), ...this.busy];
    for (const timer of this.idle.values()) clearTimeout(timer);
    this.idle.clear();
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}
