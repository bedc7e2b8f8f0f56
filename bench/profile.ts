// `npm run bench:profile`: where the gateway's CPU goes on one read. A real Dagu 2.x is started and
// seeded (bench/heavy-seed.ts), the gateway is started as bench:peer starts it (`npm start`, an API-key
// caller, rate limits, audit to a file, metrics on, tracing off) with V8's sampling profiler on
// (`--cpu-prof`), driven with PROFILE_CALLS plain-HTTP tools/calls of one read after PROFILE_WARMUP
// calls, and stopped; the floor proxy (bench/floor-proxy.mjs) the same way, on node:http and in a
// bare Fastify app (FLOOR_SERVER=fastify). The warm-ups are served in turns of 2,000 calls, then the
// measured calls in PROFILE_ROUNDS rounds, the processes taking turns (every other round in reverse
// order), so the machine's changing load falls on all alike (the ratios are read within one run); the
// ratios are also printed round by round, paired, with the count of rounds in which one process cost
// less than the other (what separates a change from the noise between runs). Each profile is summed
// by self and inclusive time per area (a package, a file of src/, Node's internals, garbage collection)
// and per function; the areas are printed side by side, the gateway's functions after them.
//   PROFILE_READ         run2 (default) | run150 | dags | runs | step_log
//   PROFILE_CALLS        measured calls of each process (default 4,000)
//   PROFILE_WARMUP       calls before them (default 60,000): each process runs in its steady state. After
//                        12,000 V8's concurrent compiler still optimized the gateway's code during the
//                        measured calls on Node 24 (5–18 compiles per 1,000 calls against the floor's 2, on
//                        the other threads' CPU); after 60,000, 0.7 against 0.1 (bench/RESULTS.md)
//   PROFILE_CONCURRENCY  callers at once (default 1); each caller reads its own target (distinct reads)
//   PROFILE_ROUNDS       rounds the measured calls are split into, the processes taking turns (default 3)
//   PROFILE_SAMPLING     0: no profiler, only the CPU per call of each thread (from /proc)
//   PROFILE_STRACE       1: also count each process's system calls per call (`strace -c -f`, Debian's strace)
//   BENCH_NODE           a Node binary for the gateway and the floors (another version), else this one
//   PROFILE_NODE_ARGS    more node flags for the gateway, after npm start's (a V8 setting to compare)
//   PROFILE_B_MAIN       another build's dist/main.js (e.g. a worktree of the commit before): a second
//                        gateway, `gateway-b`, measured in the same rounds (an A/B of two builds)
//   PROFILE_B_NODE_ARGS  node flags for gateway-b in place of PROFILE_NODE_ARGS (an A/B of two settings)
//   PROFILE_B_ENV        `NAME=value …` for gateway-b only, over the gateway's settings (what one setting
//                        or feature costs: e.g. LOG_LEVEL=error)
//   PROFILE_KEEP         a folder to keep the .cpuprofile and .heapprofile files in (for Chrome DevTools)
//   PROFILE_ALLOC_CALLS  calls of the allocation cell (default 300; 0: none)
//   PROFILE_SURVIVORS    1: the allocation cell keeps only what survived a scavenge (what the young
//                        generation copies and promotes, the GC threads' work), not every allocation
//   PROFILE_OPENING      0: no opening `initialize` (below)
//   PROFILE_GC           1: every process runs with V8's `--trace-gc-nvp`, and the bytes its scavenges
//                        promoted during the measured rounds are printed per call (bench/gc-trace.ts)
//   PROFILE_JIT          1: every process runs with V8's `--trace-opt --trace-deopt`, and the optimizing
//                        compiles, bailouts and discarded optimized code of its measured calls are
//                        printed per 1,000 calls (bench/jit-trace.ts): the compiler's work on the other
//                        threads, and code a full collection threw away
//   PROFILE_IC           1: every process runs with V8's `--log-ic`, and the inline caches that missed at
//                        megamorphic sites during the measured calls are printed per 1,000 calls, with
//                        the sites that missed most and how many maps they met (bench/ic-log.ts): objects
//                        that each get a map of their own. Logging slows every process: read the counts,
//                        not the CPU, of such a run
// Each process first answers one `initialize`, as a client's first message (a 2026-07-28 client's
// `server/discover` goes the same way, through the MCP SDK): whatever serving it turns on in the
// process stays on for the calls after it, as it does in production.
// The warm-up is profiled too, so the figures are taken from the samples of the measured rounds only.
// Allocation per call comes from a cell of its own, after the last round: bench/heap-sampler.mjs (loaded
// with --import) runs V8's sampling heap profiler at an interval of 1 byte over exactly those calls, so
// every allocation is recorded with its size and stack, freed ones included: bytes and objects per call
// are counts, not estimates. Recording each allocation slows the process, so that cell gives no time.
// `/proc` CPU (main thread and the others apart) includes the profiler's own cost; the profile covers
// the main thread only, while it is not idle (wall time on a shared machine: read it as shares).

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startDagu } from '../test/support/dagu.ts';
import { gcLine, gcTotals } from './gc-trace.ts';
import { heavySeedOptions, seedHeavy } from './heavy-seed.ts';
import { icLine, megamorphicSites } from './ic-log.ts';
import { jitLine, jitTotals } from './jit-trace.ts';
import {
  gatewayCall,
  type HttpPath,
  type MeasuredProcess,
  measureHttp,
  runThenStop,
  startFloor,
  succeededRead,
  toolCallJson,
  warmUpInTurns,
  writeApiKeyFile,
} from './load.ts';
import {
  type GatewayProcess,
  loadAverage,
  median,
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
  type Window,
} from './profile-summary.ts';

const CALLS = Number(process.env.PROFILE_CALLS ?? 4000);
const WARMUP = Number(process.env.PROFILE_WARMUP ?? 60000);
const CONCURRENCY = Number(process.env.PROFILE_CONCURRENCY ?? 1);
const ROUNDS = Math.max(1, Number(process.env.PROFILE_ROUNDS ?? 3));
const READ = process.env.PROFILE_READ ?? 'run2';
const READS = ['run2', 'run150', 'dags', 'runs', 'step_log'];
const SAMPLING = process.env.PROFILE_SAMPLING !== '0';
const STRACE = process.env.PROFILE_STRACE === '1';
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const GATEWAY_NODE_ARGS = (process.env.PROFILE_NODE_ARGS ?? '').split(' ').filter(Boolean);
const ALLOC_CALLS = Number(process.env.PROFILE_ALLOC_CALLS ?? 300);
const SURVIVORS = process.env.PROFILE_SURVIVORS === '1';
const GC = process.env.PROFILE_GC === '1';
const JIT = process.env.PROFILE_JIT === '1';
const IC = process.env.PROFILE_IC === '1';
/** Processes' output is kept and read (their V8 traces). */
const TRACED = GC || JIT;
const OPENING = process.env.PROFILE_OPENING !== '0';
// A second gateway beside the first, to compare two builds or two sets of V8 flags in one interleaved run.
const B_MAIN = process.env.PROFILE_B_MAIN || undefined;
const B_NODE_ARGS = process.env.PROFILE_B_NODE_ARGS?.split(' ').filter(Boolean);
const B_ENV: Record<string, string> = Object.fromEntries(
  (process.env.PROFILE_B_ENV ?? '')
    .split(' ')
    .filter(Boolean)
    .map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
);
const WITH_B = B_MAIN !== undefined || B_NODE_ARGS !== undefined || Object.keys(B_ENV).length > 0;
const PROFILED = ['gateway', ...(WITH_B ? (['gateway-b'] as const) : []), 'floor', 'floor-fastify'] as const;
type Profiled = (typeof PROFILED)[number];
interface ProfiledPath {
  process: MeasuredProcess;
  http: HttpPath;
  /** The process's output so far, where PROFILE_GC's and PROFILE_JIT's traces go. */
  output(): string;
  /** The headers of its opening `initialize`. */
  openingHeaders: Record<string, string>;
  /** Where V8 writes its `--log-ic` log (PROFILE_IC). */
  icLogFile: string;
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 'opening',
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'bench', version: '1.0.0' },
  },
});

/** The client's first message, answered before any call is measured. */
async function openSession(path: ProfiledPath): Promise<void> {
  const response = await fetch(`${path.http.origin}/mcp`, {
    method: 'POST',
    headers: path.openingHeaders,
    body: INITIALIZE,
  });
  const text = await response.text();
  if (response.status !== 200 || !text.includes('"protocolVersion"')) {
    throw new Error(`initialize answered ${response.status}: ${text.slice(0, 300)}`);
  }
}

interface Measured {
  line: string;
  /** CPU µs per call of all the process's threads (/proc). */
  cpuMicros: number;
  /** The same, round by round (paired with the other processes' rounds). */
  roundMicros: number[];
  /** The spans of the measured calls, on the profile's clock (one per round). */
  windows: Window[];
  syscalls?: string;
  allocations?: AllocationTotals;
}

/**
 * CPU per call of `of` over `to`, round by round (in a round the two serve their calls one after the
 * other): the median and range of the ratios, and in how many rounds `of` cost less. A change smaller
 * than the spread between runs shows here as a count (8 of 8 rounds), where a single ratio does not.
 */
function pairedRounds(of: number[], to: number[]): string {
  const ratios = of.map((micros, round) => micros / to[round]!).sort((a, b) => a - b);
  const below = ratios.filter((ratio) => ratio < 1).length;
  return (
    `median ${median(ratios).toFixed(3)}× (${ratios[0]!.toFixed(3)}–${ratios.at(-1)!.toFixed(3)}), ` +
    `less in ${below} of ${ratios.length}`
  );
}

/** PROFILE_IC's line for the part of a process's IC log written during the measured rounds. */
function icLineOf(file: string, from: number, to: number, calls: number): string {
  // Read as latin1: one character per byte, so the file's sizes are offsets in the text.
  const log = readFileSync(file, 'latin1').slice(0, to);
  return icLine(megamorphicSites(log, from), calls, ROOT);
}

/**
 * The measured cells, interleaved: after every process's warm-up, ROUNDS rounds in which each process
 * serves CALLS / ROUNDS calls in turn, so a change in the machine's load falls on all of them alike.
 * Per process: its rate, CPU per call by thread (/proc) summed over its rounds, and the windows of its
 * calls; then, with `heapDir`, its allocation cell (bench/heap-sampler.mjs records between two SIGUSR2).
 */
async function measureAll(
  paths: Record<Profiled, ProfiledPath>,
  heapDir: string | undefined,
): Promise<Map<Profiled, Measured>> {
  if (OPENING) for (const name of PROFILED) await openSession(paths[name]);
  await warmUpInTurns(PROFILED, WARMUP, (name, calls) => measureHttp(paths[name].http, calls, CONCURRENCY));
  const tracers = new Map<Profiled, Awaited<ReturnType<typeof startStrace>>>();
  if (STRACE) for (const name of PROFILED) tracers.set(name, await startStrace(paths[name].process.pid));
  const perRound = Math.ceil(CALLS / ROUNDS);
  const cells = new Map(
    PROFILED.map((name) => [
      name,
      {
        windows: [] as Window[],
        cpu: new Map<string, number>(),
        seconds: 0,
        p50s: [] as number[],
        roundMicros: [] as number[],
        failures: 0,
      },
    ]),
  );
  // The traces are read from the first round to the last, not per round: a full collection can end,
  // and discard code, while another process is being measured.
  const outputEnds = () => new Map(PROFILED.map((name) => [name, paths[name].output().length]));
  const tracedFrom = TRACED ? outputEnds() : undefined;
  const icLogEnds = () => new Map(PROFILED.map((name) => [name, statSync(paths[name].icLogFile).size]));
  const icFrom = IC ? icLogEnds() : undefined;
  for (let round = 0; round < ROUNDS; round++) {
    // Every other round in the reverse order: no process always runs right after the same one.
    for (const name of round % 2 === 0 ? PROFILED : [...PROFILED].reverse()) {
      const { process: served, http } = paths[name];
      const cell = cells.get(name)!;
      // V8 stamps samples with CLOCK_MONOTONIC microseconds, the clock of process.hrtime here.
      const fromMicros = Number(process.hrtime.bigint() / 1000n);
      const threadsBefore = threadCpuSecondsOf(served.pid);
      const result = await measureHttp(http, perRound, CONCURRENCY);
      let roundSeconds = 0;
      for (const [thread, seconds] of threadCpuSecondsOf(served.pid)) {
        const used = seconds - (threadsBefore.get(thread) ?? 0);
        cell.cpu.set(thread, (cell.cpu.get(thread) ?? 0) + used);
        roundSeconds += used;
      }
      cell.roundMicros.push((roundSeconds * 1e6) / perRound);
      cell.windows.push([fromMicros, Number(process.hrtime.bigint() / 1000n)]);
      cell.seconds += perRound / result.callsPerSecond;
      cell.p50s.push(result.p50Ms);
      cell.failures += result.failures;
    }
  }
  const tracedTo = TRACED ? outputEnds() : undefined;
  const icTo = IC ? icLogEnds() : undefined;
  const measured = new Map<Profiled, Measured>();
  for (const name of PROFILED) {
    const tracer = tracers.get(name);
    const syscalls =
      tracer === undefined ? undefined : syscallsPerCall(await tracer.stop(), perRound * ROUNDS);
    const allocations =
      heapDir === undefined
        ? undefined
        : await allocationCell(paths[name].process.pid, paths[name].http, heapDir);
    const cell = cells.get(name)!;
    const calls = perRound * ROUNDS;
    const traced = TRACED ? paths[name].output().slice(tracedFrom?.get(name), tracedTo?.get(name)) : '';
    const threads = [...cell.cpu].map(([thread, seconds]) => [thread, (seconds * 1e6) / calls] as const);
    const all = threads.reduce((sum, [, micros]) => sum + micros, 0);
    const line =
      `${name}: ${(calls / cell.seconds).toFixed(0)} calls/s, p50 ${median(cell.p50s).toFixed(2)} ms (median of rounds), ` +
      `${cell.failures} failed; ` +
      `CPU ${all.toFixed(0)} µs/call (/proc${SAMPLING || STRACE ? ", the profiler's or strace's own cost included" : ''}): ` +
      threads.map(([thread, micros]) => `${thread} ${micros.toFixed(0)}`).join(', ') +
      (GC ? `; ${gcLine(gcTotals(traced), calls)}` : '') +
      (JIT ? `; ${jitLine(jitTotals(traced), calls)}` : '') +
      (IC ? `; ${icLineOf(paths[name].icLogFile, icFrom!.get(name)!, icTo!.get(name)!, calls)}` : '');
    measured.set(name, {
      line,
      cpuMicros: all,
      roundMicros: cell.roundMicros,
      windows: cell.windows,
      ...(syscalls === undefined ? {} : { syscalls }),
      ...(allocations === undefined ? {} : { allocations }),
    });
  }
  return measured;
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
    const icLogFile = (name: string) => join(profileDir, `${name}.ic.log`);
    const profileArgs = (name: string) => [
      ...(GC ? ['--trace-gc-nvp'] : []),
      ...(JIT ? ['--trace-opt', '--trace-deopt'] : []),
      ...(IC ? ['--log-ic', `--logfile=${icLogFile(name)}`, '--no-logfile-per-isolate'] : []),
      ...(SAMPLING
        ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`]
        : []),
      ...(heapDir === undefined
        ? []
        : ['--import', pathToFileURL(join(ROOT, 'bench', 'heap-sampler.mjs')).href]),
    ];
    const heapEnv: Record<string, string> =
      heapDir === undefined
        ? {}
        : { BENCH_HEAP_DIR: heapDir, ...(SURVIVORS ? { BENCH_HEAP_SURVIVORS: '1' } : {}) };
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
    const legacyHeaders = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const gatewayEnv = {
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      AUTH_API_KEYS_FILE: keys.file,
      RATE_LIMIT_PER_MINUTE: '1000000',
      MAX_CONCURRENT_CALLS_PER_IDENTITY: '64',
      OTEL_SDK_DISABLED: 'true',
      ...heapEnv,
    };
    const gateway = await startGatewayProcess(gatewayEnv, {
      nodeArgs: [...profileArgs('gateway'), ...GATEWAY_NODE_ARGS],
    });
    stops.unshift(() => gateway.stop());
    const gatewayB = WITH_B
      ? await startGatewayProcess(
          { ...gatewayEnv, ...B_ENV },
          {
            nodeArgs: [...profileArgs('gateway-b'), ...(B_NODE_ARGS ?? GATEWAY_NODE_ARGS)],
            ...(B_MAIN === undefined ? {} : { main: B_MAIN }),
          },
        )
      : undefined;
    if (gatewayB !== undefined) stops.unshift(() => gatewayB.stop());
    const floorLog = (name: string) => join(profileDir, `${name}.log`);
    const floor = await startFloor(dagu.url, dagu.apiBase, {
      nodeArgs: profileArgs('floor'),
      env: heapEnv,
      ...(TRACED ? { log: floorLog('floor') } : {}),
    });
    stops.unshift(() => floor.stop());
    const floorFastify = await startFloor(dagu.url, dagu.apiBase, {
      nodeArgs: profileArgs('floor-fastify'),
      server: 'fastify',
      env: heapEnv,
      ...(TRACED ? { log: floorLog('floor-fastify') } : {}),
    });
    stops.unshift(() => floorFastify.stop());
    const floorPath = (name: 'floor' | 'floor-fastify', served: MeasuredProcess & { url: string }) => ({
      process: served,
      http: {
        origin: served.url,
        requests: (slot: number, id: string) => [request(slot, id, { 'content-type': 'application/json' })],
        ok: succeededRead,
      },
      output: () => readFileSync(floorLog(name), 'utf8'),
      openingHeaders: legacyHeaders,
      icLogFile: icLogFile(name),
    });
    const gatewayPath = (name: 'gateway' | 'gateway-b', served: GatewayProcess): ProfiledPath => ({
      process: served,
      http: {
        origin: served.url,
        requests: (slot, id) => [request(slot, id, call.headers, call.meta)],
        ok: succeededRead,
      },
      output: served.logText,
      openingHeaders: { ...legacyHeaders, authorization: call.headers.authorization },
      icLogFile: icLogFile(name),
    });
    const paths = {
      gateway: gatewayPath('gateway', gateway),
      ...(gatewayB === undefined ? {} : { 'gateway-b': gatewayPath('gateway-b', gatewayB) }),
      floor: floorPath('floor', floor),
      'floor-fastify': floorPath('floor-fastify', floorFastify),
    } as Record<Profiled, ProfiledPath>;
    // One after the other: a profile is attribution, not a ratio, and each process has the cores alone.
    const measured = await measureAll(paths, heapDir);
    await Promise.all(stops.splice(0, PROFILED.length).map((stop) => stop()));
    console.log(
      `${READ} at c=${CONCURRENCY}, ${CALLS} calls each, Node ${servedNodeVersion()}; load ${loadAverage()}`,
    );
    for (const name of PROFILED) console.log(`  ${measured.get(name)!.line}`);
    const cpuOf = (name: Profiled) => measured.get(name)!.cpuMicros;
    const ratios = PROFILED.filter((name) => name.startsWith('gateway')).map(
      (name) => `${name} ÷ floor ${(cpuOf(name) / cpuOf('floor')).toFixed(2)}×`,
    );
    if (WITH_B) ratios.push(`gateway-b ÷ gateway ${(cpuOf('gateway-b') / cpuOf('gateway')).toFixed(3)}×`);
    console.log(`  CPU per call: ${ratios.join(', ')}`);
    const rounds = (of: Profiled, to: Profiled) =>
      `${of} ÷ ${to} ${pairedRounds(measured.get(of)!.roundMicros, measured.get(to)!.roundMicros)}`;
    console.log(
      `  round by round (${ROUNDS}): ${[rounds('gateway', 'floor'), ...(WITH_B ? [rounds('gateway-b', 'gateway')] : [])].join('; ')}`,
    );
    if (STRACE) {
      console.log('\nsystem calls per call (strace -c -f):');
      for (const name of PROFILED) console.log(`  ${name}: ${measured.get(name)!.syscalls}`);
    }
    if (heapDir !== undefined) {
      const allocations = new Map(PROFILED.map((name) => [name, measured.get(name)!.allocations!] as const));
      console.log(
        SURVIVORS
          ? `\nsurvived a scavenge, per call (${ALLOC_CALLS} calls after the CPU cell, every allocation recorded, those a scavenge freed dropped):`
          : `\nallocation per call (${ALLOC_CALLS} calls after the CPU cell, every allocation recorded):`,
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
      totals.set(name, profileTotals(JSON.parse(text) as CpuProfile, measured.get(name)!.windows));
    }
    console.log(`\n${compareAreas(totals, CALLS)}`);
    console.log(`\ngateway:\n${summarizeTotals(totals.get('gateway')!, CALLS)}`);
  });
}

await main();
