/**
 * The `workbook` target's reader: what the read service calls. `read` checks the path in this
 * thread, then profiles the file in a worker thread under the configured bounds. Every failure is
 * a WorkbookError; the password is passed to the worker and used, never put in a message.
 */
import type { GatewayConfig } from '../config.ts';
import { workbookErrors } from './errors.ts';
import { locateWorkbook } from './locate.ts';
import type { WorkbookBounds, WorkbookModel } from './model.ts';
import { WorkerPool } from './pool.ts';

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

export type WorkbookReaderOptions = GatewayConfig['workbook'];

export interface WorkbookReader {
  /**
   * Profiles the workbook at `path` (as supplied; relative paths resolve against the working
   * directory). Rejects with a WorkbookError, or with `signal.reason` when aborted.
   */
  read(path: string, password: string | undefined, signal?: AbortSignal): Promise<WorkbookModel>;
  /** Stops the workers; pending reads are rejected. */
  close(): Promise<void>;
}

export function createWorkbookReader(options: WorkbookReaderOptions): WorkbookReader {
  const { roots: _roots, maxConcurrent: _pool, workerHeapMb: _heap, ...rest } = options;
  const bounds: WorkbookBounds = rest;
  const pool = new WorkerPool({
    size: options.maxConcurrent,
    heapMb: options.workerHeapMb,
    deadlineMs: options.deadlineMs,
  });
  return {
    async read(path, password, signal) {
      signal?.throwIfAborted();
      const located = await locateWorkbook(path, options.roots);
      if (located.size > bounds.maxFileBytes)
        throw workbookErrors.limits(
          located.name,
          `file is ${located.size} bytes, more than ${bounds.maxFileBytes}`,
        );
      return pool.run(
        { path: located.resolved, file: located.file, name: located.name, password, bounds },
        signal,
      );
    },
    close: () => pool.close(),
  };
}
