// `npm run bench:profile`: where the gateway's CPU goes on one read. A real Dagu 2.x is started and
// seeded (bench/heavy-seed.ts), the gateway is started as bench:peer starts it (`npm start`, an API-key
// caller, rate limits, audit to a file, metrics on, tracing off) with V8's sampling profiler on
// (`--cpu-prof`), driven with PROFILE_CALLS plain-HTTP tools/calls of one read after PROFILE_WARMUP
// calls, and stopped; then the floor proxy (bench/floor-proxy.mjs) the same way, on node:http and in a
// bare Fastify app (FLOOR_SERVER=fastify), one process after another. Each profile is summed
// by self and inclusive time per area (a package, a file of src/, Node's internals, garbage collection)
// and per function; the areas are printed side by side, the gateway's functions after them.
//   PROFILE_READ         run2 (default) | run150 | dags | runs | step_log
//   PROFILE_CONCURRENCY  callers at once (default 1); each caller reads its own target (distinct reads)
//   PROFILE_SAMPLING     0: no profiler, only the CPU per call of each thread (from /proc)
//   PROFILE_STRACE       1: also count each process's system calls per call (`strace -c -f`, Debian's strace)
//   BENCH_NODE           a Node binary for the gateway and the floors (another version), else this one
//   PROFILE_NODE_ARGS    more node flags for the gateway, after npm start's (a V8 setting to compare)
//   PROFILE_KEEP         a folder to keep the .cpuprofile and .heapprofile files in (for Chrome DevTools)
//   PROFILE_ALLOC_CALLS  calls of the allocation cell (default 300; 0: none)
// The warm-up is profiled too, so the figures are taken from the samples after its last call only.
// Allocation per call comes from a cell of its own, after the CPU cell: bench/heap-sampler.mjs (loaded
// with --import) runs V8's sampling heap profiler at an interval of 1 byte over exactly those calls, so
// every allocation is recorded with its size and stack, freed ones included: bytes and objects per call
// are counts, not estimates. Recording each allocation slows the process, so that cell gives no time.
// `/proc` CPU (main thread and the others apart) includes the profiler's own cost; the profile covers
// the main thread only, while it is not idle (wall time on a shared machine: read it as shares).

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startDagu } from '../test/support/dagu.ts';
import { heavySeedOptions, seedHeavy } from './heavy-seed.ts';
import {
  gatewayCall,
  type HttpPath,
  type MeasuredProcess,
  measureHttp,
  runThenStop,
  startFloor,
  succeededRead,
  toolCallJson,
  writeApiKeyFile,
} from './load.ts';
import {
  loadAverage,
  ROOT,
  servedNodeVersion,
  startGatewayProcess,
  threadCpuSecondsOf,
} from './peer-support.ts';
import {
  type AllocationTotals,
  allocationTotals,
  type CpuProfile,
  compareAllocations,
  compareAreas,
  type HeapProfile,
  type ProfileTotals,
  profileTotals,
  summarizeTotals,
  syscallsPerCall,
} from './profile-summary.ts';

const CALLS = Number(process.env.PROFILE_CALLS ?? 4000);
const WARMUP = Number(process.env.PROFILE_WARMUP ?? 1500);
const CONCURRENCY = Number(process.env.PROFILE_CONCURRENCY ?? 1);
const READ = process.env.PROFILE_READ ?? 'run2';
const READS = ['run2', 'run150', 'dags', 'runs', 'step_log'];
const SAMPLING = process.env.PROFILE_SAMPLING !== '0';
const STRACE = process.env.PROFILE_STRACE === '1';
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const GATEWAY_NODE_ARGS = (process.env.PROFILE_NODE_ARGS ?? '').split(' ').filter(Boolean);
const ALLOC_CALLS = Number(process.env.PROFILE_ALLOC_CALLS ?? 300);
const PROFILED = ['gateway', 'floor', 'floor-fastify'] as const;
type Profiled = (typeof PROFILED)[number];
interface ProfiledPath {
  process: MeasuredProcess;
  http: HttpPath;
}

interface Measured {
  line: string;
  /** Where the measured calls begin and end, on the profile's clock. */
  fromMicros: number;
  toMicros: number;
  syscalls?: string;
  allocations?: AllocationTotals;
}

/**
 * The warm-up, then the measured cell of one process: its rate, and CPU per call by thread (/proc);
 * then, with `heapDir`, the allocation cell (bench/heap-sampler.mjs records between two SIGUSR2).
 */
async function measureOne(
  name: Profiled,
  { process: served, http }: ProfiledPath,
  heapDir: string | undefined,
): Promise<Measured> {
  await measureHttp(http, WARMUP, CONCURRENCY);
  const tracer = STRACE ? await startStrace(served.pid) : undefined;
  // V8 stamps samples with CLOCK_MONOTONIC microseconds, the clock of process.hrtime here.
  const fromMicros = Number(process.hrtime.bigint() / 1000n);
  const threadsBefore = threadCpuSecondsOf(served.pid);
  const cell = await measureHttp(http, CALLS, CONCURRENCY);
  const threads = [...threadCpuSecondsOf(served.pid)].map(
    ([thread, seconds]) => [thread, ((seconds - (threadsBefore.get(thread) ?? 0)) * 1e6) / CALLS] as const,
  );
  const toMicros = Number(process.hrtime.bigint() / 1000n);
  const syscalls = tracer === undefined ? undefined : syscallsPerCall(await tracer.stop(), CALLS);
  const allocations = heapDir === undefined ? undefined : await allocationCell(served.pid, http, heapDir);
  const all = threads.reduce((sum, [, micros]) => sum + micros, 0);
  const line =
    `${name}: ${cell.callsPerSecond.toFixed(0)} calls/s, p50 ${cell.p50Ms.toFixed(2)} ms, ${cell.failures} failed; ` +
    `CPU ${all.toFixed(0)} µs/call (/proc${SAMPLING || STRACE ? ", the profiler's or strace's own cost included" : ''}): ` +
    threads.map(([thread, micros]) => `${thread} ${micros.toFixed(0)}`).join(', ');
  return {
    line,
    fromMicros,
    toMicros,
    ...(syscalls === undefined ? {} : { syscalls }),
    ...(allocations === undefined ? {} : { allocations }),
  };
}

/** ALLOC_CALLS calls between the two signals of bench/heap-sampler.mjs, and the profile it writes. */
async function allocationCell(pid: number, http: HttpPath, heapDir: string): Promise<AllocationTotals> {
  const file = join(heapDir, `${pid}.heapprofile`);
  process.kill(pid, 'SIGUSR2');
  // The sampler starts on its next turn of the event loop, before it reads the first request.
  await sleep(200);
  await measureHttp(http, ALLOC_CALLS, CONCURRENCY);
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 60_000;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`no allocation profile from process ${pid}`);
    await sleep(50);
  }
  const text = readFileSync(file, 'utf8');
  if (process.env.PROFILE_KEEP) {
    mkdirSync(process.env.PROFILE_KEEP, { recursive: true });
    writeFileSync(join(process.env.PROFILE_KEEP, `${pid}-${READ}-c${CONCURRENCY}.heapprofile`), text);
  }
  return allocationTotals(JSON.parse(text) as HeapProfile);
}

/** `strace -c -f` attached to a process until stop(), which returns its table. */
async function startStrace(pid: number) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-strace-'));
  const output = join(dir, 'strace.txt');
  const tracer = spawn('strace', ['-c', '-f', '-p', String(pid), '-o', output], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // strace says it attached (on stderr) before it counts anything.
  await new Promise<void>((attached, failed) => {
    tracer.stderr.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('attached')) attached();
    });
    tracer.once('error', failed);
    tracer.once('exit', (code) => failed(new Error(`strace exited (${code}) before attaching`)));
  });
  return {
    async stop(): Promise<string> {
      const exited = new Promise((done) => tracer.once('exit', done));
      tracer.kill('SIGINT');
      await exited;
      const table = readFileSync(output, 'utf8');
      rmSync(dir, { recursive: true, force: true });
      return table;
    },
  };
}

async function main() {
  if (!READS.includes(READ)) throw new Error(`PROFILE_READ: one of ${READS.join(', ')}`);
  const dagu = await startDagu({ generation: 2 });
  const keys = writeApiKeyFile();
  const profileDir = mkdtempSync(join(tmpdir(), 'bench-profile-'));
  const heapDir = ALLOC_CALLS > 0 ? profileDir : undefined;
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
    // The queries bench:heavy cycles over (distinct reads of the same lists).
    const orders = ['name&order=asc', 'name&order=desc', 'nextRun&order=asc', 'nextRun&order=desc'];
    const args = (slot: number): Record<string, unknown> => {
      const runs = READ === 'run150' ? seed.stepRuns.get(150)! : seed.stepRuns.get(2)!;
      switch (READ) {
        case 'dags':
          return { target: 'dags', query: `perPage=200&sort=${orders[slot % orders.length]}` };
        case 'runs':
          return { target: 'runs', query: `limit=500&fromDate=${946_684_800 + (slot % 4)}` };
        case 'step_log': {
          const run = seed.bigLogRuns[slot % seed.bigLogRuns.length]!;
          return { target: 'step_log', ...run, stepName: 'print', query: 'tail=10000' };
        }
        default:
          return { target: 'run', ...runs[slot % runs.length]! };
      }
    };
    const profileArgs = (name: string) => [
      ...(SAMPLING
        ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`]
        : []),
      ...(heapDir === undefined
        ? []
        : ['--import', pathToFileURL(join(ROOT, 'bench', 'heap-sampler.mjs')).href]),
    ];
    const heapEnv: Record<string, string> = heapDir === undefined ? {} : { BENCH_HEAP_DIR: heapDir };
    const request = (
      slot: number,
      id: string,
      headers: Record<string, string>,
      meta?: Record<string, unknown>,
    ) => ({
      path: '/mcp',
      method: 'POST' as const,
      headers,
      body: toolCallJson(id, args(slot), meta),
    });
    const call = gatewayCall(keys.key);
    const gateway = await startGatewayProcess(
      {
        DAGU_URL: dagu.url,
        DAGU_API_BASE: dagu.apiBase,
        AUTH_API_KEYS_FILE: keys.file,
        RATE_LIMIT_PER_MINUTE: '1000000',
        MAX_CONCURRENT_CALLS_PER_IDENTITY: '64',
        OTEL_SDK_DISABLED: 'true',
        ...heapEnv,
      },
      { nodeArgs: [...profileArgs('gateway'), ...GATEWAY_NODE_ARGS] },
    );
    stops.unshift(() => gateway.stop());
    const floor = await startFloor(dagu.url, dagu.apiBase, { nodeArgs: profileArgs('floor'), env: heapEnv });
    stops.unshift(() => floor.stop());
    const floorFastify = await startFloor(dagu.url, dagu.apiBase, {
      nodeArgs: profileArgs('floor-fastify'),
      server: 'fastify',
      env: heapEnv,
    });
    stops.unshift(() => floorFastify.stop());
    const floorPath = (origin: string): HttpPath => ({
      origin,
      requests: (slot, id) => [request(slot, id, { 'content-type': 'application/json' })],
      ok: succeededRead,
    });
    const paths: Record<Profiled, ProfiledPath> = {
      gateway: {
        process: gateway,
        http: {
          origin: gateway.url,
          requests: (slot, id) => [request(slot, id, call.headers, call.meta)],
          ok: succeededRead,
        },
      },
      floor: { process: floor, http: floorPath(floor.url) },
      'floor-fastify': { process: floorFastify, http: floorPath(floorFastify.url) },
    };
    // One after the other: a profile is attribution, not a ratio, and each process has the cores alone.
    const measured = new Map<Profiled, Measured>();
    for (const name of PROFILED) measured.set(name, await measureOne(name, paths[name], heapDir));
    await Promise.all([gateway.stop(), floor.stop(), floorFastify.stop()]);
    stops.splice(0, 3);
    console.log(
      `${READ} at c=${CONCURRENCY}, ${CALLS} calls each, Node ${servedNodeVersion()}; load ${loadAverage()}`,
    );
    for (const name of PROFILED) console.log(`  ${measured.get(name)!.line}`);
    if (STRACE) {
      console.log('\nsystem calls per call (strace -c -f):');
      for (const name of PROFILED) console.log(`  ${name}: ${measured.get(name)!.syscalls}`);
    }
    if (heapDir !== undefined) {
      const allocations = new Map(PROFILED.map((name) => [name, measured.get(name)!.allocations!] as const));
      console.log(
        `\nallocation per call (${ALLOC_CALLS} calls after the CPU cell, every allocation recorded):`,
      );
      console.log(compareAllocations(allocations, ALLOC_CALLS));
    }
    if (!SAMPLING) return;
    const totals = new Map<Profiled, ProfileTotals>();
    for (const name of PROFILED) {
      const text = readFileSync(join(profileDir, `${name}.cpuprofile`), 'utf8');
      if (process.env.PROFILE_KEEP) {
        mkdirSync(process.env.PROFILE_KEEP, { recursive: true });
        writeFileSync(join(process.env.PROFILE_KEEP, `${name}-${READ}-c${CONCURRENCY}.cpuprofile`), text);
      }
      totals.set(
        name,
        profileTotals(
          JSON.parse(text) as CpuProfile,
          measured.get(name)!.fromMicros,
          measured.get(name)!.toMicros,
        ),
      );
    }
    console.log(`\n${compareAreas(totals, CALLS)}`);
    console.log(`\ngateway:\n${summarizeTotals(totals.get('gateway')!, CALLS)}`);
  });
}

await main();
