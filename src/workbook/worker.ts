/**
 * Worker-thread entry: runs one read at a time for the pool. The thread has its own heap limit and
 * is terminated by the pool at the deadline, so a hostile file costs a clean error, never the
 * gateway's memory or event loop. Only plain data crosses the thread boundary.
 */
import { parentPort } from 'node:worker_threads';
import { toWorkbookError, type WorkbookFailure } from './errors.ts';
import type { WorkbookModel } from './model.ts';
import { type ReadRequest, readWorkbook } from './read-workbook.ts';

export interface WorkerJob {
  id: number;
  request: ReadRequest;
}

export type WorkerReply =
  | { id: number; ok: true; model: WorkbookModel }
  | { id: number; ok: false; error: WorkbookFailure };

const port = parentPort;
if (port !== null) {
  port.on('message', (job: WorkerJob) => {
    readWorkbook(job.request).then(
      (model) => port.postMessage({ id: job.id, ok: true, model } satisfies WorkerReply),
      (error: unknown) => {
        // readWorkbook only throws WorkbookErrors; anything else would be a bug here, reported blandly.
        const object = toWorkbookError(error, job.request.name).toFailure();
        port.postMessage({ id: job.id, ok: false, error: object } satisfies WorkerReply);
      },
    );
  });
}
