// bench:profile's allocation counter, loaded into a measured process with `--import` (plain JavaScript:
// the gateway runs its compiled build without a TypeScript loader). SIGUSR2 starts V8's sampling heap
// profiler, the next SIGUSR2 stops it and writes the profile to BENCH_HEAP_DIR/<pid>.heapprofile (via a
// temporary name, so the file appears whole). Started with a sampling interval of 1 byte, every
// allocation is recorded (each sample is one object, its size exact), and the objects the garbage
// collectors freed meanwhile are kept: the profile is what the process allocated between the signals,
// not what was still alive (which is all `node --heap-prof` records). Nothing runs until the first signal.
// BENCH_HEAP_SURVIVORS=1 drops the objects a scavenge freed: what remains is what survived the young
// generation (copied, then promoted), whether a full collection freed it later or not.
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

const dir = process.env.BENCH_HEAP_DIR;
const interval = Number(process.env.BENCH_HEAP_INTERVAL ?? 1);
let session;

async function toggle() {
  if (session === undefined) {
    session = new Session();
    session.connect();
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: interval,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: process.env.BENCH_HEAP_SURVIVORS !== '1',
    });
    return;
  }
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  session = undefined;
  const file = join(dir, `${process.pid}.heapprofile`);
  writeFileSync(`${file}.part`, JSON.stringify({ ...profile, samplingInterval: interval }));
  renameSync(`${file}.part`, file);
}

if (dir !== undefined) process.on('SIGUSR2', () => void toggle());
