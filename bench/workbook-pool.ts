// Workbook pool fairness, measured: `npm run bench:workbook-pool`.
//
// Caller b's 3,000-row read alone, then while caller a saturates its share of a two-worker pool with
// slow reads (an encrypted workbook claiming a high spinCount, read with a wrong password: its worker
// spins SHA-512 for seconds). Prints both timings per round and the ratio of the medians; the
// expectation is about 1× (b gets the other worker at once), and under 2× on an idle machine. The
// figure depends on the machine's load (a worker spinning SHA-512 shares the cores with b's read),
// so it is a benchmark, not an assertion: test/unit/workbook/pool.test.ts checks the order of events
// (b's read gets a worker and finishes while all of a's reads are still running or waiting).
//
//   BENCH_ROUNDS   rounds (default 5)
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createWorkbookReader, type WorkbookReader } from '../src/workbook/index.ts';
import { calibrateHashRates } from '../src/workbook/key-derivation.ts';
import { fixtureDir, writeLongSheet, writeSmallWorkbook } from '../test/support/workbook-fixtures.ts';
import { encryptAgile, withSpinCount } from '../test/support/workbook-fixtures-crypto.ts';
import { put } from '../test/support/workbook-fixtures-zip.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** A slow read's derivation time at this machine's calibrated rate. */
const SLOW_READ_MS = 10_000;

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const { dir: folder, cleanup } = await fixtureDir('pool-bench');
const dir = await realpath(folder);
let pool: WorkbookReader | undefined;
try {
  const small = await writeSmallWorkbook(path.join(dir, 'small.xlsx'));
  const modest = await writeLongSheet(path.join(dir, 'modest.xlsx'), 3000);
  const spinCount = Math.round((SLOW_READ_MS * calibrateHashRates().SHA512) / 2);
  const slow = await put(
    path.join(dir, 'slow.xlsx'),
    withSpinCount(encryptAgile(await readFile(small), 'pw'), spinCount),
  );
  const reader = createWorkbookReader({
    ...loadConfig({}).workbook,
    roots: [dir],
    maxConcurrent: 2,
    maxPerCaller: 1,
    queueMax: 8,
    queueWaitMs: 60_000,
    deadlineMs: 120_000,
    maxSpinCount: 10_000_000,
  });
  pool = reader;
  // Each round starts with two parked workers that have read b's workbook.
  const twoWorkers = async () => {
    while (reader.load.idle < 2)
      await Promise.all(['b', 'c'].map((caller) => reader.read(modest, undefined, undefined, caller)));
  };
  const alone: number[] = [];
  const saturated: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await twoWorkers();
    alone.push(await timed(() => reader.read(modest, undefined, undefined, 'b')));
    const controller = new AbortController();
    let settled = 0;
    const slowReads = [0, 1, 2].map(() =>
      reader
        .read(slow, 'not the password', controller.signal, 'a')
        .catch(() => undefined)
        .finally(() => settled++),
    );
    await until(() => reader.load.running === 1 && reader.load.queued === 2);
    // Let a's worker get into the key derivation.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    saturated.push(await timed(() => reader.read(modest, undefined, undefined, 'b')));
    if (settled > 0)
      console.warn(`round ${round + 1}: a's slow read ended first; not a saturated measurement`);
    controller.abort(new Error('round over'));
    await Promise.all(slowReads);
    console.log(
      `round ${round + 1}: b alone ${alone.at(-1)!.toFixed(0)} ms, while a saturates ${saturated.at(-1)!.toFixed(0)} ms`,
    );
  }
  const ratio = median(saturated) / median(alone);
  console.log(
    `workbook pool fairness: b alone median ${median(alone).toFixed(0)} ms, ` +
      `while a saturates median ${median(saturated).toFixed(0)} ms, ratio ${ratio.toFixed(2)}`,
  );
} finally {
  await pool?.close();
  await cleanup();
}
