/**
 * Runs reads in worker threads: at most `size` at once (the rest wait in order), each worker with
 * a heap limit and terminated at the deadline or on abort. A worker that finished cleanly is kept
 * for the next read (its start-up is the costly part) and dropped after a while idle.
 */
import { Worker } from 'node:worker_threads';
import { WorkbookError, workbookErrors } from './errors.ts';
import type { WorkbookModel } from './model.ts';
import type { ReadRequest } from './read-workbook.ts';
import type { WorkerJob, WorkerReply } from './worker.ts';

export interface PoolOptions {
  size: number;
  heapMb: number;
  deadlineMs: number;
  /** How long a worker may sit idle before it is stopped. */
  idleMs?: number;
}

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
  signal: AbortSignal | undefined;
  resolve: (model: WorkbookModel) => void;
  reject: (error: unknown) => void;
  onAbort?: () => void;
}

type Outcome = { model: WorkbookModel } | { error: unknown };

export class WorkerPool {
  private readonly idle = new Map<Worker, NodeJS.Timeout>();
  private readonly busy = new Set<Worker>();
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: PoolOptions) {}

  run(request: ReadRequest, signal?: AbortSignal): Promise<WorkbookModel> {
    return new Promise<WorkbookModel>((resolve, reject) => {
      if (this.closed) return reject(workbookErrors.cannotOpen(request.name, 'the reader is closed'));
      if (signal?.aborted) return reject(signal.reason);
      const job: Job = { request, signal, resolve, reject };
      if (signal !== undefined) {
        job.onAbort = () => {
          const at = this.queue.indexOf(job);
          if (at !== -1) {
            this.queue.splice(at, 1);
            reject(signal.reason);
          }
        };
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.pump();
    });
  }

  /** Reads running now and waiting (for tests and metrics). */
  get load(): { running: number; queued: number; idle: number } {
    return { running: this.busy.size, queued: this.queue.length, idle: this.idle.size };
  }

  private pump(): void {
    while (!this.closed && this.busy.size < this.options.size && this.queue.length > 0) {
      const job = this.queue.shift()!;
      if (job.onAbort !== undefined) job.signal?.removeEventListener('abort', job.onAbort);
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
      if (job.onAbort !== undefined) job.signal?.removeEventListener('abort', job.onAbort);
      job.reject(workbookErrors.cannotOpen(job.request.name, 'the reader is closed'));
    }
    const workers = [...this.idle.keys(), ...this.busy];
    for (const timer of this.idle.values()) clearTimeout(timer);
    this.idle.clear();
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}
