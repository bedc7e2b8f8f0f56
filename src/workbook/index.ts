/**
 * The `workbook` target's reader: what the read service calls. `read` checks the path in this
 * thread, then profiles the file in a worker thread under the configured bounds. Every failure is
 * a WorkbookError; the password is passed to the worker and used, never put in a message.
 */
import type { GatewayConfig } from '../config.ts';
import type { CallSignal } from '../core/deadline.ts';
import { workbookErrors } from './errors.ts';
import { calibrateHashRates, type HashRates } from './key-derivation.ts';
import { locateWorkbook } from './locate.ts';
import type { WorkbookBounds, WorkbookModel } from './model.ts';
import { type CallerKey, type PoolLoad, type PoolRefusal, WorkerPool } from './pool.ts';

export type { HashRates } from './key-derivation.ts';
export type {
  CellValue,
  ColumnProfile,
  ColumnType,
  DateSystem,
  NamedRange,
  OddCell,
  SampleRow,
  WorkbookModel,
  WorkbookSheet,
  WorkbookTable,
} from './model.ts';
export type { PoolLoad, PoolRefusal } from './pool.ts';

export type WorkbookReaderOptions = GatewayConfig['workbook'];

export interface WorkbookReaderHooks {
  /** Told of every read the pool refuses (queue full, or no worker free in time). */
  onRefused?: (reason: PoolRefusal) => void;
  /** Hash rates to use instead of measuring this machine's (tests). */
  hashRates?: HashRates;
}

export interface WorkbookReader {
  /**
   * Profiles the workbook at `path` (as supplied; a relative path resolves against the first of the
   * roots, and without roots nothing is read) for `caller`, whose reads share the pool fairly with other callers'. Rejects with a
   * WorkbookError, or with `signal.reason` when aborted.
   */
  read(
    path: string,
    password: string | undefined,
    signal?: CallSignal,
    caller?: CallerKey,
  ): Promise<WorkbookModel>;
  /** The pool's workers and queue now (for metrics). */
  readonly load: PoolLoad;
  /** The key-derivation hash rates measured at start-up; undefined while workbook reads are off (no roots). */
  readonly hashRates: HashRates | undefined;
  /** Stops the workers; pending reads are rejected. */
  close(): Promise<void>;
}

export function createWorkbookReader(
  options: WorkbookReaderOptions,
  hooks: WorkbookReaderHooks = {},
): WorkbookReader {
  const { roots, maxConcurrent, maxPerCaller, queueMax, queueWaitMs, workerHeapMb, ...rest } = options;
  const bounds: WorkbookBounds = rest;
  // Once, before any read: a derivation too slow for the deadline is refused the same way under load.
  // Without roots nothing is ever read, and start-up spends nothing on it.
  const hashRates =
    hooks.hashRates ?? (roots === undefined || roots.length === 0 ? undefined : calibrateHashRates());
  const pool = new WorkerPool({
    size: maxConcurrent,
    perCaller: maxPerCaller,
    queueMax,
    queueWaitMs,
    heapMb: workerHeapMb,
    deadlineMs: options.deadlineMs,
    ...(hooks.onRefused ? { onRefused: hooks.onRefused } : {}),
  });
  return {
    async read(path, password, signal, caller) {
      if (signal?.aborted) throw signal.reason;
      const located = await locateWorkbook(path, roots);
      if (located.size > bounds.maxFileBytes)
        throw workbookErrors.limits(
          located.name,
          `file is ${located.size} bytes, more than ${bounds.maxFileBytes}`,
        );
      return pool.run(
        {
          path: located.resolved,
          file: located.file,
          name: located.name,
          password,
          bounds,
          // locateWorkbook refuses every path while there are no roots, so the rates exist here.
          hashRates: hashRates!,
        },
        signal,
        caller,
      );
    },
    get load() {
      return pool.load;
    },
    hashRates,
    close: () => pool.close(),
  };
}
