// `npm run bench:profile`: where the gateway's CPU goes on one read. A real Dagu 2.x is started and
// seeded (bench/heavy-seed.ts), the gateway is started as bench:peer starts it (`npm start`, an API-key
// caller, rate limits, audit to a file, metrics on, tracing off) with V8's sampling profiler on
// (`--cpu-prof`), driven with PROFILE_CALLS plain-HTTP tools/calls of one read after PROFILE_WARMUP
// calls, and stopped; the profile is summed by self time per area (a package, a layer of src/, Node's
// internals, garbage collection) and per function, and by inclusive time per area.
//   PROFILE_READ         run2 (default) | run150 | dags | runs | step_log
//   PROFILE_CONCURRENCY  callers at once (default 1); each caller reads its own target (distinct reads)
//   PROFILE_KEEP         a folder to keep the .cpuprofile in (for Chrome DevTools), else it is removed
// The warm-up is profiled too, so the figures are taken from the samples after its last call only.

import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDagu } from '../test/support/dagu.ts';
import { heavySeedOptions, seedHeavy } from './heavy-seed.ts';
import {
  gatewayCall,
  measureHttp,
  runThenStop,
  succeededRead,
  toolCallJson,
  writeApiKeyFile,
} from './load.ts';
import { loadAverage, startGatewayProcess } from './peer-support.ts';
import { type CpuProfile, summarizeProfile } from './profile-summary.ts';

const CALLS = Number(process.env.PROFILE_CALLS ?? 4000);
const WARMUP = Number(process.env.PROFILE_WARMUP ?? 1500);
const CONCURRENCY = Number(process.env.PROFILE_CONCURRENCY ?? 1);
const READ = process.env.PROFILE_READ ?? 'run2';
const READS = ['run2', 'run150', 'dags', 'runs', 'step_log'];

async function main() {
  if (!READS.includes(READ)) throw new Error(`PROFILE_READ: one of ${READS.join(', ')}`);
  const dagu = await startDagu({ generation: 2 });
  const keys = writeApiKeyFile();
  const profileDir = mkdtempSync(join(tmpdir(), 'bench-profile-'));
  const stops: Array<() => unknown> = [
    () => dagu.stop(),
    () => keys.remove(),
    () => rmSync(profileDir, { recursive: true, force: true }),
  ];
  await runThenStop(stops, async () => {
    const wide = READ === 'dags' || READ === 'runs';
    const seed = await seedHeavy(dagu, {
      ...heavySeedOptions(),
      distinct: Math.max(4, CONCURRENCY),
      stepCounts: [2, 150],
      fillerDags: wide ? 200 : 0,
      totalRuns: wide ? 500 : 0,
    });
    console.log(`seeded ${seed.dagCount} DAGs, ${seed.runCount} runs in ${seed.seedSeconds.toFixed(0)} s`);
    const orders = ['name', 'nextRun', 'status', 'lastRun'];
    const args = (slot: number): Record<string, unknown> => {
      const runs = READ === 'run150' ? seed.stepRuns.get(150)! : seed.stepRuns.get(2)!;
      switch (READ) {
        case 'dags':
          return { target: 'dags', query: `perPage=200&sort=${orders[slot % orders.length]}&order=asc` };
        case 'runs':
          return { target: 'runs', query: `limit=500&fromDate=${1_600_000_000 + (slot % 4)}` };
        case 'step_log': {
          const run = seed.bigLogRuns[slot % seed.bigLogRuns.length]!;
          return { target: 'step_log', ...run, stepName: 'print', query: 'tail=10000' };
        }
        default:
          return { target: 'run', ...runs[slot % runs.length]! };
      }
    };
    const gateway = await startGatewayProcess(
      {
        DAGU_URL: dagu.url,
        DAGU_API_BASE: dagu.apiBase,
        AUTH_API_KEYS_FILE: keys.file,
        RATE_LIMIT_PER_MINUTE: '1000000',
        MAX_CONCURRENT_CALLS_PER_IDENTITY: '64',
        OTEL_SDK_DISABLED: 'true',
      },
      { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] },
    );
    stops.unshift(() => gateway.stop());
    const call = gatewayCall(keys.key);
    const path = {
      origin: gateway.url,
      requests: (slot: number, id: string) => [
        {
          path: '/mcp',
          method: 'POST' as const,
          headers: call.headers,
          body: toolCallJson(id, args(slot), call.meta),
        },
      ],
      ok: succeededRead,
    };
    await measureHttp(path, WARMUP, CONCURRENCY);
    // V8 stamps samples with CLOCK_MONOTONIC microseconds, the clock of process.hrtime here.
    const measuredFrom = Number(process.hrtime.bigint() / 1000n);
    const cpuBefore = gateway.cpuSeconds();
    const cell = await measureHttp(path, CALLS, CONCURRENCY);
    const cpuMs = ((gateway.cpuSeconds() - cpuBefore) * 1000) / CALLS;
    await gateway.stop();
    stops.shift();
    const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
    if (file === undefined) throw new Error('the gateway wrote no .cpuprofile');
    if (process.env.PROFILE_KEEP) {
      mkdirSync(process.env.PROFILE_KEEP, { recursive: true });
      copyFileSync(
        join(profileDir, file),
        join(process.env.PROFILE_KEEP, `${READ}-c${CONCURRENCY}.cpuprofile`),
      );
    }
    const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile;
    console.log(
      `${READ} at c=${CONCURRENCY}: ${CALLS} calls, ${cell.callsPerSecond.toFixed(0)} calls/s, p50 ${cell.p50Ms.toFixed(2)} ms, ` +
        `${cell.failures} failed; gateway CPU ${cpuMs.toFixed(3)} ms/call (/proc); load ${loadAverage()}`,
    );
    console.log(summarizeProfile(profile, { fromMicros: measuredFrom, calls: CALLS }));
  });
}

await main();
