/**
 * The worker-thread entry (src/workbook/worker.ts) in a real worker thread, started the way the pool
 * starts it from the sources: each job gets one reply with its id, the model of a readable workbook
 * or the plain failure object of an unreadable one, and the thread serves jobs one after another.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { loadConfig } from '../../../src/config.ts';
import type { WorkbookBounds } from '../../../src/workbook/model.ts';
import type { WorkerJob, WorkerReply } from '../../../src/workbook/worker.ts';
import { fixtureDir, writeSmallWorkbook } from '../../support/workbook-fixtures.ts';

const BOUNDS: WorkbookBounds = loadConfig({}).workbook;

describe('the workbook worker', () => {
  let worker: Worker;
  let dir: string;
  let cleanup: () => Promise<void>;

  before(async () => {
    ({ dir, cleanup } = await fixtureDir('worker'));
    // As src/workbook/pool.ts does from the sources: register tsx in the thread, then import the entry.
    const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
    const entry = JSON.stringify(new URL('../../../src/workbook/worker.ts', import.meta.url).href);
    worker = new Worker(`import(${tsx}).then((tsx) => { tsx.register(); return import(${entry}); });`, {
      eval: true,
      execArgv: [],
    });
  });

  after(async () => {
    await worker?.terminate();
    await cleanup?.();
  });

  async function run(job: WorkerJob): Promise<WorkerReply> {
    const reply = once(worker, 'message') as Promise<[WorkerReply]>;
    worker.postMessage(job);
    return (await reply)[0];
  }

  it('replies with the model of a readable workbook, under the job id', async () => {
    const file = await writeSmallWorkbook(join(dir, 'small.xlsx'));
    const reply = await run({
      id: 7,
      request: { path: file, name: 'small.xlsx', password: undefined, bounds: BOUNDS },
    });
    assert.equal(reply.id, 7);
    assert.ok(reply.ok, JSON.stringify(reply));
    assert.deepEqual(
      reply.model.sheets.map((sheet) => [sheet.name, sheet.headers, sheet.row_count]),
      [['Data', ['city', 'count'], 2]],
    );
  });

  it('replies with a plain failure object when the file cannot be read, and keeps serving', async () => {
    const missing = await run({
      id: 8,
      request: { path: join(dir, 'missing.xlsx'), name: 'missing.xlsx', password: undefined, bounds: BOUNDS },
    });
    assert.equal(missing.id, 8);
    assert.equal(missing.ok, false);
    assert.ok(!missing.ok && typeof missing.error.kind === 'string' && missing.error.kind.length > 0);
    assert.ok(!missing.ok && missing.error.message.includes('missing.xlsx'), JSON.stringify(missing));
    assert.deepEqual(Object.keys(missing.ok ? {} : missing.error).sort(), ['kind', 'message']);
    const again = await run({
      id: 9,
      request: { path: join(dir, 'small.xlsx'), name: 'small.xlsx', password: undefined, bounds: BOUNDS },
    });
    assert.equal(again.id, 9);
    assert.equal(again.ok, true);
  });
});
