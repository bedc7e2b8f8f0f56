/**
 * The worker pool is fair between callers: one caller holds at most its share of the workers and of
 * the queue, a read waits at most WORKBOOK_QUEUE_WAIT_MS, and refusals are counted. The slow reads are
 * real ones: an encrypted workbook claiming a high spinCount, read with a password that cannot match,
 * runs the key derivation in its worker for seconds and ends in the password error.
 */
import assert from 'node:assert/strict';
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type GatewayConfig, loadConfig } from '../../../src/config.ts';
import { createWorkbookReader, type PoolRefusal, type WorkbookReader } from '../../../src/workbook/index.ts';
import { calibrateHashRates } from '../../../src/workbook/key-derivation.ts';
import { assertWorkbookError } from '../../support/workbook-errors.ts';
import { fixtureDir, writeLongSheet, writeSmallWorkbook } from '../../support/workbook-fixtures.ts';
import { encryptAgile, withSpinCount } from '../../support/workbook-fixtures-crypto.ts';
import { put } from '../../support/workbook-fixtures-zip.ts';

const DEFAULTS: GatewayConfig['workbook'] = loadConfig({}).workbook;
/** Two workers, one per caller: the shape of the default pool (WORKBOOK_MAX_CONCURRENT=2). */
const FAIR: Partial<GatewayConfig['workbook']> = {
  maxConcurrent: 2,
  maxPerCaller: 1,
  queueMax: 8,
  queueWaitMs: 60_000,
  deadlineMs: 120_000,
  maxSpinCount: 10_000_000,
};
/** A slow read's derivation time at this machine's calibrated rate; under load it takes longer. */
const SLOW_READ_MS = 10_000;

let dir: string;
let cleanup: () => Promise<void>;
let small: string;
let slow: string;
/** b's workbook beside a's saturating reads: 3,000 rows, about 0.1 s to read, like the small reads of the issue. */
let modest: string;
const readers: WorkbookReader[] = [];

function reader(options: Partial<GatewayConfig['workbook']>, onRefused?: (reason: PoolRefusal) => void) {
  const created = createWorkbookReader(
    { ...DEFAULTS, roots: [dir], ...options },
    onRefused ? { onRefused } : {},
  );
  readers.push(created);
  return created;
}

const isBusy = (error: unknown) => {
  assertWorkbookError(error, {
    code: 'resource_unavailable',
    message: /^slow\.xlsx: the workbook reader is busy \(.+\); try again later$/,
  });
  return true;
};

/** A slow read of caller `a`: settles with the password error, or with the abort reason. */
function slowRead(pool: WorkbookReader, signal?: AbortSignal): Promise<unknown> {
  return pool.read(slow, 'not the password', signal, 'a').then(
    () => assert.fail('a wrong password cannot open the slow workbook'),
    (error: unknown) => error,
  );
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > 30_000) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

before(async () => {
  ({ dir, cleanup } = await fixtureDir('pool'));
  dir = await realpath(dir);
  small = await writeSmallWorkbook(path.join(dir, 'small.xlsx'));
  modest = await writeLongSheet(path.join(dir, 'modest.xlsx'), 3000);
  // A wrong password runs the two verifier derivations before it is known to be wrong.
  const spinCount = Math.round((SLOW_READ_MS * calibrateHashRates().SHA512) / 2);
  slow = await put(
    path.join(dir, 'slow.xlsx'),
    withSpinCount(encryptAgile(await readFile(small), 'pw'), spinCount),
  );
});
after(async () => {
  await Promise.all(readers.map((r) => r.close()));
  await cleanup();
});

describe('worker pool fairness', () => {
  it('gives another caller a worker at once while one caller holds its share and queues more', async () => {
    const pool = reader(FAIR);
    const controller = new AbortController();
    const slowReads = [0, 1, 2].map(() => slowRead(pool, controller.signal));
    await until(() => pool.load.queued === 2, "a's reads queued");
    assert.deepEqual(pool.load, { running: 1, queued: 2, idle: 0, size: 2 });
    const other = pool.read(small, undefined, undefined, 'b');
    await until(() => pool.load.running === 2, "b's read started");
    assert.equal(pool.load.queued, 2, 'b did not wait behind a');
    assert.equal((await other).sheets[0]?.row_count, 2);
    assert.equal(pool.load.queued, 2, "a's reads were still waiting when b's finished");
    controller.abort(new Error('done'));
    for (const outcome of await Promise.all(slowReads)) assert.match(String(outcome), /done/);
  });

  it('without a per-caller share, the same reads would have kept the other caller waiting', async () => {
    const pool = reader({ ...FAIR, maxPerCaller: 2 });
    const controller = new AbortController();
    const slowReads = [0, 1, 2].map(() => slowRead(pool, controller.signal));
    await until(() => pool.load.queued === 1, "a's reads queued");
    const other = pool.read(small, undefined, controller.signal, 'b').catch((error: unknown) => error);
    await until(() => pool.load.queued === 2, "b's read queued");
    assert.deepEqual(pool.load, { running: 2, queued: 2, idle: 0, size: 2 });
    controller.abort(new Error('done'));
    assert.match(String(await other), /done/);
    await Promise.all(slowReads);
  });

  it('refuses a read at once when its caller already fills half of the queue, or the queue is full', async () => {
    const refusals: PoolRefusal[] = [];
    const pool = reader({ ...FAIR, queueMax: 2 }, (reason) => refusals.push(reason));
    const controller = new AbortController();
    // a: one running, one waiting (half of a queue of two), the third refused.
    const slowReads = [0, 1].map(() => slowRead(pool, controller.signal));
    await until(() => pool.load.queued === 1, "a's second read queued");
    await assert.rejects(pool.read(slow, 'x', undefined, 'a'), (error) => {
      isBusy(error);
      assert.match((error as Error).message, /1 reads of this caller already waiting/);
      return true;
    });
    // b takes the other worker, c waits in the last queue slot, d finds the queue full.
    const others = [pool.read(slow, 'x', controller.signal, 'b').catch((error: unknown) => error)];
    await until(() => pool.load.running === 2, "b's read started");
    others.push(pool.read(slow, 'x', controller.signal, 'c').catch((error: unknown) => error));
    await until(() => pool.load.queued === 2, "c's read queued");
    await assert.rejects(pool.read(slow, 'x', undefined, 'd'), (error) => {
      isBusy(error);
      assert.match((error as Error).message, /2 reads already waiting/);
      return true;
    });
    assert.deepEqual(refusals, ['queue_full', 'queue_full']);
    controller.abort(new Error('done'));
    await Promise.all([...slowReads, ...others]);
  });

  it('refuses a read that waited WORKBOOK_QUEUE_WAIT_MS for a worker, and counts it', async () => {
    const refusals: PoolRefusal[] = [];
    const pool = reader({ ...FAIR, queueWaitMs: 200 }, (reason) => refusals.push(reason));
    const controller = new AbortController();
    const running = slowRead(pool, controller.signal);
    await until(() => pool.load.running === 1, "a's read started");
    const waited = await timed(() =>
      assert.rejects(pool.read(slow, 'x', undefined, 'a'), (error) => {
        isBusy(error);
        assert.match((error as Error).message, /no reader was free within 200 ms/);
        return true;
      }),
    );
    assert.ok(waited >= 190, `refused after ${waited} ms`);
    assert.deepEqual(refusals, ['queue_timeout']);
    assert.equal(pool.load.queued, 0);
    controller.abort(new Error('done'));
    await running;
  });

  // How long b's read takes beside a's saturating reads depends on the machine's load: the figure is
  // `npm run bench:workbook-pool`. Here the order of events: b's read gets the other worker and
  // finishes while each of a's reads is still running or waiting.
  it("finishes another caller's read while one caller saturates its share, none of whose reads ends first", async () => {
    const pool = reader(FAIR);
    const controller = new AbortController();
    let settled = 0;
    const slowReads = [0, 1, 2].map(() => slowRead(pool, controller.signal).finally(() => settled++));
    await until(() => pool.load.running === 1 && pool.load.queued === 2, "a's share taken");
    const other = await pool.read(modest, undefined, undefined, 'b');
    assert.equal(other.sheets[0]?.row_count, 3000);
    assert.equal(settled, 0, "a's slow read ended before b's read did");
    assert.deepEqual(pool.load, { running: 1, queued: 2, idle: 1, size: 2 });
    controller.abort(new Error('done'));
    for (const outcome of await Promise.all(slowReads)) assert.match(String(outcome), /done/);
  });
});
